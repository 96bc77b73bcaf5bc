"""Fixtures of the server tests: a real hookline server on 127.0.0.1 around the scripted agent.

The agent is in `agent.py`, the server in `live.py`, the client's side of the API in `api.py`.
`HOOKLINE_TEST_SERVER_STORE=memory` runs the suite on the in-memory store instead of SQLite.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hookline import Agent
from hookline.server import create_app
from hookline.sessions import SessionStore
from hookline.sessions.memory import InMemorySessionStore
from hookline.sessions.sqlite import SQLiteSessionStore
from postgres_db import fresh_database

from .agent import make_agent
from .live import TOKENS, LiveServer


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    """The store the server keeps its sessions in."""
    if os.environ.get("HOOKLINE_TEST_SERVER_STORE") == "memory":
        return InMemorySessionStore()
    return SQLiteSessionStore(tmp_path / "sessions.db")


@pytest.fixture
def make_server(store: SessionStore) -> Iterator[Callable[..., LiveServer]]:
    """Starts servers on `store` (the scripted agent unless given another); stops them after the test."""
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
    """A server without authentication."""
    return make_server()


@pytest.fixture
def auth_server(make_server: Callable[..., LiveServer]) -> LiveServer:
    """A server that wants one of `TOKENS`."""
    return make_server(tokens=TOKENS)


@pytest.fixture
async def client(server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of `server`."""
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        yield http


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """The URL of a fresh PostgreSQL database, dropped after the test."""
    with fresh_database("hookline_server") as url:
        yield url
