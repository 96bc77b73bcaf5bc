"""A run cancelled while it takes a session's run lock leaves the session free.

The cancellation must land at the worst moment: once the lock is taken in the database
(the lease committed, the advisory lock granted) but before the taker learns it. Each store
here is the real one, with a hook at that moment: the test cancels the taker there, then
takes the lock at once (`timeout=0`) from the same store and from a second store on the
same data, as another process would. Before the fix, the lease stayed until `lock_ttl`
expired (SQLite) or the lock until the lock connection closed (PostgreSQL).

The in-memory store takes its lock without a pause, so its danger is the other one: a
waiter cancelled just as the holder lets go must not swallow the cancellation and run.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from functools import partial
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from hookline.sessions import InMemorySessionStore, PostgresSessionStore, SessionStore, SQLiteSessionStore
from hookline.sessions._postgres_locks import _TAKE
from hookline.sessions._sqlite_thread import Job
from support.waiting import DEADLINE, assert_cancelled, await_until

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def hold(store: SessionStore, session_id: str) -> None:
    """A run that takes the lock and keeps it until cancelled."""
    async with store.run_lock(session_id, timeout=DEADLINE):
        await asyncio.Event().wait()


async def assert_free(*stores: SessionStore, session_id: str) -> None:
    """Every one of `stores` gets the session's run lock at once."""
    for store in stores:
        async with store.run_lock(session_id, timeout=0):
            pass


# --- SQLite: cancelled as its lease write commits ---------------------------------------------


class PausingLeases(SQLiteSessionStore):
    """Pauses the next lease write, before or after its COMMIT, until the test has cancelled its caller."""

    def __init__(self, path: Path, *, pause_at: str) -> None:
        super().__init__(path)
        # A lease written on the calling thread's own connection cannot be cancelled half-way;
        # one written by the store's thread (when another holds SQLite's write lock) can.
        self._inline = None
        self.pause_at = pause_at
        self.armed = False
        self.paused = asyncio.Event()  # set from the store's thread, through the loop
        self.resume = threading.Event()

    async def _write_leases(self, work: Callable[[sqlite3.Connection], Any], **options: Any) -> Any:
        if self.armed and self.pause_at == "before-commit":
            self.armed = False
            work = self._pausing(work)  # inside the transaction: before its COMMIT
        return await super()._write_leases(work, **options)

    def _submit(self, job: Job) -> None:
        if self.armed and self.pause_at == "after-commit" and job.work is not None:
            self.armed = False
            job.work = self._pausing(job.work)  # around the whole transaction: after its COMMIT
        super()._submit(job)

    def _pausing(self, work: Callable[[sqlite3.Connection], Any]) -> Callable[[sqlite3.Connection], Any]:
        return partial(self._pause_after, work, asyncio.get_running_loop())

    def _pause_after(
        self, work: Callable[[sqlite3.Connection], Any], loop: asyncio.AbstractEventLoop, db: sqlite3.Connection
    ) -> Any:
        result = work(db)
        loop.call_soon_threadsafe(self.paused.set)
        assert self.resume.wait(DEADLINE), "the test never let the lease write go on"
        return result


@pytest.mark.parametrize("pause_at", ["after-commit", "before-commit"])
async def test_sqlite_a_taker_cancelled_during_its_lease_write_leaves_no_lease(tmp_path: Path, pause_at: str) -> None:
    path = tmp_path / "sessions.db"
    store, other = PausingLeases(path, pause_at=pause_at), SQLiteSessionStore(path)
    try:
        session = await store.create()
        store.armed = True
        taker = asyncio.create_task(hold(store, session.id))
        await asyncio.wait_for(store.paused.wait(), DEADLINE)
        taker.cancel()  # the caller awaits the write, which has (or has not) committed
        if pause_at == "before-commit":  # the caller has given up on the write before it goes on: it rolls back
            await asyncio.wait([taker], timeout=DEADLINE)
        store.resume.set()
        await assert_cancelled(taker)
        await assert_free(store, other, session_id=session.id)
    finally:
        store.resume.set()
        await store.aclose()
        await other.aclose()


# --- PostgreSQL: cancelled once the server granted the advisory lock --------------------------


class PausingConnection:
    """A real asyncpg connection whose next `pg_try_advisory_lock` pauses once answered, until cancelled."""

    def __init__(self, conn: asyncpg.Connection, store: PausingLocks) -> None:
        self._conn = conn
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    async def fetchval(self, query: str, *args: Any) -> Any:
        answer = await self._conn.fetchval(query, *args)
        if query == _TAKE and self._store.armed:
            self._store.armed = False
            self._store.granted.append(answer)
            self._store.paused.set()
            await asyncio.Event().wait()  # the caller is cancelled here, the lock granted
        return answer


class PausingLocks(PostgresSessionStore):
    """A store whose run-lock connection pauses after the next lock the server grants."""

    def __init__(self, dsn: str) -> None:
        super().__init__(dsn)
        self.armed = False
        self.granted: list[bool] = []
        self.paused = asyncio.Event()

    async def _connect(self) -> Any:
        return PausingConnection(await super()._connect(), self)


@pytest.fixture
async def postgres_stores(postgres_dsn: str) -> AsyncIterator[tuple[PausingLocks, PostgresSessionStore]]:
    store, other = PausingLocks(postgres_dsn), PostgresSessionStore(postgres_dsn)
    yield store, other
    await store.aclose()
    await other.aclose()


async def test_postgres_a_taker_cancelled_once_the_lock_is_granted_gives_it_back(
    postgres_stores: tuple[PausingLocks, PostgresSessionStore],
) -> None:
    store, other = postgres_stores
    session = await store.create()
    store.armed = True
    taker = asyncio.create_task(hold(store, session.id))
    await asyncio.wait_for(store.paused.wait(), DEADLINE)
    assert store.granted == [True]
    taker.cancel()
    await assert_cancelled(taker)
    await assert_free(other, store, session_id=session.id)
    assert not await other.run_active(session.id)


async def test_postgres_a_taker_cancelled_while_it_claims_the_session_gives_the_lock_back(
    postgres_stores: tuple[PausingLocks, PostgresSessionStore],
    postgres_dsn: str,
) -> None:
    """The epoch claim after the lock waits for a row lock; cancelled there, the lock goes back."""
    store, other = postgres_stores
    session = await store.create()
    blocker, watcher = await asyncpg.connect(postgres_dsn), await asyncpg.connect(postgres_dsn)
    try:
        transaction = blocker.transaction()
        await transaction.start()
        await blocker.execute("SELECT 1 FROM hookline_sessions WHERE id = $1 FOR UPDATE", session.id)
        taker = asyncio.create_task(hold(store, session.id))
        await await_until(partial(claim_waits, watcher), "the claim waits for the session row")
        taker.cancel()
        await assert_cancelled(taker)
        await transaction.rollback()
    finally:
        await blocker.close()
        await watcher.close()
    await assert_free(other, store, session_id=session.id)


async def claim_waits(conn: asyncpg.Connection) -> bool:
    """Whether a statement waits for a row lock to set a `lock_epoch`.

    `conn` must be in no transaction: `pg_stat_activity` stays as first read within one.
    """
    query = """SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
               AND wait_event_type = 'Lock' AND query LIKE '%SET lock_epoch%'"""
    return bool(await conn.fetchval(query))


# --- in memory: cancelled as the holder lets go -----------------------------------------------


async def test_memory_a_waiter_cancelled_as_the_holder_lets_go_stays_cancelled() -> None:
    store = InMemorySessionStore()
    entered: list[str] = []

    async def wait_then_run() -> None:
        async with store.run_lock("s", timeout=DEADLINE):
            entered.append("s")

    async with store.run_lock("s"):
        waiter = asyncio.create_task(wait_then_run())
        await await_until(lambda: store._run_locks._waiters.get("s"), "the second run waits")
    waiter.cancel()  # in the same step as the release above: the waiter is woken and cancelled at once
    await assert_cancelled(waiter)
    assert not entered
    await assert_free(store, session_id="s")
