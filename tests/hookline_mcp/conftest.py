"""Fixtures of the MCP tests: a state directory, both protocol eras, toolsets on test servers, and a served agent
guarded by tokens (one per test module, on a sessions file of its own).

The servers and what they write are in `harness.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hookline.mcp import MCPToolset

from .harness import TOKENS, HttpAgentServer, HttpServer, stdio_toolset


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """Where the test server writes what it saw."""
    return tmp_path / "server"


@pytest.fixture(params=["modern", "legacy"])
def legacy(request: pytest.FixtureRequest) -> bool:
    """Both protocol eras: 2026-07-28 (`server/discover`), and the `initialize` handshake before it."""
    return bool(request.param == "legacy")


@pytest.fixture
def http_server(state: Path, legacy: bool) -> Iterator[HttpServer]:
    """The tools server on HTTP, killed after the test."""
    server = HttpServer("tools_server", state, legacy=legacy)
    yield server
    server.kill()


@pytest.fixture(params=["stdio", "http"])
def toolset_of(request: pytest.FixtureRequest, state: Path, legacy: bool) -> Iterator[Callable[..., MCPToolset]]:
    """Builds a toolset on a test server, over stdio or over HTTP (the server then runs for the test)."""
    started: list[HttpServer] = []

    def build(name: str = "tools_server", **options: Any) -> MCPToolset:
        if request.param == "stdio":
            return stdio_toolset(name, state, legacy=legacy, **options)
        server = HttpServer(name, state, legacy=legacy)
        started.append(server)
        return MCPToolset.http(server.url, **options)

    yield build
    for server in started:
        server.kill()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sessions file of the module's guarded server."""
    return tmp_path_factory.mktemp("guarded") / "sessions.db"


@pytest.fixture(scope="module")
def guarded(db: Path) -> Iterator[HttpAgentServer]:
    """The calculator served on 127.0.0.1 with alice's and bob's tokens (`TOKENS`), its sessions in `db`."""
    server = HttpAgentServer("calculator", "--db", str(db), tokens=TOKENS)
    yield server
    server.stop()
