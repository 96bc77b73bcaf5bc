"""`SessionStore.search` beyond the contract: rolled-back runs, letters beyond ASCII, the default's reads, SQLite.

The contract cases (`hookline.testing`) cover what every store's search answers; these cover
what hookline's stores add: a run rolled back is not searched, case folds as `str.casefold`
where the store can, the default reads each log a page at a time up to its first mention, and
SQLite searches on a connection of its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from hookline import Event, TextPart
from hookline.sessions import InMemorySessionStore, Session, SessionStore, SQLiteSessionStore
from hookline.sessions.base import PAGE
from hookline.types import View

pytestmark = pytest.mark.anyio


def says(text: str, role: str = "user") -> Event:
    return Event(author=role, role=role, parts=[TextPart(text=text)])  # type: ignore[arg-type]


async def test_a_rolled_back_run_is_not_searched(store: SessionStore, app: str) -> None:
    session = await store.create(app=app)
    await store.append_events(session.id, [says("plan the trip"), says("BOOKED a flight", "assistant")])
    await store.append_events(session.id, [says("and a hotel"), says("booked the hotel", "assistant")])
    assert [m.text for m in await store.search("booked", app=app)] == ["BOOKED a flight"]
    await store.roll_back(session.id, after_seq=0, through_seq=2)
    assert [m.text for m in await store.search("booked", app=app)] == ["booked the hotel"]
    await store.roll_back(session.id, after_seq=2, through_seq=4)
    assert await store.search("booked", app=app) == []


async def test_accented_letters_match_whatever_their_case(store: SessionStore, app: str) -> None:
    session = await store.create(app=app)
    await store.append_event(session.id, says("Un ÉTÉ à Zürich"))
    for needle in ("été", "ÉTÉ", "zÜrich"):
        assert [m.session.id for m in await store.search(needle, app=app)] == [session.id], needle


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_letters_fold_as_casefold_has_them(store: SessionStore, app: str, backend: str) -> None:
    """ß is ss, a final sigma a sigma, as Python folds them (PostgreSQL's ILIKE folds letter by letter)."""
    session = await store.create(app=app)
    await store.append_event(session.id, says("Die STRAßE, ΟΔΟΣ"))
    for needle in ("strasse", "STRASSE", "οδος", "straße"):
        assert [m.text for m in await store.search(needle, app=app)] == ["Die STRAßE, ΟΔΟΣ"], needle


class Reads(SessionStore):
    """A store of one's own over the in-memory one, with the default `search` and `page`, noting each read."""

    def __init__(self) -> None:
        self.inner = InMemorySessionStore()
        self.reads: list[tuple[str, str, int | None]] = []

    async def create(self, **options: Any) -> Session:
        return await self.inner.create(**options)

    async def get(self, session_id: str, *, user: str | None = None, with_events: bool = True) -> Session:
        return await self.inner.get(session_id, user=user, with_events=with_events)

    async def list(self, *, app: str | None = None, user: str | None = None, limit: int | None = None) -> list[Session]:
        return await self.inner.list(app=app, user=user, limit=limit)

    async def delete(self, session_id: str, *, user: str | None = None) -> None:
        await self.inner.delete(session_id, user=user)

    async def append_events(self, session_id: str, events: Sequence[Event]) -> list[Event]:
        return await self.inner.append_events(session_id, events)

    async def prepare_event(self, session_id: str, event: Event) -> Event:
        return await self.inner.prepare_event(session_id, event)

    async def events(self, session_id: str, *, view: View = "all", after_seq: int = 0) -> list[Event]:
        self.reads.append(("events", session_id, None))
        return await self.inner.events(session_id, view=view, after_seq=after_seq)

    async def page(self, session_id: str, **options: Any) -> list[Event]:
        self.reads.append(("page", session_id, options["limit"]))
        return await self.inner.page(session_id, **options)

    async def update_state(self, session_id: str, state: dict[str, Any]) -> None:
        await self.inner.update_state(session_id, state)

    def run_lock(self, session_id: str, *, timeout: float = 0.0) -> AbstractAsyncContextManager[None]:
        return self.inner.run_lock(session_id, timeout=timeout)


async def test_the_default_reads_pages_up_to_the_first_mention_and_stops_at_the_limit() -> None:
    store = Reads()
    long = await store.create(session_id="long")
    for start in range(0, 3 * PAGE, PAGE):
        await store.append_events(long.id, [says(f"m{n}") for n in range(start, start + PAGE)])
    await store.append_events(long.id, [says("the needle"), *(says("more") for _ in range(PAGE))])
    for name in ("a", "b", "c"):
        session = await store.create(session_id=name)
        await store.append_events(session.id, [says("a needle"), says("hay")])
    found = await store.search("needle", limit=2)
    assert [(m.session.id, m.text) for m in found] == [("c", "a needle"), ("b", "a needle")]
    assert store.reads == [("page", "c", PAGE), ("page", "b", PAGE)], "one page each; 'a' and 'long' never read"
    store.reads.clear()
    assert [m.session.id for m in await store.search("needle")] == ["c", "b", "a", "long"]
    assert [r for r in store.reads if r[1] == "long"] == [("page", "long", PAGE)] * 4, "up to the first mention"
    assert all(kind == "page" for kind, _, _ in store.reads)


async def test_a_sqlite_search_does_not_wait_for_the_stores_thread(tmp_path: Path) -> None:
    async with SQLiteSessionStore(tmp_path / "s.db") as store:
        session = await store.create()
        await store.append_event(session.id, says("a needle"))
        # A job that holds the store's own thread for a second, as a long read or a slow disk would.
        busy = asyncio.create_task(store._transaction(lambda db: time.sleep(1.0), read_only=True))
        await asyncio.sleep(0.05)
        start = time.monotonic()
        assert [m.session.id for m in await store.search("needle")] == [session.id]
        assert time.monotonic() - start < 0.5
        assert not busy.done()
        await busy
