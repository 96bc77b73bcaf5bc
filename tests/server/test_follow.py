"""`GET /v1/sessions/{id}/events/stream?follow=true` against a real server: open across runs, bounded, ended cleanly."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from hookline import Event, TextPart
from hookline.server.hub import SessionHub
from hookline.server.sse import replay
from support.waiting import DEADLINE, await_until

from .api import SSE, new_session
from .live import LiveServer

pytestmark = pytest.mark.anyio


async def _lines(response: httpx.Response, into: list[str]) -> None:
    async for line in response.aiter_lines():
        into.append(line)


async def test_a_follower_gets_its_headers_at_once_then_keepalives_while_nothing_runs(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server(keepalive=0.1)
    async with httpx.AsyncClient(base_url=server.url, timeout=DEADLINE) as http:
        session_id = await new_session(http)
        asked = time.monotonic()
        async with http.stream("GET", f"/v1/sessions/{session_id}/events/stream", params={"follow": "true"},
                               headers=SSE) as response:
            assert response.status_code == 200
            assert time.monotonic() - asked < DEADLINE / 2
            lines: list[str] = []
            reading = asyncio.create_task(_lines(response, lines))
            await await_until(lambda: lines.count(": keepalive") >= 3, "three keepalives")
            assert not reading.done(), "the stream stays open with no run going on"
            reading.cancel()
            await asyncio.gather(reading, return_exceptions=True)


async def test_a_reader_without_follow_of_an_idle_session_ends_after_the_stored_events(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server()
    async with httpx.AsyncClient(base_url=server.url, timeout=DEADLINE) as http:
        session_id = await new_session(http)
        await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hello"})
        response = await http.get(f"/v1/sessions/{session_id}/events/stream", headers=SSE)
        assert response.status_code == 200
        assert response.text.count("event: message") == 2


def _status(seq: int) -> Event:
    return Event(author="a", kind="status", source="agent", parts=[TextPart(text=str(seq))], seq=seq)


async def test_a_follower_too_far_behind_is_cut_off_not_buffered_across_runs() -> None:
    hub = SessionHub("s", limit=5, on_idle=lambda hub: None)
    slow = hub.subscribe(follow=True)
    for run in range(3):
        hub.run_started()
        for seq in range(run * 3 + 1, run * 3 + 4):
            hub.publish(_status(seq))
        hub.run_ended()
    assert slow.lagged, "a follower that read nothing over three runs is cut off"
    assert [(await slow.get(1)).seq for _ in range(5)] == [1, 2, 3, 4, 5]  # type: ignore[union-attr]
    assert await slow.get(1) is None, "its stream ends; the client reconnects with Last-Event-ID"
    assert hub.readers == 0


async def test_a_late_reader_whose_catch_up_holds_the_answer_gets_none_of_its_deltas_after_it() -> None:
    # The reader subscribes while the answer streams; one more delta is queued for it, the
    # answer is stored, and its catch-up reads the log with the answer in it. Seen in the
    # scale-out bench: that queued delta went out after the whole stored answer.
    hub = SessionHub("s", limit=100, on_idle=lambda hub: None)
    hub.run_started()
    hub.publish(Event.text_delta("a", "Hel", answer_id="e2"))
    subscription = hub.subscribe()
    hub.publish(Event.text_delta("a", "lo", answer_id="e2"))
    answer = Event(id="e2", seq=2, author="a", kind="message", role="assistant", parts=[TextPart(text="Hello")])
    hub.publish(answer)
    hub.run_ended()

    async def log_pages() -> AsyncIterator[list[Event]]:
        yield [answer]

    frames = [json.loads(f.split(b"data: ", 1)[1]) async for f in replay(log_pages(), subscription, after_seq=1)]

    assert [(f["kind"], f["seq"]) for f in frames] == [("message", 2)], frames
