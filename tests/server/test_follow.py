"""`GET /v1/sessions/{id}/events/stream?follow=true` against a real server: open across runs, bounded, ended cleanly."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx
import pytest

from hookline import Event, TextPart
from hookline.server.hub import SessionHub
from waiting import DEADLINE, await_until

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
