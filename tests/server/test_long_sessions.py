"""A long session is read a page at a time: the routes answer pages with a cursor, and never read the log whole.

The store is a real SQLite file whose reads are counted (a subclass that records each call): the
session, its events and its stream read only bounded pages, whatever the log's length.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from hookline import Event, TextPart
from hookline.server import create_app
from hookline.sessions import SQLiteSessionStore

from .agent import make_agent
from .api import SSE
from .live import LiveServer

pytestmark = pytest.mark.anyio

EVENTS = 2_600


class CountingStore(SQLiteSessionStore):
    """A SQLite store that notes every read of a session's events: whole (`events`) or a page (its limit)."""

    reads: list[tuple[str, int | None]]

    async def events(self, session_id: str, **options: Any) -> list[Event]:
        self.reads.append(("events", None))
        return await super().events(session_id, **options)

    async def page(self, session_id: str, **options: Any) -> list[Event]:
        self.reads.append(("page", options.get("limit")))
        return await super().page(session_id, **options)


@pytest.fixture
async def long_session(tmp_path: Path) -> Any:
    store = CountingStore(tmp_path / "long.db")
    store.reads = []
    session = await store.create(session_id="long")
    for start in range(0, EVENTS, 500):
        await store.append_events(session.id, [
            Event(author="user", kind="message", role="user", parts=[TextPart(text=f"m{i}")])
            for i in range(start + 1, min(start + 500, EVENTS) + 1)])
    server = LiveServer(create_app(make_agent(store), store, tokens={})).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            store.reads.clear()
            yield http, store
    finally:
        server.stop()


def _link(response: httpx.Response) -> tuple[str, str] | None:
    found = re.fullmatch(r'<([^>]+)>; rel="(\w+)"', response.headers.get("link", ""))
    return (found.group(1), found.group(2)) if found else None


async def test_the_session_holds_its_latest_page_and_links_the_older_ones(long_session: Any) -> None:
    http, store = long_session
    response = await http.get("/v1/sessions/long")
    seqs = [e["seq"] for e in response.json()["events"]]
    assert seqs == list(range(EVENTS - 999, EVENTS + 1)), "the latest 1000 events"
    older: list[int] = []
    link = _link(response)
    while link is not None:
        assert link[1] == "prev"
        page = await http.get(link[0])
        older = [e["seq"] for e in page.json()] + older
        link = _link(page)
    assert older + seqs == list(range(1, EVENTS + 1)), "following the links reads the rest once"
    assert ("events", None) not in store.reads, "never the whole log"


async def test_the_events_route_answers_pages_forward_with_a_next_link(long_session: Any) -> None:
    http, store = long_session
    read: list[int] = []
    url: str | None = "/v1/sessions/long/events?view=all&limit=700"
    while url is not None:
        page = await http.get(url)
        assert page.status_code == 200
        read += [e["seq"] for e in page.json()]
        link = _link(page)
        url = link[0] if link is not None else None
    assert read == list(range(1, EVENTS + 1))
    assert ("events", None) not in store.reads
    assert (await http.get("/v1/sessions/long/events?limit=0")).status_code == 422
    assert (await http.get("/v1/sessions/long/events?limit=5001")).status_code == 422


async def test_a_stream_replays_a_long_log_a_page_at_a_time(long_session: Any) -> None:
    http, store = long_session
    response = await http.get("/v1/sessions/long/events/stream", headers=SSE)
    ids = [int(line[4:]) for line in response.text.splitlines() if line.startswith("id: ")]
    assert ids == list(range(1, EVENTS + 1))
    assert ("events", None) not in store.reads
    assert {limit for kind, limit in store.reads if kind == "page"} == {500}
