"""Event JSON encode/decode (`EVENTS_ADAPTER`) and status-event creation (`Event.status`)."""

from __future__ import annotations

from typing import Any

import pytest

from hookline import Event, Message, TextPart, ToolCallPart, ToolResultPart
from hookline._run.status import describe_call, describe_result
from hookline.events import EVENTS_ADAPTER
from hookline.messages import Part


def _run_log(T: int = 10) -> list[Event]:
    """The events of one add-loop run (T turns) with status events, as the loop writes them."""
    events = [Event.from_message(Message.user("Please add some numbers."), "user")]
    for turn in range(1, T + 1):
        calls = [ToolCallPart(id=f"call_{turn}_{i}", name="add", arguments={"a": turn, "b": i}) for i in (1, 2)]
        events.append(Event.status("agent", "agent", f"turn {turn}: calling model"))
        events.append(Event.status("agent", "llm", "function answered: 2 tool calls, 15 tokens, 0 ms"))
        events.append(Event(author="agent", role="assistant", parts=list(calls)))
        for c in calls:
            events.append(Event.status("add", "tool", describe_call(c, inputs=True), call_id=c.id, started=True))
            result = ToolResultPart(call_id=c.id, content=str(turn + int(c.id[-1])), name="add")
            events.append(Event(author="add", role="tool", parts=[result]))
            events.append(Event.status("add", "tool", describe_result(result, outputs=True), call_id=c.id))
    events.append(Event(author="agent", role="assistant", parts=[TextPart(text="done")]))
    return events


@pytest.fixture(scope="module")
def run_log() -> list[Event]:
    return _run_log()


def test_encode_run_log(benchmark: Any, run_log: list[Event]) -> None:
    """One T=10 run's log (~90 events) to JSON."""
    data = benchmark(EVENTS_ADAPTER.dump_json, run_log)
    assert data.startswith(b"[")


def test_decode_run_log(benchmark: Any, run_log: list[Event]) -> None:
    """JSON back to events (what a store's load does)."""
    data = EVENTS_ADAPTER.dump_json(run_log)
    events = benchmark(EVENTS_ADAPTER.validate_json, data)
    assert events == run_log


def test_encode_one_event(benchmark: Any, run_log: list[Event]) -> None:
    event = run_log[3]
    benchmark(EVENTS_ADAPTER.dump_json, [event])


def test_status_event(benchmark: Any) -> None:
    """`Event.status(...)` as the loop builds one per step (validates a TextPart and the event)."""
    event = benchmark(Event.status, "add", "tool", "running add(a=1, b=2)", call_id="call_1_1", started=True)
    assert event.kind == "status"


def test_status_text_call(benchmark: Any) -> None:
    call = ToolCallPart(id="call_1_1", name="add", arguments={"a": 1, "b": 2})
    assert benchmark(describe_call, call, inputs=True) == "running add(a=1, b=2)"


def test_message_event(benchmark: Any) -> None:
    """`Event.from_message(...)`: one per message the loop records."""
    message = Message(role="assistant", parts=[ToolCallPart(id="c", name="add", arguments={"a": 1, "b": 2})])
    benchmark(Event.from_message, message, "agent")


def test_text_part(benchmark: Any) -> None:
    """The smallest pydantic object the loop builds: the floor under every event."""
    benchmark(TextPart, text="turn 1: calling model")


def test_part_adapter_reference(benchmark: Any) -> None:
    """Reference: validating one part through a TypeAdapter (the discriminated union)."""
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(Part)
    benchmark(adapter.validate_python, {"type": "text", "text": "x"})


def test_tool_result_part(benchmark: Any) -> None:
    """The result part `Tool.answer` builds per call (validated)."""
    benchmark(ToolResultPart, call_id="call_1_1", content="3", name="add")


def test_tool_message_from_valid_parts(benchmark: Any) -> None:
    """The tool message the loop wraps each result in (not validated again)."""
    if not hasattr(Message, "from_valid_parts"):
        pytest.skip("Message.from_valid_parts is gone")
    result = ToolResultPart(call_id="call_1_1", content="3", name="add")
    benchmark(lambda: Message.from_valid_parts("tool", [result]))


def test_tool_message_validated(benchmark: Any) -> None:
    """Reference: the same message through pydantic validation."""
    result = ToolResultPart(call_id="call_1_1", content="3", name="add")
    benchmark(lambda: Message(role="tool", parts=[result]))
