"""`POST /v1/sessions/{id}/cancel` within one process, and with SQLite (no bus between processes)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from hookline import Agent
from hookline.agent import PromptRequest
from hookline.models import ModelRequest, ModelResponse
from hookline.server import create_app
from hookline.server.runs import RunManager, prompt_request
from hookline.sessions import InMemorySessionStore, SessionStore
from hookline.sessions.sqlite import SQLiteSessionStore

from .agent import make_agent, script
from .api import SSE, log_texts, model_called, new_session, sse_frames
from .live import TOKENS, LiveServer

pytestmark = pytest.mark.anyio

HANG_SECONDS = 120.0
CANCEL_LIMIT = 2.5  # s: the promised 2, and a slack for a loaded machine


async def hanging_script(request: ModelRequest) -> ModelResponse:
    if request.messages[-1].text.startswith("hang"):
        await asyncio.sleep(HANG_SECONDS)  # a model that never answers in time: only a cancel ends the run
    return await script(request)


def hanging_agent(store: SessionStore) -> Agent:
    return make_agent(store, model_script=hanging_script)


@pytest.fixture
async def hanging(make_server: Callable[..., LiveServer], store: SessionStore) -> AsyncIterator[httpx.AsyncClient]:
    server = make_server(hanging_agent(store))
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        yield http


async def test_cancel_stops_a_streaming_run_and_then_answers_404(hanging: httpx.AsyncClient) -> None:
    session_id = await new_session(hanging)
    frames: list[str] = []

    async def follow() -> None:
        async with hanging.stream("POST", f"/v1/sessions/{session_id}/runs", json={"prompt": "hang"},
                                  headers=SSE) as response:
            async for frame in sse_frames(response):
                frames.append("".join(p.get("text", "") for p in frame.json["parts"]))

    streaming = asyncio.create_task(follow())
    await model_called(hanging, session_id)
    asked = time.monotonic()
    response = await hanging.post(f"/v1/sessions/{session_id}/cancel")
    assert response.status_code == 202, response.text
    await asyncio.wait_for(streaming, CANCEL_LIMIT)
    assert time.monotonic() - asked < CANCEL_LIMIT
    assert frames[-1] == "run cancelled", "the run's stream ends with its last line"
    again = await hanging.post(f"/v1/sessions/{session_id}/cancel")
    assert again.status_code == 404, again.text
    nothing = f"no run is going on in session {session_id!r}, in this server process or any other"
    assert again.json() == {"error": "not_running", "message": nothing}
    assert (await log_texts(hanging, session_id))[-1] == "run cancelled"


async def test_a_cancelled_run_answers_its_json_request_with_stop_reason_cancelled(hanging: httpx.AsyncClient) -> None:
    session_id = await new_session(hanging)
    run = asyncio.create_task(hanging.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hang"}))
    await model_called(hanging, session_id)
    assert (await hanging.post(f"/v1/sessions/{session_id}/cancel")).status_code == 202
    result = (await asyncio.wait_for(run, CANCEL_LIMIT)).json()
    assert result["stop_reason"] == "cancelled"
    assert result["output"] == ""


async def test_cancel_of_a_missing_or_foreign_session_answers_404_not_found(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server(tokens=TOKENS)
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        alice = {"Authorization": "Bearer tok-alice"}
        session_id = (await http.post("/v1/sessions", json={}, headers=alice)).json()["id"]
        for path, headers in [("/v1/sessions/nope/cancel", alice),
                              (f"/v1/sessions/{session_id}/cancel", {"Authorization": "Bearer tok-bob"})]:
            response = await http.post(path, headers=headers)
            assert response.status_code == 404, response.text
            assert response.json()["error"] == "not_found"
        assert (await http.post(f"/v1/sessions/{session_id}/cancel")).status_code == 401


async def test_with_sqlite_a_run_of_another_process_answers_409_saying_where_to_cancel(tmp_path: Path) -> None:
    # Two apps, two stores on one file: two server processes sharing SQLite, as far as
    # the store knows (leases are shared through the file), but no bus between them.
    first, second = SQLiteSessionStore(tmp_path / "s.db"), SQLiteSessionStore(tmp_path / "s.db")
    running = LiveServer(create_app(hanging_agent(first), first, tokens={})).start()
    other = LiveServer(create_app(hanging_agent(second), second, tokens={})).start()
    try:
        async with httpx.AsyncClient(base_url=running.url, timeout=30) as a, \
                httpx.AsyncClient(base_url=other.url, timeout=30) as b:
            session_id = await new_session(a)
            run = asyncio.create_task(a.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hang"}))
            await model_called(b, session_id)
            refused = await b.post(f"/v1/sessions/{session_id}/cancel")
            assert refused.status_code == 409, refused.text
            assert refused.json()["error"] == "busy"
            assert "cancel it through the process running it" in refused.json()["message"]
            assert (await a.post(f"/v1/sessions/{session_id}/cancel")).status_code == 202
            assert (await asyncio.wait_for(run, CANCEL_LIMIT)).json()["stop_reason"] == "cancelled"
            assert (await b.post(f"/v1/sessions/{session_id}/cancel")).status_code == 404
    finally:
        running.stop()
        other.stop()


async def test_a_run_cancelled_before_it_has_begun_is_cancelled_as_it_begins() -> None:
    store = InMemorySessionStore()
    agent = hanging_agent(store)
    await store.create(session_id="s1")
    runs = RunManager()
    channel = runs.start("s1", prompt_request(agent, store, "s1", "default", "hang"))
    assert runs.cancel("s1"), "the run is registered, though its task has not started yet"
    result = await asyncio.wait_for(channel.outcome(), CANCEL_LIMIT)
    assert result.stop_reason == "cancelled"
    assert not runs.cancel("s1")
    await runs.aclose()


async def test_the_cancel_route_is_in_the_openapi_document(hanging: httpx.AsyncClient) -> None:
    spec = (await hanging.get("/openapi.json")).json()
    answers = spec["paths"]["/v1/sessions/{session_id}/cancel"]["post"]["responses"]
    assert {"202", "404", "409"} <= set(answers)


async def test_cancelling_twice_cancels_once_and_the_log_ends_well(hanging: httpx.AsyncClient) -> None:
    session_id = await new_session(hanging)
    run = asyncio.create_task(hanging.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hang"}))
    await model_called(hanging, session_id)
    first, second = await asyncio.gather(hanging.post(f"/v1/sessions/{session_id}/cancel"),
                                         hanging.post(f"/v1/sessions/{session_id}/cancel"))
    assert {first.status_code, second.status_code} <= {202, 404}
    assert 202 in (first.status_code, second.status_code)
    assert (await asyncio.wait_for(run, CANCEL_LIMIT)).json()["stop_reason"] == "cancelled"
    assert (await log_texts(hanging, session_id))[-1] == "run cancelled"


class CountingRequest(PromptRequest):
    """A real request that counts the cancels that reached its run."""

    cancelled = 0

    def cancel(self) -> bool:
        reached = super().cancel()
        self.cancelled += reached
        return reached


async def test_a_run_is_cancelled_once_however_often_it_is_asked() -> None:
    store = InMemorySessionStore()
    await store.create(session_id="s1")
    request = CountingRequest(hanging_agent(store), "hang").session("s1", store=store, wait=0.0, create=False)
    runs = RunManager()
    channel = runs.start("s1", request)
    await channel.started()  # the run has begun: its first event is out
    assert runs.cancel("s1")
    assert runs.cancel("s1")
    result = await asyncio.wait_for(channel.outcome(), CANCEL_LIMIT)
    assert result.stop_reason == "cancelled"
    assert request.cancelled == 1
    await runs.aclose()
