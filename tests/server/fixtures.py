"""The server fixtures the server tests and the page tests share: a real server on a real store.

Each test module's conftest imports them, so that pytest offers them there.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hookline import Agent
from hookline.server import create_app
from hookline.sessions import SessionStore
from hookline.sessions.memory import InMemorySessionStore
from hookline.sessions.sqlite import SQLiteSessionStore
from server.agent import make_agent
from server.live import LiveServer

__all__ = ["make_server", "server", "store"]


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
