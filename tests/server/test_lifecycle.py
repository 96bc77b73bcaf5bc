"""Runs against the server's lifetime: turn limits, shutdown, slow readers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
import pytest

from hookline import Agent, Event, TextPart
from hookline.server.hub import SessionHub
from hookline.sessions import SessionStore

from .agent import WordStreamingModel, add, script
from .api import model_called, new_session
from .live import LiveServer

pytestmark = pytest.mark.anyio


async def test_out_of_turns_answers_the_partial_result(
    make_server: Callable[..., LiveServer], store: SessionStore
) -> None:
    agent = Agent("assistant", model=WordStreamingModel(script), tools=[add], max_turns=1, session_store=store)
    server = make_server(agent=agent)
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        session_id = await new_session(http)
        response = await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "add them"})
    assert response.status_code == 200
    result = response.json()
    assert result["stop_reason"] == "max_turns"
    assert result["usage"]["model_calls"] == 1


async def test_shutdown_lets_a_running_run_finish_and_record(
    make_server: Callable[..., LiveServer], store: SessionStore
) -> None:
    server = make_server()
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        session_id = await new_session(http)
        request = asyncio.ensure_future(http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "slow"}))
        await model_called(http, session_id)
        await asyncio.to_thread(server.stop)  # while the model is still thinking
        assert (await request).status_code == 200, "the client got its answer before the server stopped"
    events = await store.events(session_id, view="all")
    assert [e.text for e in events if e.kind == "message"] == ["slow", "slow answer"]
    assert events[-1].text == "run completed"
    await store.aclose()


def _event(seq: int) -> Event:
    return Event(author="a", kind="status", source="agent", parts=[TextPart(text=str(seq))], seq=seq)


def _running_hub(limit: int = 100) -> SessionHub:
    hub = SessionHub("s", limit=limit, on_idle=lambda hub: None)
    hub.run_started()
    return hub


async def test_a_reader_too_far_behind_is_cut_off_not_buffered_forever() -> None:
    hub = _running_hub(limit=3)
    slow, fast = hub.subscribe(), hub.subscribe()
    for seq in range(1, 6):
        hub.publish(_event(seq))
        got = await fast.get(1)
        assert got is not None
        assert got.seq == seq
    assert slow.lagged
    assert [(await slow.get(1)).seq for _ in range(3)] == [1, 2, 3]  # type: ignore[union-attr]
    assert await slow.get(1) is None, "its stream ends; the client reconnects with Last-Event-ID"
    hub.run_ended()
    assert await fast.get(1) is None


async def test_a_subscription_after_the_end_is_closed_at_once() -> None:
    hub = _running_hub()
    hub.run_ended()
    assert await hub.subscribe().get(1) is None
