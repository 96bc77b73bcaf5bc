"""Fixtures of the MCP tests: a state directory, both protocol eras, and toolsets on test servers.

The servers and what they write are in `harness.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hookline.mcp import MCPToolset

from .harness import HttpServer, stdio_toolset


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
