"""`ToolTurn`: one turn of tool calls, and how its pauses are worded.

A turn holds the calls the model made, those that began running and what each answered.
The run keeps the turn open until its results are appended, so that a failure or a cancel
in the middle can answer every call: with its result where it ran, as cut off where it was
running, as not run otherwise (`Run._close_open_calls`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from hookline.decision import Decision
from hookline.messages import ToolCallPart, ToolResultPart
from hookline.result import Interruption
from hookline.tools import error_result

__all__ = ["ToolTurn", "closing_results", "pause_line", "pauses", "unrun_results"]

_CANCELLED_WHILE_RUNNING = "the run was cancelled while this call ran; it may or may not have taken effect"


class ToolTurn:
    """The calls of one tool turn, those that began running, and what each answered (by call id)."""

    __slots__ = ("calls", "ran", "started")

    def __init__(self, calls: list[ToolCallPart]) -> None:
        self.calls = calls
        self.ran: dict[str, ToolResultPart] = {}
        self.started: list[ToolCallPart] = []


def unrun_results(calls: list[ToolCallPart], decisions: dict[str, Decision], reason: str) -> list[ToolResultPart]:
    """The calls of a turn that stopped before they ran: a hook's result where it gave one, else `reason`."""
    results = []
    for call in calls:
        decision = decisions.get(call.id)
        results.append(decision.result if decision and decision.result else error_result(call, reason))
    return results


def closing_results(
    turn: ToolTurn | None, calls: Iterable[ToolCallPart], reason: str, *, cancelled: bool
) -> list[ToolResultPart]:
    """The results that close `calls` after a failure or a cancel.

    A call of `turn` that ran gives what it answered; one that was running when the run was
    `cancelled` may have taken effect, and says so; any other gives `reason`.
    """
    ran, started = (turn.ran, turn.started) if turn is not None else ({}, [])
    results = []
    for call in calls:
        if call.id in ran:
            results.append(ran[call.id])
        elif cancelled and call in started:
            results.append(error_result(call, _CANCELLED_WHILE_RUNNING))
        else:
            results.append(error_result(call, reason))
    return results


def pauses(calls: list[ToolCallPart], decisions: dict[str, Decision]) -> Iterator[tuple[Interruption, dict[str, Any]]]:
    """The calls a turn pauses on, each with where it sits (the sub-agent and the call that holds it).

    A call whose sub-agent paused stands for the sub-agent's own paused calls: those are what
    awaits the user.
    """
    for call in calls:
        decision = decisions.get(call.id)
        if decision is None or decision.action != "interrupt":
            continue
        for inner in decision.inner:
            yield inner, {"agent": inner.agent, "agent_call_id": call.id}
        if not decision.inner:
            yield Interruption(call_id=call.id, name=call.name, arguments=call.arguments, reason=decision.reason,
                               response_schema=decision.response_schema), {}


def pause_line(item: Interruption) -> str:
    """"paused delete_file for approval: ..." or "paused ask_user: it asks ..." (a question)."""
    name = f"{item.agent}'s {item.name}" if item.agent else item.name
    if item.response_schema is not None:
        return f"paused {name}: it asks {item.reason}"
    return f"paused {name} for approval" + (f": {item.reason}" if item.reason else "")
