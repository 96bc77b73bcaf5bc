"""Fixtures of the A2A tests: hookline servers (in process, on SQLite) and a plain SDK server.

The shared parts are in `harness.py`, the served agent in `agents.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hookline.server import create_app
from hookline.sessions import SessionStore
from hookline.sessions.sqlite import SQLiteSessionStore
from server.live import LiveServer

from .agents import make_agent
from .harness import PlainServer

TOKENS = {"tok-alice": "alice", "tok-bob": "bob"}


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SQLiteSessionStore(tmp_path / "sessions.db")


@pytest.fixture
def make_server(store: SessionStore) -> Iterator[Callable[..., LiveServer]]:
    """Starts hookline servers of the test agent on `store`; stops them after the test."""
    servers: list[LiveServer] = []

    def make(**options: Any) -> LiveServer:
        options.setdefault("tokens", {})
        agent = make_agent(store, tools=options.pop("tools", None))
        server = LiveServer(create_app(agent, store, **options)).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def server(make_server: Callable[..., LiveServer]) -> LiveServer:
    """A hookline server without tokens."""
    return make_server()


@pytest.fixture
def auth_server(make_server: Callable[..., LiveServer]) -> LiveServer:
    """A hookline server that wants one of `TOKENS`."""
    return make_server(tokens=TOKENS)


@pytest.fixture
def plain() -> Iterator[PlainServer]:
    """A plain a2a-sdk server (no hookline in it)."""
    server = PlainServer()
    yield server
    server.stop()
