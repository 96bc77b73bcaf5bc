"""Planning the resumption of an interrupted run from its session log.

A paused call is decided by the user's approvals: `True` runs it, `False` or a reason
refuses it, no answer leaves it paused. A call whose start was recorded but whose result
was not (its process died while it ran) is never re-run silently: it comes back as an
interruption until the user approves it again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hookline.conversation import open_calls
from hookline.decision import Decision
from hookline.events import Event
from hookline.messages import Message, ToolCallPart, ToolResultPart
from hookline.result import Interruption

__all__ = ["DIED_REASON", "held_messages", "paused_calls", "plan_resume", "started_calls"]

DIED_REASON = "the process stopped while this call ran; it may or may not have taken effect"
"""Why a call whose start is on record but whose result is not comes back as an interruption."""


def plan_resume(
    pending: Sequence[ToolCallPart], approvals: Mapping[str, bool | str], log: Sequence[Event]
) -> dict[str, Decision]:
    """Decisions for the pending calls: approved calls are left out (they run)."""
    started, reasons = _call_history(_since_last_calls(log))
    decisions: dict[str, Decision] = {}
    for call in pending:
        answer = approvals.get(call.id)
        if answer is True:
            continue
        if answer is None:
            reason = DIED_REASON if call.id in started else reasons.get(call.id, "awaiting approval")
            decisions[call.id] = Decision("interrupt", reason=reason)
            continue
        reason = answer if isinstance(answer, str) else ""
        text = f"the user refused the call to {call.name}" + (f": {reason}" if reason else "")
        result = ToolResultPart(call_id=call.id, content=text, is_error=True, name=call.name)
        decisions[call.id] = Decision("deny", result=result, reason=reason)
    return decisions


def paused_calls(log: Sequence[Event]) -> list[Interruption]:
    """The calls of a session's log (the `all` view) that await a decision, with their reasons."""
    messages = [e.to_message() for e in log if e.kind == "message" and not e.partial]
    pending = open_calls(messages)
    decisions = plan_resume(pending, {}, log)
    return [
        Interruption(call_id=c.id, name=c.name, arguments=c.arguments, reason=decisions[c.id].reason) for c in pending
    ]


def started_calls(log: Sequence[Event]) -> set[str]:
    """The calls since the last assistant turn whose start is on record (they may have run)."""
    return _call_history(_since_last_calls(log))[0]


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


def _call_history(log: Sequence[Event]) -> tuple[set[str], dict[str, str]]:
    started: set[str] = set()
    reasons: dict[str, str] = {}
    for event in log:  # status lines, or markers where the user switched that status off
        if event.kind == "message":
            continue
        if event.metadata.get("started"):
            started.add(event.metadata["call_id"])
        paused = event.metadata.get("interrupted")
        if isinstance(paused, dict):
            reasons[paused["call_id"]] = paused.get("reason", "")
    return started, reasons
