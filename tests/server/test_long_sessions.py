"""A long session is read a page at a time: the routes answer pages with a cursor, and never read the log whole.

The store is a real SQLite file whose reads are counted (a subclass that records each call): the
session, its events and its stream read only bounded pages, whatever the log's length.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from hookline import Event, TextPart
from hookline.server import create_app, log_window
from hookline.server.background import RUN_KEY, new_run_id
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


@asynccontextmanager
async def served(store: CountingStore) -> AsyncIterator[httpx.AsyncClient]:
    """A client of a server on `store`, whose reads are counted from now on."""
    server = LiveServer(create_app(make_agent(store), store, tokens={})).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            store.reads.clear()
            yield http
    finally:
        server.stop()


@pytest.fixture
async def long_session(tmp_path: Path) -> Any:
    store = CountingStore(tmp_path / "long.db")
    store.reads = []
    session = await store.create(session_id="long")
    for start in range(0, EVENTS, 500):
        await store.append_events(session.id, [
            Event(author="user", kind="message", role="user", parts=[TextPart(text=f"m{i}")])
            for i in range(start + 1, min(start + 500, EVENTS) + 1)])
    async with served(store) as http:
        yield http, store


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


# -- the inspector: timelines, traces and model calls read a bounded window --------------------


def _runs(count: int) -> list[Event]:
    """`count` whole runs: a prompt, the model's call, its answer and the run's end."""
    events = []
    for number in range(count):
        events += [
            Event(author="user", kind="message", role="user", parts=[TextPart(text=f"prompt {number}")]),
            Event.status("assistant", "agent", "turn 1: calling model"),
            Event(author="assistant", kind="message", role="assistant", parts=[TextPart(text=f"answer {number}")]),
            Event.status("assistant", "agent", "run completed", run_end="completed"),
        ]
    return events


@pytest.fixture
async def many_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(log_window, "WINDOW", 101)  # 25 runs and one event: the window starts mid-run
    store = CountingStore(tmp_path / "runs.db")
    store.reads = []
    await store.create(session_id="runs")
    await store.append_events("runs", _runs(100))
    async with served(store) as http:
        yield http, store


async def test_timelines_and_traces_read_the_latest_window_from_its_first_whole_run(many_runs: Any) -> None:
    http, store = many_runs
    timeline = (await http.get("/v1/sessions/runs/timeline")).json()
    traces = (await http.get("/v1/sessions/runs/traces")).json()
    assert ("events", None) not in store.reads, "never the whole log"
    assert sum(limit or 0 for kind, limit in store.reads if kind == "page") == 2 * 102, "the window and one before"
    assert timeline["complete"] is False
    assert traces["complete"] is False
    assert [r["title"] for r in timeline["runs"]] == [f"prompt {n}" for n in range(75, 100)], "the cut run left out"
    assert [p["title"] for p in traces["prompts"]] == [f"prompt {n}" for n in range(75, 100)]
    assert timeline["runs"][0]["first_seq"] == 4 * 75 + 1


async def test_a_model_call_is_rebuilt_from_the_window_before_it_and_says_so(many_runs: Any) -> None:
    http, store = many_runs
    last_call = 4 * 99 + 2  # the last run's "calling model"
    call = (await http.get(f"/v1/sessions/runs/model-calls/{last_call}")).json()
    assert ("events", None) not in store.reads
    texts = [m["parts"][0]["text"] for m in call["request"]["messages"] if m["role"] in ("user", "assistant")]
    assert texts[-1] == "prompt 99"
    assert len(texts) < 101
    assert any(note.startswith(f"messages: from event {last_call - 101} on only") for note in call["notes"])
    assert call["response"]["parts"][0]["text"] == "answer 99"
    early = (await http.get("/v1/sessions/runs/model-calls/2")).json()
    assert not any(note.startswith("messages: from event") for note in early["notes"]), "the window holds the start"


async def test_a_short_log_is_read_whole_and_says_it_is_complete(long_session: Any) -> None:
    http, store = long_session
    assert (await http.get("/v1/sessions/long/timeline")).json()["complete"] is True
    assert ("events", None) not in store.reads


async def test_a_sessions_children_are_read_a_page_at_a_time(long_session: Any) -> None:
    http, store = long_session
    await store.append_events("long", [Event.status("lead", "agent", "researcher: runs in session long.c1",
                                                    agent="researcher", agent_call_id="c1",
                                                    child_session_id="long.c1")])
    store.reads.clear()
    children = (await http.get("/v1/sessions/long/children")).json()
    assert [(c["session_id"], c["call_id"], c["agent"]) for c in children] == [("long.c1", "c1", "researcher")]
    assert ("events", None) not in store.reads
    assert {limit for kind, limit in store.reads if kind == "page"} == {1000}


async def test_a_run_of_another_process_is_read_from_the_log_a_page_at_a_time(long_session: Any) -> None:
    http, store = long_session
    run_id = new_run_id("long")
    await store.append_events("long", [
        Event.status("assistant", "agent", "run completed", run_end="completed", **{RUN_KEY: run_id})])
    store.reads.clear()
    info = (await http.get(f"/v1/runs/{run_id}")).json()
    assert (info["run_id"], info["state"]) == (run_id, "completed")
    assert ("events", None) not in store.reads
    assert {limit for kind, limit in store.reads if kind == "page"} == {1000}
