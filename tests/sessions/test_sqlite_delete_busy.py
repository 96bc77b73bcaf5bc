"""SQLite: `delete` refuses a session whose lease another process, or another host, holds.

The refusal within one process is part of the store contract
(`hookline.testing.store_contract`); here the lease is held by another OS process, or by
another host (a row written by hand).
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

from hookline.errors import SessionBusy, SessionNotFound
from hookline.events import Event
from hookline.messages import TextPart
from hookline.sessions import SQLiteSessionStore

pytestmark = pytest.mark.anyio

WORKER = Path(__file__).with_name("store_worker.py")
BUSY = "a run holds it; cancel the run or wait for it to end"


def hi() -> Event:
    return Event(author="user", role="user", parts=[TextPart(text="hi")])


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
