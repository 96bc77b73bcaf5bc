"""Planning the resumption of an interrupted run from its session log.

A paused call is decided by the user's approvals: `True` runs it, `False` or a reason
refuses it, `{"args": {...}}` runs it with other arguments, no answer leaves it paused. A
call whose start was recorded but whose result was not (its process died while it ran) is
never re-run silently: it comes back as an interruption until the user approves it again.

A call whose tool asked the user a question (`RunContext.ask`) runs again on any answer,
with the user's `Reply` in its context: `{"response": ...}` (or `True`) accepts with that
answer, `False` or a reason declines, `{"cancel": True}` cancels.

A call whose tool runs a sub-agent that paused (`Agent.as_tool`) stands for the sub-agent's
paused calls: the log lists them under ids `"<call>/<inner call>"` (with `agent_call_id`
naming the call), and an answer to any of them runs the call again, the tool handing the
answers on to the sub-agent's own resumption (`nested_answers`).

An edit of a call's arguments is checked against the tool's schema before anything is
recorded, and recorded as the user's (`edit_event`) before the call runs: the log keeps the
model's call as it was made, and the user's change beside it. Whoever resumes may have more
recorded at that point (`AuditLines`: the server's "alice approved ..."): the resumption writes
it under the session's run lock, so only a resumption that applies its decisions records it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from hookline.conversation import open_calls
from hookline.decision import Decision
from hookline.errors import ConfigError
from hookline.events import Event
from hookline.messages import Message, TextPart, ToolCallPart, ToolResultPart
from hookline.result import Interruption, Reply
from hookline.tools import Tool

__all__ = [
    "DIED_REASON", "Answer", "Approval", "AuditLines", "asked_calls", "check_resumption", "edit_event",
    "edited_calls", "held_messages", "inner_calls", "nested_answers", "parse_approvals", "paused_calls",
    "plan_resume", "replies", "started_calls",
]

Approval = bool | str | Mapping[str, Any]
"""One paused call's answer, as a user gives it: `True` runs it; `False` or a reason refuses
it; `{"args": {...}}` runs it with these arguments; `{"approve": False, "reason": "..."}`
refuses it (`{"approve": True}` runs it). To a call's question: `{"response": ...}` answers it,
`{"cancel": True}` dismisses it (refusing an approval)."""

Answer = bool | str | dict[str, Any]
"""An `Approval` in its one form per meaning: `True`, `False`, a reason, `{"args": {...}}`,
`{"response": ...}` or `{"cancel": True}`."""

AuditLines = Callable[[Sequence[ToolCallPart], Mapping[str, Answer]], Sequence[Event]]
"""Builds the events a resumption records before its paused calls run or are refused, from
those calls (as the model made them) and the approvals: e.g. who decided each one. It is
called once the approvals are checked against the session, while the run holds its lock."""

_KEYS = ("approve", "args", "reason")
_REPLY_KEYS = ("response", "cancel")

DIED_REASON = "the process stopped while this call ran; it may or may not have taken effect"
"""Why a call whose start is on record but whose result is not comes back as an interruption."""


def parse_approvals(approvals: Mapping[str, Any] | None) -> dict[str, Answer]:
    """Check `approvals` (call id -> `Approval`) and give each answer its one form.

    Raises:
        ConfigError: an answer is of no known form; the message names the call.
    """
    if approvals is None:
        return {}
    if not isinstance(approvals, Mapping):
        raise ConfigError('approvals must be a dict of call id -> True, False, a refusal reason or {"args": {...}}')
    return {call_id: _parse_answer(call_id, answer) for call_id, answer in approvals.items()}


def _parse_answer(call_id: str, answer: Any) -> Answer:
    if isinstance(answer, bool | str):
        return answer
    where = f"the approval for call {call_id!r}"
    if not isinstance(answer, Mapping):
        raise ConfigError(f'{where} must be True, False, a reason or {{"args": {{...}}}}, not {answer!r:.80}')
    if set(answer) & set(_REPLY_KEYS):
        return _parse_reply(where, answer)
    unknown = sorted(set(answer) - set(_KEYS))
    approve, args, reason = (answer.get(key) for key in _KEYS)
    problems = {
        f"has unknown key(s) {', '.join(map(repr, unknown))}; use 'approve', 'args' or 'reason'": unknown,
        "needs 'approve' (true or false) or 'args' (the arguments to run the call with)": approve is None
        and args is None,
        "'approve' must be true or false": approve is not None and not isinstance(approve, bool),
        "'args' must be a JSON object of the tool's arguments": args is not None and not isinstance(args, Mapping),
        "'reason' must be a string": reason is not None and not isinstance(reason, str),
        "cannot both refuse the call and give it arguments": approve is False and args is not None,
    }
    for problem, found in problems.items():
        if found:
            raise ConfigError(f"{where} {problem}")
    if args is not None:
        return {"args": dict(args)}
    return True if approve else reason or False


def _parse_reply(where: str, answer: Mapping[str, Any]) -> Answer:
    """`{"response": ...}` or `{"cancel": True}`, alone."""
    if len(answer) != 1:
        raise ConfigError(f'{where} answers a question with {{"response": ...}} or {{"cancel": true}} alone, '
                          f"not with {', '.join(map(repr, sorted(answer)))}")
    if "cancel" in answer and answer["cancel"] is not True:
        raise ConfigError(f'{where}: "cancel" must be true (to decline, answer false or a reason)')
    return dict(answer)


def check_resumption(
    messages: Sequence[Message],
    unanswered: Mapping[str, ToolCallPart],
    approvals: Mapping[str, Answer],
    session_id: str | None,
    tools: Callable[[], Mapping[str, Tool]],
    log: Sequence[Event] = (),
) -> tuple[int, dict[str, ToolCallPart]]:
    """Check a resumption before anything is recorded; answer its turn number and the edited calls.

    It needs a run to go on with, approvals that name that run's calls (a typo must not
    pass) and edited arguments that fit their tools (`tools()`, asked only for an edit). A
    call already answered may be named again (resuming twice is harmless); it never runs
    twice. The turns are numbered on from the run that stopped. A call paused inside a
    sub-agent is named by its id in `log` (the events since the paused calls were made).

    Raises:
        ConfigError: nothing ran in the session, an approval names a call it never made, or
            edited arguments do not fit their tool.
    """
    _check_names(messages, unanswered, approvals, session_id, log)
    last_prompt = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    turn = sum(1 for m in messages[last_prompt + 1 :] if m.role == "assistant")
    if not any(isinstance(answer, dict) and "args" in answer for answer in approvals.values()):
        return turn, {}
    return turn, edited_calls(list(unanswered.values()), approvals, tools())


def _check_names(
    messages: Sequence[Message], unanswered: Mapping[str, ToolCallPart], approvals: Mapping[str, Answer],
    session_id: str | None, log: Sequence[Event],
) -> None:
    if not messages:
        raise ConfigError(f"session {session_id!r} has nothing to resume: no run was made on it; "
                          "send it a prompt instead")
    unknown = set(approvals) - set(unanswered)
    if unknown:
        made = {c.id for m in messages if m.role == "assistant" for c in m.tool_calls}
        unknown -= made
        if unknown:  # a sub-agent's paused call; or one of a call answered since (resuming twice is harmless)
            answered = made - set(unanswered)
            unknown = {key for key in unknown if _outer_call(key, answered) is None}
            unknown -= {call.id for call in inner_calls(log)}
    if unknown:
        paused = ", ".join(c.call_id for c in _listed(unanswered.values(), _call_history(_since_last_calls(log))))
        paused = paused or "none"
        raise ConfigError(f"the approvals name call(s) {', '.join(map(repr, sorted(unknown)))} that session "
                          f"{session_id!r} never made; calls awaiting a decision: {paused}")


def edited_calls(
    pending: Sequence[ToolCallPart], approvals: Mapping[str, Answer], tools: Mapping[str, Tool]
) -> dict[str, ToolCallPart]:
    """The pending calls that `approvals` edit, by id, with their new arguments.

    Raises:
        ConfigError: the arguments do not fit the tool's schema (or the tool is gone); the
            message names the call and the problem.
    """
    edited: dict[str, ToolCallPart] = {}
    for call in pending:
        answer = approvals.get(call.id)
        if not isinstance(answer, dict) or "args" not in answer:
            continue
        tool = tools.get(call.name)
        if tool is None:
            raise ConfigError(f"cannot edit the arguments of call {call.id!r}: the agent has no tool {call.name!r}")
        try:
            tool.validate(answer["args"])
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors(include_url=False)
            )
            raise ConfigError(f"the edited arguments of call {call.id!r} ({call.name}) do not fit its schema: "
                              f"{problems}") from None
        edited[call.id] = ToolCallPart(id=call.id, name=call.name, arguments=answer["args"])
    return edited


def edit_event(original: ToolCallPart, edited: ToolCallPart, user: str | None) -> Event:
    """The user's edit of a paused call, for the log: the edited call, authored by "user".

    A status event, so the model's own call stays as it made it in the conversation; its
    `metadata["edited_call"]` names that call.
    """
    text = (f"{user or 'the user'} edited the arguments of {original.name}: {_shown(edited.arguments)} "
            f"(the model asked for {_shown(original.arguments)})")
    metadata = {"edited_call": original.id, "arguments": edited.arguments, "original_arguments": original.arguments}
    if user is not None:
        metadata["user"] = user
    return Event(author="user", kind="status", source="agent", parts=[TextPart(text=text), edited], metadata=metadata)


def _shown(arguments: dict[str, Any] | str) -> str:
    if isinstance(arguments, str):
        return arguments
    return ", ".join(f"{key}={value!r}" for key, value in arguments.items()) or "no arguments"


def plan_resume(
    pending: Sequence[ToolCallPart], approvals: Mapping[str, Approval], log: Sequence[Event]
) -> dict[str, Decision]:
    """Decisions for the pending calls; approved calls (edited ones too) and answered questions run: they have none."""
    history = _call_history(_since_last_calls(log))
    decisions: dict[str, Decision] = {}
    for call in pending:
        answer = approvals.get(call.id)
        question = history.questions.get(call.id)
        inner = history.inner.get(call.id)
        if inner and answer is None:  # paused inside its sub-agent: it runs again on an answer to any of those
            if not any(_outer_call(key, (call.id,)) for key in approvals):
                decisions[call.id] = Decision("interrupt", reason=history.reasons.get(call.id, ""),
                                              inner=tuple(inner.values()))
            continue
        if answer is None:
            died = call.id in history.started and call.id not in history.paused_since
            reason = DIED_REASON if died else history.reasons.get(call.id, "awaiting approval")
            decisions[call.id] = Decision("interrupt", reason=reason, response_schema=question)
        elif question is None and (answer is not True and not _runs(answer)):
            reason = answer if isinstance(answer, str) else "cancelled" if isinstance(answer, Mapping) else ""
            text = f"the user refused the call to {call.name}" + (f": {reason}" if reason else "")
            result = ToolResultPart(call_id=call.id, content=text, is_error=True, name=call.name)
            decisions[call.id] = Decision("deny", result=result, reason=reason)
    return decisions


def nested_answers(pending: Sequence[ToolCallPart], approvals: Mapping[str, Answer]) -> dict[str, dict[str, Answer]]:
    """The answers to calls paused inside sub-agents, by the pending call running each, under the sub-agents' ids."""
    found: dict[str, dict[str, Answer]] = {}
    for call in pending:
        prefix = call.id + "/"
        inner = {key[len(prefix):]: answer for key, answer in approvals.items() if key.startswith(prefix)}
        if inner:
            found[call.id] = inner
    return found


def inner_calls(log: Sequence[Event]) -> list[ToolCallPart]:
    """The calls paused inside sub-agents since the last calls of `log`, as calls of this run (`"<call>/<inner>"`)."""
    history = _call_history(_since_last_calls(log))
    return [ToolCallPart(id=item.call_id, name=item.name, arguments=item.arguments)
            for paused in history.inner.values() for item in paused.values()]


def _outer_call(key: str, call_ids: Iterable[str]) -> str | None:
    """The call of `call_ids` whose sub-agent's paused call `key` names (`"<call>/<inner call>"`), if any."""
    for call_id in call_ids:
        if key.startswith(call_id + "/"):
            return call_id
    return None


def _runs(answer: Approval) -> bool:
    """Whether an answer to an approval runs the call: `{"args": ...}`, or a `{"response": ...}`."""
    return isinstance(answer, Mapping) and ("args" in answer or "response" in answer)


def replies(pending: Sequence[ToolCallPart], approvals: Mapping[str, Answer], log: Sequence[Event]
            ) -> dict[str, Reply]:
    """The user's replies to the pending calls that asked a question and are answered now, by call id."""
    questions = _call_history(_since_last_calls(log)).questions
    found: dict[str, Reply] = {}
    for call in pending:
        answer = approvals.get(call.id)
        if call.id in questions and answer is not None:
            found[call.id] = _reply(answer)
    return found


def _reply(answer: Answer) -> Reply:
    if answer is True:
        return Reply(action="accept")
    if isinstance(answer, dict) and "response" in answer:
        return Reply(action="accept", content=answer["response"])
    if isinstance(answer, dict) and "cancel" in answer:
        return Reply(action="cancel")
    if isinstance(answer, dict):  # edited arguments: the call runs again with them, the question unanswered
        return Reply(action="accept")
    return Reply(action="decline", content=answer or None)


def paused_calls(log: Sequence[Event]) -> list[Interruption]:
    """The calls of a session's log (the `all` view) that await a decision, with their reasons (and questions)."""
    messages = [e.to_message() for e in log if e.kind == "message" and not e.partial]
    return _listed(open_calls(messages), _call_history(_since_last_calls(log)))


def _listed(pending: Iterable[ToolCallPart], history: _History) -> list[Interruption]:
    """The paused calls as a run lists them: a call paused inside a sub-agent stands for the sub-agent's."""
    listed: list[Interruption] = []
    for call in pending:
        inner = history.inner.get(call.id)
        if inner:
            listed.extend(inner.values())
            continue
        died = call.id in history.started and call.id not in history.paused_since
        reason = DIED_REASON if died else history.reasons.get(call.id, "awaiting approval")
        listed.append(Interruption(call_id=call.id, name=call.name, arguments=call.arguments, reason=reason,
                                   response_schema=history.questions.get(call.id)))
    return listed


def started_calls(log: Sequence[Event]) -> set[str]:
    """The calls since the last assistant turn whose start is on record (they may have run)."""
    return _call_history(_since_last_calls(log)).started


def asked_calls(log: Sequence[Event]) -> set[str]:
    """The calls since the last assistant turn whose tool asked a question (`RunContext.ask`) still unanswered."""
    history = _call_history(_since_last_calls(log))
    return history.paused_since & set(history.questions)


def held_messages(log: Sequence[Event]) -> list[Message]:
    """Messages hooks injected while the calls were paused, to place after their results."""
    return [
        Message.model_validate(e.metadata["held_message"])
        for e in _since_last_calls(log)
        if e.kind != "message" and "held_message" in e.metadata
    ]


def _since_last_calls(log: Sequence[Event]) -> Sequence[Event]:
    """The events after the last assistant message that made tool calls."""
    for index in range(len(log) - 1, -1, -1):
        event = log[index]
        if event.kind == "message" and event.role == "assistant" and any(p.type == "tool_call" for p in event.parts):
            return log[index + 1 :]
    return log


@dataclass
class _History:
    started: set[str] = field(default_factory=set)
    """Calls whose start is on record."""
    paused_since: set[str] = field(default_factory=set)
    """Calls paused after their start (their tool asked a question, or a resumption paused them again)."""
    reasons: dict[str, str] = field(default_factory=dict)
    """Why each paused call was paused."""
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The answer schema of each paused call that asked the user a question."""
    inner: dict[str, dict[str, Interruption]] = field(default_factory=dict)
    """For each call paused inside its sub-agent: the sub-agent's paused calls (of its last pause), by id."""


def _call_history(log: Sequence[Event]) -> _History:
    history = _History()
    for event in log:  # status lines, or markers where the user switched that status off
        if event.kind == "message":
            continue
        if event.metadata.get("started"):
            history.started.add(event.metadata["call_id"])
            history.inner.pop(event.metadata["call_id"], None)  # it runs again: its sub-agent pauses anew
        paused = event.metadata.get("interrupted")
        if isinstance(paused, dict):
            own = paused["call_id"]
            call_id = event.metadata.get("agent_call_id") or own  # a sub-agent's paused call pauses this run's call
            if call_id != own:
                history.inner.setdefault(call_id, {})[own] = Interruption.model_validate(paused)
            elif isinstance(paused.get("response_schema"), dict):
                history.questions[call_id] = paused["response_schema"]
            history.reasons[call_id] = paused.get("reason", "")
            if call_id in history.started:
                history.paused_since.add(call_id)
    return history
