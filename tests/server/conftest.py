"""Fixtures of the server tests: a real hookline server on 127.0.0.1 around the scripted agent.

The agent is in `agent.py`, the server in `live.py`, the client's side of the API in `api.py`.
`HOOKLINE_TEST_SERVER_STORE=memory` runs the suite on the in-memory store instead of SQLite.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

import httpx
import pytest

from support.postgres_db import fresh_database

from .fixtures import make_server, server, store
from .live import TOKENS, LiveServer

__all__ = ["auth_server", "client", "make_server", "postgres_url", "server", "store"]


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
