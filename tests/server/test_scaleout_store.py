"""What the scale-out bus needs from the PostgreSQL store: an announced append, a lock probe, a listener."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import pytest

from hookline import Event, SessionNotFound
from hookline.sessions._notify import CONTROL_CHANNEL, EVENTS_CHANNEL, Notifier
from hookline.sessions.postgres import PostgresSessionStore
from support.postgres_db import fresh_database

pytestmark = pytest.mark.anyio

DEADLINE = 30.0


@pytest.fixture(scope="module")
def dsn() -> Iterator[str]:
    with fresh_database("hookline_bus") as url:
        yield url


@pytest.fixture
async def store(dsn: str) -> AsyncIterator[PostgresSessionStore]:
    opened = PostgresSessionStore(dsn)
    yield opened
    await opened.aclose()


class Heard:
    """A LISTEN connection of the test's own, and what it heard."""

    def __init__(self) -> None:
        self.payloads: list[str] = []
        self.changed = asyncio.Event()

    def __call__(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        self.payloads.append(f"{channel} {payload}")
        self.changed.set()

    async def wait_for(self, payload: str) -> None:
        async def until() -> None:
            while payload not in self.payloads:
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(until(), DEADLINE)


@pytest.fixture
async def heard(dsn: str) -> AsyncIterator[Heard]:
    listener = Heard()
    conn = await asyncpg.connect(dsn)
    await conn.add_listener(EVENTS_CHANNEL, listener)
    await conn.add_listener(CONTROL_CHANNEL, listener)
    yield listener
    await conn.close()


def say(text: str) -> Event:
    return Event.status("agent", "agent", text)


async def test_an_append_is_announced_at_its_commit_with_its_last_seq(
    store: PostgresSessionStore, heard: Heard
) -> None:
    await store.create(session_id="announced")
    await store.append_events("announced", [say("one"), say("two")])
    await heard.wait_for("hookline_events 2:announced")
    await store.append_event("announced", say("three"))
    await heard.wait_for("hookline_events 3:announced")
    assert heard.payloads == ["hookline_events 2:announced", "hookline_events 3:announced"], "one per append"


async def test_a_refused_append_announces_nothing(store: PostgresSessionStore, heard: Heard) -> None:
    with pytest.raises(SessionNotFound):
        await store.append_event("missing", say("nowhere"))
    await store.create(session_id="present")
    await store.append_event("present", say("here"))
    await heard.wait_for("hookline_events 1:present")
    assert heard.payloads == ["hookline_events 1:present"]


async def test_a_session_id_too_long_for_a_notification_still_appends(store: PostgresSessionStore) -> None:
    long_id = "x" * 9_000
    await store.create(session_id=long_id)
    stored = await store.append_event(long_id, say("fine"))
    assert stored.seq == 1


async def test_run_active_sees_a_run_lock_of_another_store_and_takes_none(store: PostgresSessionStore) -> None:
    other = PostgresSessionStore(store.dsn)
    try:
        assert not await store.run_active("probe")
        async with other.run_lock("probe"):
            assert await store.run_active("probe")
            assert not await store.run_active("probe-other")
        assert not await store.run_active("probe")

        locking = True

        async def probe_while_locking() -> int:
            probes = 0
            while locking:
                await store.run_active("probe")
                probes += 1
            return probes

        # Asking while runs take the lock never makes them busy (a try-lock probe would).
        prober = asyncio.create_task(probe_while_locking())
        try:
            for _ in range(100):
                async with other.run_lock("probe", timeout=0.0):
                    pass
        finally:
            locking = False
        assert await prober > 10
    finally:
        await other.aclose()


async def test_the_notifier_sends_hears_and_comes_back_after_its_connection_is_killed(dsn: str, heard: Heard) -> None:
    notifier = Notifier(dsn, where="test", ping_every=0.2)
    got: list[tuple[str, str]] = []
    back = asyncio.Event()
    notifier.on_control = lambda verb, session_id: got.append((verb, session_id))
    notifier.on_reconnect = back.set
    notifier.start()
    try:
        await notifier.send("cancel", "with space", timeout=DEADLINE)
        await heard.wait_for("hookline_control cancel with space")
        admin = await asyncpg.connect(dsn)
        try:
            await admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                                " WHERE application_name = 'hookline-listen' AND datname = current_database()")
        finally:
            await admin.close()
        await asyncio.wait_for(back.wait(), DEADLINE)
        await notifier.send("ack", "s1", timeout=DEADLINE)
        await heard.wait_for("hookline_control ack s1")
        assert ("cancel", "with space") in got
        with pytest.raises(ValueError, match="too long"):
            await notifier.send("cancel", "x" * 8_000)
    finally:
        await notifier.aclose()
