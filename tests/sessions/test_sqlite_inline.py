"""Small writes on the calling thread's own connection (`hookline.sessions._sqlite_inline`).

Issue 28 (the server's CPU per run): the hop to the store's thread and back cost more than a
small write's statements, so a session's creation, an append without media and a lease are
written on a connection of the caller's own, which never waits for SQLite's write lock and
never checkpoints. What must hold: another writer is waited for off the event loop, the WAL
stays short however long the writes go on, and a store that cannot write here still writes.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path

import pytest

from hookline.events import Event
from hookline.messages import TextPart
from hookline.sessions import SQLiteSessionStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "sessions.db"


@pytest.fixture
async def store(db_path: Path) -> AsyncIterator[SQLiteSessionStore]:
    opened = SQLiteSessionStore(db_path)
    yield opened
    await opened.aclose()


def said(text: str) -> Event:
    return Event(author="user", role="user", parts=[TextPart(text=text)])


async def test_a_small_write_waits_for_another_writer_off_the_event_loop(
    store: SQLiteSessionStore, db_path: Path
) -> None:
    session = await store.create()
    with closing(sqlite3.connect(db_path, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")  # another process's write transaction
        append = asyncio.create_task(store.append_event(session.id, said("after the other")))
        started = time.monotonic()
        for _ in range(20):
            await asyncio.sleep(0.01)  # the event loop goes on while the append waits
        assert time.monotonic() - started < 1.0
        assert not append.done()
        other.execute("COMMIT")
    assert (await asyncio.wait_for(append, 10)).seq == 1
    assert store._inline is not None
    assert store._inline.commits == 1  # the creation alone: the append waited in the store's thread


async def test_the_wal_stays_short_under_a_stream_of_small_writes(store: SQLiteSessionStore, db_path: Path) -> None:
    session = await store.create()
    text = "x" * 3000

    async def writer() -> None:
        for _ in range(150):
            await store.append_event(session.id, said(text))

    await asyncio.gather(*(writer() for _ in range(8)))  # 1,200 appends without a pause
    assert [e.seq for e in await store.events(session.id)][-1] == 1200
    # Unchecked, the WAL holds every page written: over 30 MiB here (about 3 MiB checked).
    assert db_path.with_name(db_path.name + "-wal").stat().st_size < 8 * 2**20


async def test_with_synchronous_full_every_write_goes_to_the_stores_thread(db_path: Path) -> None:
    store = SQLiteSessionStore(db_path, synchronous="full")
    try:
        session = await store.create()
        await store.append_event(session.id, said("durable"))
        assert store._inline is None  # a commit waits for the disk: never on the event loop
    finally:
        await store.aclose()
