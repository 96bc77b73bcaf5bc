"""One store shared by many threads and event loops, as a web app's workers share it.

`run_sync` keeps one event loop per thread, so several threads running agents on one
store use it from several loops at once. Every log must stay valid: seq 1..n with no
gap, each run's prompt and answer present, every tool call answered. SQLite, and the
in-memory store (the default), which must hold up the same way.

HOOKLINE_FAULTS_LONG=1 runs many more runs per thread.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hookline import Agent, SessionNotFound, tool
from hookline.conversation import conversation_problem
from hookline.events import Event
from hookline.messages import TextPart, ToolCallPart
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import InMemorySessionStore, SessionStore, SQLiteSessionStore

LONG = os.environ.get("HOOKLINE_FAULTS_LONG") == "1"
THREADS = 8
RUNS = 75 if LONG else 10
APPENDS = 1000 if LONG else 200
DEADLINE = 600.0 if LONG else 120.0


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script(request: ModelRequest) -> ModelResponse:
    """Call `add` once per prompt, then answer naming the prompt."""
    if request.messages[-1].role == "user":
        call_id = f"c{len(request.messages)}"
        return ModelResponse(tool_calls=[ToolCallPart(id=call_id, name="add", arguments={"a": 2, "b": 3})])
    prompt = next(m.text for m in reversed(request.messages) if m.role == "user")
    return ModelResponse(text=f"answer to {prompt}")


def in_threads(count: int, work: Callable[[int], None]) -> None:
    """Run `work(i)` in `count` threads started together; re-raise the first failure."""
    start = threading.Barrier(count)
    failures: list[BaseException] = []

    def body(i: int) -> None:
        try:
            start.wait(timeout=DEADLINE)
            work(i)
        except BaseException as exc:  # reported below, in the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=DEADLINE)
        assert not thread.is_alive(), f"a thread still runs after {DEADLINE:g} s"
    if failures:
        raise failures[0]


@pytest.fixture(params=["sqlite", "memory"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    """A store for the threads of one test, closed at the end (whichever loop is left)."""
    store = SQLiteSessionStore(tmp_path / "sessions.db") if request.param == "sqlite" else InMemorySessionStore()
    yield store
    asyncio.run(store.aclose())


def read(store: SessionStore, session_id: str) -> list[Event]:
    """The session's log; SQLite's as a fresh store finds it in the file."""

    async def events() -> list[Event]:
        if not isinstance(store, SQLiteSessionStore):
            return await store.events(session_id)
        async with SQLiteSessionStore(store.path) as fresh:
            return await fresh.events(session_id)

    return asyncio.run(events())


def check_runs(events: list[Event], prompts: list[str]) -> None:
    """The log is gap-free and valid, and holds each prompt's call, result and answer, in turn."""
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    messages = [e.to_message() for e in events if e.kind == "message"]
    assert conversation_problem(messages) is None
    logged = [m.text for m in messages if m.role == "user"]
    assert sorted(logged) == sorted(prompts)
    assert [m.text for m in messages if m.role == "assistant" and m.text] == [f"answer to {p}" for p in logged]
    assert sum(len(m.tool_results) for m in messages) == len(prompts)


def test_run_sync_from_many_threads_on_one_store(shared: SessionStore) -> None:
    agent = Agent(model=FunctionModel(script), tools=[add], session_store=shared)

    def work(i: int) -> None:
        for run in range(RUNS):
            result = agent.prompt(f"t{i} r{run}").session(f"s{i}").run_sync()
            assert result.output == f"answer to t{i} r{run}"

    in_threads(THREADS, work)
    for i in range(THREADS):
        check_runs(read(shared, f"s{i}"), [f"t{i} r{run}" for run in range(RUNS)])


def test_run_sync_from_many_threads_on_one_session(shared: SessionStore) -> None:
    """Runs on one session from several loops take turns (`run_lock` across loops)."""
    agent = Agent(model=FunctionModel(script), tools=[add], session_store=shared)

    def work(i: int) -> None:
        for run in range(RUNS // 2):
            result = agent.prompt(f"t{i} r{run}").session("shared", wait=DEADLINE).run_sync()
            assert result.output == f"answer to t{i} r{run}"

    in_threads(THREADS // 2, work)
    check_runs(read(shared, "shared"), [f"t{i} r{run}" for i in range(THREADS // 2) for run in range(RUNS // 2)])


def test_two_event_loops_append_to_one_session_interleaved(shared: SessionStore) -> None:
    asyncio.run(shared.create(session_id="s1"))
    # Halfway, each loop waits for the other: appends that take turns however fast they are.
    halfway = threading.Barrier(2)

    def work(i: int) -> None:
        async def append() -> None:
            for n in range(APPENDS):
                if n == APPENDS // 2:
                    await asyncio.to_thread(halfway.wait, DEADLINE)
                event = Event(author=f"w{i}", role="user", parts=[TextPart(text=str(n))])
                stored = await shared.append_event("s1", event)
                assert stored.author == f"w{i}"
                # A failed write (a web app's 404) between the other loop's writes
                # must roll back its own transaction, never the other's.
                with pytest.raises(SessionNotFound):
                    await shared.append_event("missing", event)

        asyncio.run(append())

    in_threads(2, work)
    events = read(shared, "s1")
    assert [e.seq for e in events] == list(range(1, 2 * APPENDS + 1))
    for i in range(2):
        assert [e.text for e in events if e.author == f"w{i}"] == [str(n) for n in range(APPENDS)]
    authors = [e.author for e in events]
    assert authors != sorted(authors), "the two loops took turns: the test did not interleave them"


def test_a_store_outlives_the_event_loops_that_used_it(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    asyncio.run(store.create(session_id="s1"))
    for n in range(3):  # each asyncio.run is a new loop, the last one closed
        event = Event(author="user", role="user", parts=[TextPart(text=str(n))])
        assert asyncio.run(store.append_event("s1", event)).seq == n + 1
    assert [e.text for e in asyncio.run(store.events("s1"))] == ["0", "1", "2"]
    asyncio.run(store.aclose())


def test_a_closed_store_opens_again_in_another_thread(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    asyncio.run(store.create(session_id="s1"))
    asyncio.run(store.aclose())

    def work(i: int) -> None:
        async def append() -> None:
            for _ in range(2):
                await store.append_event("s1", Event(author=f"w{i}", role="user", parts=[TextPart(text="x")]))

        asyncio.run(append())

    in_threads(1, work)
    assert [e.seq for e in asyncio.run(store.events("s1"))] == [1, 2]
    asyncio.run(store.aclose())


def test_closing_while_other_threads_write_loses_nothing(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    asyncio.run(store.create(session_id="s1"))

    def work(i: int) -> None:
        async def act() -> None:
            for n in range(APPENDS // 2):
                if i == 2:
                    await store.aclose()  # the writers' next jobs open the store again
                else:
                    await store.append_event("s1", Event(author=f"w{i}", role="user", parts=[TextPart(text=str(n))]))

        asyncio.run(act())

    try:
        in_threads(3, work)
    finally:
        asyncio.run(store.aclose())
    events = read(store, "s1")
    assert [e.seq for e in events] == list(range(1, APPENDS + 1))
