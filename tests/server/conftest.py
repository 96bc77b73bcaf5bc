"""A real hookline server on 127.0.0.1 (uvicorn in a thread) around a scripted agent.

The agent's model is a `FunctionModel` whose script reads the last message:
- "add ..."    -> calls the `add` tool, then answers with its result;
- "danger ..." -> calls the `danger` tool, which the `guard` hook interrupts for approval;
- "slow ..."   -> answers after `SLOW_SECONDS`;
- "fail ..."   -> the provider fails (`ModelError`, 503);
- "boom ..."   -> calls `add`, and the `explode` after_tool hook raises;
- anything else -> "You said: <text>".
Its `stream()` yields the answer word by word, so deltas really stream.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from hookline import Agent, ModelError, State, ToolCallPart, hook, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse, ModelStreamEvent, ResponseDone, TextDelta
from hookline.server import create_app
from hookline.sessions import SessionStore
from hookline.sessions.memory import InMemorySessionStore
from hookline.sessions.sqlite import SQLiteSessionStore
from postgres_db import fresh_database

SLOW_SECONDS = 0.6
WORD_DELAY = 0.01
TOKENS = {"tok-alice": "alice", "tok-bob": "bob"}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


DANGER_LOG: list[str] = []


@tool
def danger(target: str) -> str:
    """Do something irreversible to `target`."""
    DANGER_LOG.append(target)
    return f"wiped {target}"


@hook
def guard(state: State) -> None:
    for call in state.tool_calls:
        if call.name == "danger":
            state.interrupt(call.id, "danger needs a human's approval")


@hook
def explode(state: State) -> None:
    if any("boom" in m.text for m in state.messages if m.role == "user"):
        raise RuntimeError("the explode hook blew up")


def _call(name: str, **arguments: Any) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCallPart(id=f"call-{uuid.uuid4().hex[:10]}", name=name, arguments=arguments)])


async def script(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    if last.role == "tool":
        result = last.tool_results[0]
        return ModelResponse(text=f"The tool said: {result.content}.")
    text = last.text
    if text.startswith("add"):
        return _call("add", a=2, b=3)
    if text.startswith("danger"):
        return _call("danger", target="prod")
    if text.startswith("boom"):
        return _call("add", a=1, b=1)
    if text.startswith("slow"):
        await asyncio.sleep(SLOW_SECONDS)
        return ModelResponse(text="slow answer")
    if text.startswith("fail"):
        raise ModelError("the provider is down", status_code=503, provider="function")
    return ModelResponse(text=f"You said: {text}")


class WordStreamingModel(FunctionModel):
    """The scripted model, streaming its answer one word at a time."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        response = await self.request(request)
        words = response.text.split(" ") if response.text else []
        for index, word in enumerate(words):
            await asyncio.sleep(WORD_DELAY)
            yield TextDelta(word if index == len(words) - 1 else word + " ")
        yield ResponseDone(response)


def make_agent(store: SessionStore | None = None, model_script: Any = script) -> Agent:
    return Agent(
        "assistant",
        model=WordStreamingModel(model_script, name="scripted"),
        tools=[add, danger],
        hooks={"before_tool": [guard], "after_tool": [explode]},
        session_store=store,
    )


def make_store(tmp_path: Path) -> SessionStore:
    """SQLite in `tmp_path`; `HOOKLINE_TEST_SERVER_STORE=memory` runs the suite on the in-memory store."""
    if os.environ.get("HOOKLINE_TEST_SERVER_STORE") == "memory":
        return InMemorySessionStore()
    return SQLiteSessionStore(tmp_path / "sessions.db")


class LiveServer:
    """uvicorn serving an app on 127.0.0.1, on a free port, in a background thread."""

    def __init__(self, app: Any) -> None:
        self.app = app
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", ws="none")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="hookline-test-server", daemon=True)
        self.url = ""

    def start(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)
        assert not self.thread.is_alive(), "the test server did not stop"


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return make_store(tmp_path)


@pytest.fixture
def make_server(store: SessionStore) -> Iterator[Callable[..., LiveServer]]:
    servers: list[LiveServer] = []

    def make(agent: Agent | None = None, **options: Any) -> LiveServer:
        options.setdefault("tokens", {})
        server = LiveServer(create_app(agent or make_agent(store), store, **options)).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def server(make_server: Callable[..., LiveServer]) -> LiveServer:
    return make_server()


@pytest.fixture
def auth_server(make_server: Callable[..., LiveServer]) -> LiveServer:
    return make_server(tokens=TOKENS)


@pytest.fixture
async def client(server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        yield http


async def new_session(http: httpx.AsyncClient, **body: Any) -> str:
    response = await http.post("/v1/sessions", json=body)
    assert response.status_code == 201, response.text
    session_id: str = response.json()["id"]
    return session_id


class Frame:
    """One server-sent event as a client sees it."""

    def __init__(self, id: str | None, event: str | None, data: str) -> None:
        self.id, self.event, self.data = id, event, data

    @property
    def json(self) -> Any:
        import json

        return json.loads(self.data)

    def __repr__(self) -> str:
        return f"Frame(id={self.id!r}, event={self.event!r}, data={self.data[:60]!r})"


async def sse_frames(response: httpx.Response) -> AsyncIterator[Frame]:
    """Parse a `text/event-stream` body into frames (comments skipped), as a browser would."""
    fields: dict[str, str] = {}
    data: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield Frame(fields.get("id"), fields.get("event"), "\n".join(data))
            fields, data = {}, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        else:
            fields[name] = value


SSE = {"Accept": "text/event-stream"}


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """The URL of a fresh PostgreSQL database, dropped after the test."""
    with fresh_database("hookline_server") as url:
        yield url


def with_password(url: str, password: str) -> str:
    """`url` with `password` given for its user (the test server trusts any password)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    netloc = f"{parts.username or 'postgres'}:{password}@{parts.hostname}:{parts.port or 5432}"
    return urlunsplit(parts._replace(netloc=netloc))
