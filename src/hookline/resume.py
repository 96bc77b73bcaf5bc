"""Planning the resumption of an interrupted run from its session log.

A paused call is decided by the user's approvals: `True` runs it, `False` or a reason
refuses it, no answer leaves it paused. A call whose start was recorded but whose result
was not (its process died while it ran) is never re-run silently: it comes back as an
interruption until the user approves it again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hookline.events import Event
from hookline.messages import Message, ToolCallPart, ToolResultPart
from hookline.state import Decision

__all__ = ["held_messages", "plan_resume"]


def plan_resume(
    pending: Sequence[ToolCallPart], approvals: Mapping[str, bool | str], log: Sequence[Event], died_reason: str
) -> dict[str, Decision]:
    """Decisions for the pending calls: approved calls are left out (they run)."""
    started, reasons = _call_history(_since_last_calls(log))
    decisions: dict[str, Decision] = {}
    for call in pending:
        answer = approvals.get(call.id)
        if answer is True:
            continue
        if answer is None:
            reason = died_reason if call.id in started else reasons.get(call.id, "awaiting approval")
            decisions[call.id] = Decision("interrupt", reason=reason)
            continue
        reason = answer if isinstance(answer, str) else ""
        text = f"the user refused the call to {call.name}" + (f": {reason}" if reason else "")
        result = ToolResultPart(call_id=call.id, content=text, is_error=True, name=call.name)
        decisions[call.id] = Decision("deny", result=result, reason=reason)
    return decisions


def held_messages(log: Sequence[Event]) -> list[Message]:
    """Messages hooks injected while the calls were paused, to place after their results."""
    return [
        Message.model_validate(e.metadata["held_message"])
        for e in _since_last_calls(log)
        if e.kind == "status" and "held_message" in e.metadata
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
    for event in log:
        if event.kind != "status":
            continue
        if event.metadata.get("started"):
            started.add(event.metadata["call_id"])
        paused = event.metadata.get("interrupted")
        if isinstance(paused, dict):
            reasons[paused["call_id"]] = paused.get("reason", "")
            started.discard(paused["call_id"])
    return started, reasons
