"""The light path (`hookline.server.hot_routes`): what it answers itself, and what it hands on untouched.

The whole server suite runs through it (it sits in every app); these tests pin which
requests it takes: an app behind it records every request that reaches it, with its body.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send

from hookline.server import create_app
from hookline.server.auth import AuthMiddleware
from hookline.server.hot_routes import HotRoutes
from hookline.sessions import InMemorySessionStore

from .agent import make_agent

pytestmark = pytest.mark.anyio


class Behind:
    """The app behind the light path: answers 299 and keeps each request's path and body."""

    def __init__(self) -> None:
        self.reached: list[tuple[str, bytes]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = b""
        while True:
            message: Message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        self.reached.append((scope["path"], body))
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b""})


@pytest.fixture
async def light() -> AsyncIterator[tuple[httpx.AsyncClient, Behind]]:
    store = InMemorySessionStore()
    app = create_app(make_agent(store), store, tokens={})
    behind = Behind()
    asgi: Any = AuthMiddleware(HotRoutes(behind, app.state.hookline), tokens={})  # as the app orders them
    async with app.router.lifespan_context(app), httpx.AsyncClient(
        transport=httpx.ASGITransport(asgi), base_url="http://test"
    ) as http:
        yield http, behind


async def test_it_creates_sessions_and_runs_them_itself(light: tuple[httpx.AsyncClient, Behind]) -> None:
    http, behind = light
    created = await http.post("/v1/sessions", json={"id": "s1", "state": {"k": 1}})
    assert (created.status_code, created.headers["location"], created.json()["state"]) == (201, "/v1/sessions/s1",
                                                                                         {"k": 1})
    assert (await http.post("/v1/sessions", content=b"")).status_code == 201, "no body: a fresh session"
    ran = await http.post("/v1/sessions/s1/runs", json={"prompt": "hello"})
    assert (ran.status_code, ran.json()["output"]) == (200, "You said: hello")
    taken = await http.post("/v1/sessions", json={"id": "s1"})
    assert (taken.status_code, taken.json()["error"]) == (409, "exists")
    missing = await http.post("/v1/sessions/nope/runs", json={"prompt": "hello"})
    assert (missing.status_code, missing.json()["error"]) == (404, "not_found")
    assert behind.reached == []


async def test_it_streams_a_sessions_events_after_the_last_event_id_itself(
    light: tuple[httpx.AsyncClient, Behind],
) -> None:
    http, behind = light
    await http.post("/v1/sessions", json={"id": "s1"})
    await http.post("/v1/sessions/s1/runs", json={"prompt": "hello"})
    every = await http.get("/v1/sessions/s1/events/stream")
    ids = [int(line[4:]) for line in every.text.splitlines() if line.startswith("id: ")]
    assert every.status_code == 200
    assert every.headers["content-type"].startswith("text/event-stream")
    assert len(ids) > 2
    assert ids == sorted(ids)
    after = await http.get("/v1/sessions/s1/events/stream", headers={"Last-Event-ID": str(ids[1])})
    assert [int(line[4:]) for line in after.text.splitlines() if line.startswith("id: ")] == ids[2:]
    missing = await http.get("/v1/sessions/nope/events/stream")
    assert (missing.status_code, missing.json()["error"]) == (404, "not_found")
    assert behind.reached == []


@pytest.mark.parametrize(("query", "last_event_id"), [
    ("?follow=true", None),  # a query: FastAPI reads it
    ("?after_seq=1", None),
    ("", "-1"),  # FastAPI's 422 says what is wrong
    ("", "1.5"),
    ("", str(2**62 + 1)),
])
async def test_a_stream_it_is_unsure_of_goes_on_untouched(
    light: tuple[httpx.AsyncClient, Behind], query: str, last_event_id: str | None
) -> None:
    http, behind = light
    headers = {} if last_event_id is None else {"Last-Event-ID": last_event_id}
    answer = await http.get(f"/v1/sessions/s1/events/stream{query}", headers=headers)
    assert answer.status_code == 299
    assert behind.reached == [("/v1/sessions/s1/events/stream", b"")]


@pytest.mark.parametrize(("path", "content", "headers"), [
    ("/v1/sessions", b'{"id": "bad id!"}', {}),  # not the schema: FastAPI's 422 lists the problems
    ("/v1/sessions", b"{not json", {}),
    ("/v1/sessions/s1/runs", b'{"prompt": "hi", "extra": 1}', {}),
    ("/v1/sessions/s1/runs", b"prompt=hi", {"content-type": "application/x-www-form-urlencoded"}),
    ("/v1/sessions/s1/events", b"", {}),  # another route
])
async def test_what_it_is_unsure_of_goes_on_untouched(
    light: tuple[httpx.AsyncClient, Behind], path: str, content: bytes, headers: dict[str, str]
) -> None:
    http, behind = light
    answer = await http.post(path, content=content, headers={"content-type": "application/json", **headers})
    assert answer.status_code == 299
    assert behind.reached == [(path, content)], "the body replayed as it came"


async def test_a_chunked_body_goes_on_untouched(light: tuple[httpx.AsyncClient, Behind]) -> None:
    http, behind = light

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"prompt": '
        yield b'"hi"}'

    answer = await http.post("/v1/sessions/s1/runs", content=chunks(), headers={"content-type": "application/json"})
    assert answer.status_code == 299
    assert behind.reached == [("/v1/sessions/s1/runs", b'{"prompt": "hi"}')]
