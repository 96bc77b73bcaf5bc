"""`delete` refuses a session a run holds, whichever process holds it, and leaves it whole.

Runs against the in-memory and SQLite stores (add "postgres" to `DELETE_BUSY_BACKENDS`
once its store refuses too); the SQLite tests at the end hold the lease from another OS
process, or from another host (a row written by hand).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import closing
from pathlib import Path

import pytest

from hookline import Agent, tool
from hookline.errors import SessionBusy, SessionNotFound
from hookline.events import Event
from hookline.messages import TextPart, ToolCallPart
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SessionStore, SQLiteSessionStore

pytestmark = pytest.mark.anyio

DELETE_BUSY_BACKENDS = ["memory", "sqlite"]
WORKER = Path(__file__).with_name("store_worker.py")
BUSY = "a run holds it; cancel the run or wait for it to end"


@pytest.fixture(params=DELETE_BUSY_BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def hi() -> Event:
    return Event(author="user", role="user", parts=[TextPart(text="hi")])


async def test_delete_while_a_run_lock_is_held_is_refused(store: SessionStore) -> None:
    session = await store.create()
    await store.append_event(session.id, hi())
    async with store.run_lock(session.id):
        with pytest.raises(SessionBusy, match=BUSY) as caught:
            await store.delete(session.id)
        assert caught.value.session_id == session.id
        assert session.id in str(caught.value)
    assert [e.text for e in await store.events(session.id)] == ["hi"]
    await store.delete(session.id)
    with pytest.raises(SessionNotFound):
        await store.get(session.id)


async def test_delete_of_a_missing_or_foreign_session_is_not_found_even_while_locked(store: SessionStore) -> None:
    session = await store.create(user="u1")
    async with store.run_lock(session.id), store.run_lock("missing"):
        with pytest.raises(SessionNotFound):
            await store.delete(session.id, user="u2")
        with pytest.raises(SessionNotFound):
            await store.delete("missing")


async def test_delete_from_inside_a_run_is_refused(store: SessionStore) -> None:
    refusals: list[str] = []

    @tool
    async def remove_me(session_id: str) -> str:
        """Try to delete the session this run writes to."""
        try:
            await store.delete(session_id)
        except SessionBusy as exc:
            refusals.append(str(exc))
            return "refused"
        return "deleted"

    def script(request: ModelRequest) -> ModelResponse:
        if request.messages[-1].role == "user":
            call = ToolCallPart(id="c1", name="remove_me", arguments={"session_id": "s-busy"})
            return ModelResponse(tool_calls=[call])
        return ModelResponse(text=request.messages[-1].tool_results[0].content)

    agent = Agent(model=FunctionModel(script), tools=[remove_me], session_store=store)
    result = await agent.prompt("go").session("s-busy")
    assert result.output == "refused"
    assert len(refusals) == 1
    assert BUSY in refusals[0]
    assert [e.role for e in await store.events("s-busy", view="prompt")] == ["user", "assistant", "tool", "assistant"]
    await store.delete("s-busy")


# --- SQLite: a lease held by another process ------------------------------------------------


@pytest.fixture
def db_path(tmp_path: Path) -> str:
    return str(tmp_path / "sessions.db")


@pytest.fixture
async def sqlite_store(db_path: str) -> AsyncIterator[SQLiteSessionStore]:
    async with SQLiteSessionStore(db_path) as store:
        yield store


@pytest.fixture
def holders() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes holding run locks; all gone at teardown."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        process.kill()
        process.communicate()


async def test_sqlite_delete_while_another_process_runs_is_refused(
    sqlite_store: SQLiteSessionStore, db_path: str, holders: list[subprocess.Popen[str]]
) -> None:
    store = sqlite_store
    session = await store.create()
    await store.append_event(session.id, hi())
    command = [sys.executable, str(WORKER), "sqlite", db_path, session.id, "hold", "60"]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    holders.append(subprocess.Popen(command, text=True, **pipes))
    assert holders[0].stdout is not None
    assert holders[0].stdout.readline().strip() == "locked"

    with pytest.raises(SessionBusy, match=BUSY):
        await store.delete(session.id)
    assert [e.text for e in await store.events(session.id)] == ["hi"]

    holders[0].kill()  # a dead holder's lease is free at once: the delete goes through
    holders[0].communicate()
    started = time.monotonic()
    await store.delete(session.id)
    assert time.monotonic() - started < 3
    with pytest.raises(SessionNotFound):
        await store.get(session.id)


@pytest.mark.parametrize(("expires_in", "busy"), [(60.0, True), (-1.0, False)])
async def test_sqlite_a_lease_from_another_host_counts_until_it_expires(
    sqlite_store: SQLiteSessionStore, db_path: str, expires_in: float, busy: bool
) -> None:
    store = sqlite_store
    session = await store.create()
    lease = (session.id, "elsewhere-owner", "another-host", 1, time.time() + expires_in)
    with closing(sqlite3.connect(db_path)) as raw, raw:
        raw.execute("INSERT INTO hookline_run_locks VALUES (?, ?, ?, ?, ?)", lease)
    if busy:
        with pytest.raises(SessionBusy, match=BUSY):
            await store.delete(session.id)
        assert (await store.get(session.id)).id == session.id
    else:
        await store.delete(session.id)
        with pytest.raises(SessionNotFound):
            await store.get(session.id)
