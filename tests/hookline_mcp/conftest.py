"""Helpers for the MCP tests: test servers run as real subprocesses, over stdio or HTTP on 127.0.0.1.

Every server writes what it saw under a state directory (its pid, one line per tool
listing and per call), so a test checks the server's side, not the client's account of it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hookline.mcp import MCPToolset

SERVERS = Path(__file__).with_name("servers")
DEADLINE = 60.0
"""How long a test waits for a condition: generous, so a loaded machine does not flake."""


def server_args(name: str, state: Path, *, legacy: bool = False) -> list[str]:
    return [str(SERVERS / f"{name}.py"), "--state", str(state), *(["--legacy"] if legacy else [])]


def stdio_toolset(name: str, state: Path, *, legacy: bool = False, **options: Any) -> MCPToolset:
    return MCPToolset.stdio(sys.executable, server_args(name, state, legacy=legacy), **options)


def lines(state: Path, kind: str) -> list[str]:
    path = state / f"{kind}.log"
    return path.read_text().splitlines() if path.exists() else []


def server_pid(state: Path) -> int:
    return int((state / "pid").read_text())


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, dead but not yet reaped, does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until(condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.01)


async def await_until(condition: Callable[[], object], what: str) -> None:
    import asyncio

    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        await asyncio.sleep(0.01)


class HttpServer:
    """A test server on streamable HTTP, which a test can kill and start again on the same port."""

    def __init__(self, name: str, state: Path, *, legacy: bool = False) -> None:
        self.args = server_args(name, state, legacy=legacy)
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        process = subprocess.Popen([sys.executable, *self.args, "--http", "--port", str(self.port)],
                                   stdout=subprocess.PIPE)
        assert process.stdout is not None
        line = process.stdout.readline().decode()  # "PORT <n>", once it listens
        assert line.startswith("PORT "), f"the test server did not start: {line!r}"
        self.port, self.process = int(line.split()[1]), process

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(DEADLINE)
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()

    def restart(self) -> None:
        self.kill()
        self.start()


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "server"


@pytest.fixture(params=["modern", "legacy"])
def legacy(request: pytest.FixtureRequest) -> bool:
    """Both protocol eras: 2026-07-28 (`server/discover`), and the `initialize` handshake before it."""
    return bool(request.param == "legacy")


@pytest.fixture
def http_server(state: Path, legacy: bool) -> Iterator[HttpServer]:
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


def no_children_left() -> None:
    """Assert that this process has no child process still running (zombies are not running)."""
    me = str(os.getpid())
    running = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[1] == me and fields[0] != "Z":
            running.append(entry.name)
    assert not running, f"child processes still running: {running}"
