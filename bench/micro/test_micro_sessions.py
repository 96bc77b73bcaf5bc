"""The SQLite session store: append (one event; one turn's batch) and loading the prompt view."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from hookline import Event, Message, TextPart, ToolCallPart, ToolResultPart

try:
    from hookline.sessions import SQLiteSessionStore
except ImportError:  # the store is not there yet
    pytest.skip("hookline.sessions.SQLiteSessionStore is not available", allow_module_level=True)


def _turn(turn: int) -> list[Event]:
    calls = [ToolCallPart(id=f"call_{turn}_{i}", name="add", arguments={"a": turn, "b": i}) for i in (1, 2)]
    events = [Event(author="agent", role="assistant", parts=list(calls))]
    events += [
        Event(author="add", role="tool", parts=[ToolResultPart(call_id=c.id, content="3", name="add")]) for c in calls
    ]
    return events


@pytest.fixture
def store(tmp_path: Path, loop: asyncio.AbstractEventLoop) -> Iterator[SQLiteSessionStore]:
    s = SQLiteSessionStore(tmp_path / "bench.db")
    yield s
    loop.run_until_complete(s.aclose())


def test_append_one_event(benchmark: Any, store: SQLiteSessionStore, loop: asyncio.AbstractEventLoop) -> None:
    loop.run_until_complete(store.create(session_id="s"))
    event = Event(author="user", role="user", parts=[TextPart(text="Please add some numbers.")])
    benchmark(lambda: loop.run_until_complete(store.append_event("s", event)))


def test_append_turn(benchmark: Any, store: SQLiteSessionStore, loop: asyncio.AbstractEventLoop) -> None:
    """One tool turn's three messages in one transaction (the recorder's batch)."""
    loop.run_until_complete(store.create(session_id="s"))
    events = _turn(1)
    benchmark(lambda: loop.run_until_complete(store.append_events("s", events)))


def test_create_session(benchmark: Any, store: SQLiteSessionStore, loop: asyncio.AbstractEventLoop) -> None:
    ids = count()
    benchmark(lambda: loop.run_until_complete(store.create(session_id=f"s{next(ids)}")))


@pytest.mark.parametrize("T", [10, 50])
def test_load_prompt_view(benchmark: Any, store: SQLiteSessionStore, loop: asyncio.AbstractEventLoop, T: int) -> None:
    """A session holding one add-loop run of T turns (plus status events), read back as the model sees it."""

    async def fill() -> None:
        await store.create(session_id="s")
        events = [Event(author="user", role="user", parts=[TextPart(text="Please add some numbers.")])]
        for turn in range(1, T + 1):
            events.append(Event.status("agent", "agent", f"turn {turn}: calling model"))
            events += _turn(turn)
        events.append(Event.from_message(Message.assistant("done"), "agent"))
        await store.append_events("s", events)

    loop.run_until_complete(fill())
    events = benchmark(lambda: loop.run_until_complete(store.events("s", view="prompt")))
    assert len(events) == 2 + 3 * T


def test_get_session(benchmark: Any, store: SQLiteSessionStore, loop: asyncio.AbstractEventLoop) -> None:
    """`get` (the ui view, with status events), as a run's start does."""

    async def fill() -> None:
        await store.create(session_id="s")
        for turn in range(1, 11):
            await store.append_events("s", [Event.status("agent", "agent", f"turn {turn}"), *_turn(turn)])

    loop.run_until_complete(fill())
    benchmark(lambda: loop.run_until_complete(store.get("s")))
