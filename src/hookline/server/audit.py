"""What the server writes into a session's log beside the loop: who decided an approval, and why a run failed.

**Approvals.** Before a resume runs, each paused call its approvals decide gets a status
line in the log: "alice approved danger(target='prod')", "alice denied danger: too risky",
with `metadata["approval"]` holding the call, the decision, the reason and the user; the
line's `created_at` is when. It is written while the server holds the session's run lock,
so a resume that would answer 409 `busy` records nothing; one whose approvals name a call
the session never made records nothing either (it answers 422). A call named again after
it was answered is no decision, and gets no line.

**Failures.** The loop's last line of a failed run says only "run failed"; the reason
goes to the stream's readers in an event that is never stored. `FailureNotes` stores that
event after the run, right after its "run failed" line (while holding the run lock, and
only if nothing came after it), so a reader who comes later learns why.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence

from hookline.errors import HooklineError
from hookline.events import Event
from hookline.messages import ToolCallPart
from hookline.result import Interruption
from hookline.resume import paused_calls
from hookline.server.forking import FORK_AUTHOR
from hookline.server.runs import RunChannel, failure_event
from hookline.sessions import SessionStore

__all__ = ["FailureNotes", "approval_lines", "record_approvals"]

logger = logging.getLogger("hookline.server")

_LOCK_WAIT = 1.0  # s a note waits for the session's run lock


async def record_approvals(
    store: SessionStore, session_id: str, user: str, approvals: Mapping[str, bool | str]
) -> list[Event]:
    """Write who approved or denied which paused call, before the resume that applies it runs; answer the lines.

    Raises:
        SessionBusy: A run holds the session (the resume would answer 409 too).
    """
    async with store.run_lock(session_id, timeout=0.0):
        log = await store.events(session_id, view="all")
        lines = approval_lines(log, approvals, user)
        return await store.append_events(session_id, lines) if lines else []


def approval_lines(log: Sequence[Event], approvals: Mapping[str, bool | str], user: str) -> list[Event]:
    """The audit lines for `approvals` on a log: one per paused call they decide (none if they name unknown calls)."""
    made = {p.id for e in log if e.kind == "message" and e.role == "assistant" for p in e.parts
            if isinstance(p, ToolCallPart)}
    if any(call_id not in made for call_id in approvals):
        return []  # the resume answers 422 and must record nothing
    return [_line(call, approvals[call.call_id], user) for call in paused_calls(log) if call.call_id in approvals]


def _line(call: Interruption, answer: bool | str, user: str) -> Event:
    approved = answer is True
    reason = answer if isinstance(answer, str) else ""
    shown = f"{call.name}({_arguments(call.arguments)})"
    text = f"{user} {'approved' if approved else 'denied'} {shown}" + (f": {reason}" if reason else "")
    return Event.status(FORK_AUTHOR, "agent", text, approval={
        "call_id": call.call_id, "name": call.name, "decision": "approved" if approved else "denied",
        "reason": reason, "user": user})


def _arguments(arguments: dict[str, object] | str) -> str:
    if isinstance(arguments, str):
        return arguments
    return ", ".join(f"{key}={value!r}" for key, value in arguments.items())


class FailureNotes:
    """Stores why a run of this server failed, after its "run failed" line."""

    def __init__(self, store: SessionStore, author: str) -> None:
        self._store = store
        self._author = author
        self._tasks: set[asyncio.Task[None]] = set()

    def watch(self, channel: RunChannel) -> None:
        """Note the reason in the log if the run of `channel` fails after writing to it."""
        task = asyncio.create_task(self._note(channel), name=f"hookline-failure-note-{channel.session_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        """Wait for the notes being written (the runs have ended by now)."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=2 * _LOCK_WAIT)

    async def _note(self, channel: RunChannel) -> None:
        try:
            await channel.outcome()
            return
        except Exception as exc:
            error = exc
        if channel.published == 0:
            return  # refused before it began (busy, bad approvals): nothing in the log to explain
        try:
            async with self._store.run_lock(channel.session_id, timeout=_LOCK_WAIT):
                await self._append_after_failure(channel.session_id, error)
        except HooklineError as exc:  # busy again, or the store failed: the stream's readers were told
            logger.warning("could not record why the run on session %s failed: %s", channel.session_id, exc)

    async def _append_after_failure(self, session_id: str, error: BaseException) -> None:
        log = await self._store.events(session_id, view="ui")
        finished = [e for e in log if not e.partial]
        if finished and finished[-1].kind == "status" and finished[-1].text == "run failed":
            await self._store.append_event(session_id, failure_event(error, self._author))
