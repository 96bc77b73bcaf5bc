"""PostgreSQL run locks share one connection per event loop (issue 11: scaling from 1 to 2 processes).

A connection opened per run made the connect and close the cost of a run; these tests pin
down what sharing must keep: one backend holds every lock, a second run of the same process
still waits, and a dropped connection frees its sessions without freeing a newer holder's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import asyncpg
import pytest
from test_postgres_fencing import lock_backend

from hookline.errors import SessionBusy
from hookline.sessions import SessionStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def backend() -> str:
    return "postgres"


@pytest.fixture
async def admin(postgres_dsn: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain connection to the test database, beside the stores."""
    conn = await asyncpg.connect(postgres_dsn)
    yield conn
    await conn.close()


async def test_concurrent_runs_hold_their_locks_on_one_connection(
    store: SessionStore, admin: asyncpg.Connection
) -> None:
    sessions = [await store.create() for _ in range(6)]
    all_held, done = asyncio.Event(), asyncio.Event()
    holding = 0

    async def run(session_id: str) -> None:
        nonlocal holding
        async with store.run_lock(session_id):
            holding += 1
            if holding == len(sessions):
                all_held.set()
            await done.wait()

    runs = [asyncio.create_task(run(s.id)) for s in sessions]
    await asyncio.wait_for(all_held.wait(), 10)
    backends = {await lock_backend(admin, s.id) for s in sessions}
    done.set()
    await asyncio.gather(*runs)
    assert len(backends) == 1
    assert not any([await store.run_active(s.id) for s in sessions])


async def test_a_second_run_of_the_same_process_waits_for_the_first(store: SessionStore) -> None:
    session = await store.create()
    async with store.run_lock(session.id):
        with pytest.raises(SessionBusy):
            async with store.run_lock(session.id, timeout=0.05):
                pass
    async with store.run_lock(session.id):  # free again once the first run ended
        assert await store.run_active(session.id)


async def test_a_dropped_lock_connection_frees_its_sessions_but_not_a_newer_holder(
    open_store: Callable[[], SessionStore], admin: asyncpg.Connection
) -> None:
    store = open_store()
    old, other = await store.create(), await store.create()
    old_run_may_end, newer_holds = asyncio.Event(), asyncio.Event()

    async def old_run() -> None:
        async with store.run_lock(old.id):
            await admin.execute("SELECT pg_terminate_backend($1)", await lock_backend(admin, old.id))
            await old_run_may_end.wait()

    async def newer_run() -> None:
        async with store.run_lock(old.id, timeout=10):
            newer_holds.set()
            await asyncio.sleep(3600)  # holds the session until cancelled below

    first = asyncio.create_task(old_run())
    newer = asyncio.create_task(newer_run())
    await asyncio.wait_for(newer_holds.wait(), 10)
    async with store.run_lock(other.id):  # a third run gets a lock too, on the new connection
        pass
    old_run_may_end.set()
    await first  # its release must leave the newer holder's lock in place
    assert await store.run_active(old.id)
    newer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await newer
    assert not await store.run_active(old.id)
