"""`PausedTurn`: the calls a run left unanswered, read back with the log since they were made.

A turn stays open in the log when its run paused for approval or its process died while the
calls ran. A new prompt closes it: each call is answered as not run (or as maybe run, if its
start is on record). A resume takes it up: the approvals are checked against it before
anything is recorded (`check`), then turned into what the run records and decides before
the calls run again (`take_up`). The rules are `resume`'s. Who needs those calls before a
run starts (a server checking a resume, a front end listing what waits) reads only the log's
tail, backward a page at a time: from the model's last message on (`log_since_last_answer`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hookline._run.resume import (
    DIED_REASON,
    Answer,
    AuditLines,
    asked_calls,
    check_resumption,
    edit_event,
    held_messages,
    inner_calls,
    nested_answers,
    plan_resume,
    replies,
    started_calls,
)
from hookline.decision import Decision
from hookline.events import Event
from hookline.messages import Message, ToolCallPart, ToolResultPart
from hookline.result import Reply
from hookline.sessions import SessionStore, pages_back
from hookline.tools import Tool, error_result

__all__ = ["PausedTurn", "log_since_last_answer", "TakenUp"]

_NEVER_RUN = "never run: the run was interrupted before this call"
_UNANSWERED = "not answered: this call asked a question, and a new prompt came instead"


@dataclass(frozen=True, slots=True)
class TakenUp:
    """What a resume applies before its calls run again."""

    planned: dict[str, Decision]
    """The calls the approvals refuse or leave paused, decided (the others run)."""
    replies: dict[str, Reply]
    """The user's replies to the questions tools asked (`RunContext.ask`), by call id."""
    answers: dict[str, dict[str, Answer]]
    """The answers to calls paused inside sub-agents, by the call running each."""
    held: list[Message]
    """Hook messages that waited for the paused calls to be answered."""
    events: list[Event]
    """To record first: the audit lines, and each edit of a call's arguments."""


class PausedTurn:
    """The calls a run left unanswered; `log`: the session's events since they were made."""

    __slots__ = ("edits", "log")

    def __init__(self, log: list[Event]) -> None:
        self.log = log
        self.edits: dict[str, ToolCallPart] = {}
        """The calls whose arguments the approvals change, by id, as they will run."""

    @classmethod
    async def read(cls, store: SessionStore, session_id: str, prompt: list[Event]) -> PausedTurn:
        """The turn a session's last run left open: its log from the last model answer (`prompt`: its prompt view)."""
        last_calls = next(e.seq for e in reversed(prompt) if e.role == "assistant")
        return cls(await store.events(session_id, view="all", after_seq=(last_calls or 1) - 1))

    def closed(self, calls: list[ToolCallPart]) -> list[ToolResultPart]:
        """The results a new prompt gives the open calls: not run, not answered, or maybe run (a start on record)."""
        started, asked = started_calls(self.log), asked_calls(self.log)
        return [error_result(c, _UNANSWERED if c.id in asked else DIED_REASON if c.id in started else _NEVER_RUN)
                for c in calls]

    def check(self, messages: list[Message], unanswered: dict[str, ToolCallPart], approvals: Mapping[str, Answer],
              session_id: str | None, tools: Callable[[], Mapping[str, Tool]]) -> int:
        """Check the approvals against the paused calls (`check_resumption`); the turn number to go on from."""
        turn, self.edits = check_resumption(messages, unanswered, approvals, session_id, tools, self.log)
        return turn

    def take_up(self, unanswered: dict[str, ToolCallPart], approvals: Mapping[str, Answer],
                audit: AuditLines | None, user: str | None) -> TakenUp:
        """What the resume records and decides; the edited calls replace theirs in `unanswered`."""
        pending = list(unanswered.values())
        events = list(audit([*pending, *inner_calls(self.log)], approvals)) if audit else []
        for call_id, edited in self.edits.items():  # the user's edit is on record before the call runs
            events.append(edit_event(unanswered[call_id], edited, user))
            unanswered[call_id] = edited
        return TakenUp(plan_resume(pending, approvals, self.log), replies(pending, approvals, self.log),
                       nested_answers(pending, approvals), held_messages(self.log), events)


async def log_since_last_answer(store: SessionStore, session_id: str) -> list[Event]:
    """The session's log (`all` view) from the model's last message on; all of it when there is none."""
    pages: list[list[Event]] = []
    async for page in pages_back(store, session_id):
        answers = [i for i, e in enumerate(page) if e.kind == "message" and e.role == "assistant"]
        pages.append(page[answers[-1]:] if answers else page)
        if answers:
            break
    return [e for p in reversed(pages) for e in p]
