"""A run cancelled while its events are being written: the write ends first, so nothing is written twice.

The loop's `Recorder` awaits each append to its end even when the run's task is cancelled
meanwhile; a store that has written the events but not yet returned must not see them
handed back for the run's last write, or the log would hold them twice.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence

import pytest

from hookline import Agent, Event, ToolCallPart, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import InMemorySessionStore

pytestmark = pytest.mark.anyio


class SlowToAnswer(InMemorySessionStore):
    """Writes each append at once, then, once `slow` is set, waits for `answer` before returning."""

    def __init__(self) -> None:
        super().__init__()
        self.slow = False
        self.waiting = asyncio.Event()
        self.answer = asyncio.Event()

    async def append_events(self, session_id: str, events: Sequence[Event]) -> list[Event]:
        stored = await super().append_events(session_id, events)
        if self.slow:
            self.waiting.set()
            await self.answer.wait()
        return stored


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_run_cancelled_during_a_write_writes_each_event_once() -> None:
    store = SlowToAnswer()

    def model(request: ModelRequest) -> ModelResponse:
        store.slow = True  # from the write before the tool runs on
        return ModelResponse(tool_calls=[ToolCallPart(id="c1", name="add", arguments={"a": 1, "b": 2})])

    agent = Agent(model=FunctionModel(model), tools=[add], session_store=store)
    run = asyncio.ensure_future(agent.prompt("add").session("s1"))
    await store.waiting.wait()
    run.cancel()  # lands before the store's answer
    store.answer.set()
    with pytest.raises(asyncio.CancelledError):
        await run

    log = await store.events("s1", view="all")
    assert [e.seq for e in log] == list(range(1, len(log) + 1))
    twice = [text for text, n in Counter((e.kind, e.author, e.text, e.role) for e in log).items() if n > 1]
    assert not twice, f"written twice: {twice}"
    assert [m.role for m in (e.to_message() for e in log if e.kind == "message")] == ["user", "assistant", "tool"]
