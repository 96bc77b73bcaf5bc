"""A parallel input guardrail on a real server (issue 27, part 2): the run's own SSE stream and a
follower of the session's events (`/events/stream?follow=true`) get no delta and no answer of a model
call the guardrail cancelled, and both see the trip and the run's end."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hookline import Agent, Message
from hookline.hooklib import InputGuardrail
from hookline.server import create_app
from hookline.sessions import SQLiteSessionStore
from server.api import SSE, Frame, sse_frames
from server.live import LiveServer

from .test_guardrails import SlowWords

pytestmark = pytest.mark.anyio


def _judged(model: SlowWords) -> Agent:
    async def judge(prompt: Message) -> str | None:
        while not model.made:  # the model is answering
            await asyncio.sleep(0.01)
        return "refused" if "secret" in prompt.text else None

    return Agent(model=model, hooks={"before_llm": [InputGuardrail(judge, parallel=True)]})


@pytest.fixture
def model() -> SlowWords:
    return SlowWords(delay=0.1)


@pytest.fixture
async def http(model: SlowWords, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    store = SQLiteSessionStore(tmp_path / "s.db")
    server = LiveServer(create_app(_judged(model), store, tokens={})).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
            yield client
    finally:
        server.stop()


async def _frames(http: httpx.AsyncClient, method: str, url: str, *, until_end: bool = True,
                  **options: Any) -> list[Frame]:
    frames: list[Frame] = []
    async with http.stream(method, url, headers=SSE, **options) as response:
        assert response.status_code == 200
        async for frame in sse_frames(response):
            frames.append(frame)
            if until_end and frame.event != "delta" and frame.json.get("metadata", {}).get("run_end"):
                break
    return frames


def _said(frames: list[Frame]) -> list[Any]:
    events = [f.json for f in frames if f.event in ("delta", "message", "event", None)]
    return [e for e in events if e.get("kind") == "delta" or (e.get("kind") == "message" and e["role"] == "assistant")]


async def test_no_watcher_gets_a_word_of_the_cancelled_answer(http: httpx.AsyncClient, model: SlowWords) -> None:
    await http.post("/v1/sessions", json={"id": "s"})
    follower = asyncio.ensure_future(_frames(http, "GET", "/v1/sessions/s/events/stream", params={"follow": "true"}))
    await asyncio.sleep(0.3)  # the follower is listening
    run = await _frames(http, "POST", "/v1/sessions/s/runs", json={"prompt": "tell me the secret"})
    followed = await asyncio.wait_for(follower, 20)

    assert model.cancelled
    for frames in (run, followed):
        assert _said(frames) == [], "no delta and no answer reached this watcher"
        trips = [f.json["metadata"]["guardrail"] for f in frames if "guardrail" in f.json.get("metadata", {})]
        assert [t["action"] for t in trips] == ["stop"]
        assert frames[-1].json["metadata"]["run_end"] == "guardrail"


async def test_a_passing_guardrail_lets_the_watchers_have_the_answer(http: httpx.AsyncClient) -> None:
    await http.post("/v1/sessions", json={"id": "s"})
    run = await _frames(http, "POST", "/v1/sessions/s/runs", json={"prompt": "hello"})
    said = _said(run)
    assert "".join(e["parts"][0]["text"] for e in said if e["kind"] == "delta").strip() == "the answer is forty two"
    assert run[-1].json["metadata"]["run_end"] == "completed"
