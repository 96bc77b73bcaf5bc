"""The MCP test servers, run as real subprocesses over stdio or HTTP on 127.0.0.1, and what they wrote.

Every server writes what it saw under a state directory (its pid, one line per tool
listing and per call), so a test checks the server's side, not the client's account of it.
`HttpAgentServer` is the other side: an agent served by `python -m hookline.mcp --http`.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from hookline.mcp import MCPToolset
from support.waiting import DEADLINE

SERVERS = Path(__file__).with_name("servers")
AGENTS = Path(__file__).with_name("agents.py")
SERVE = [sys.executable, "-m", "hookline.mcp"]
TOKENS = "alice-secret:alice,bob-secret:bob"
"""The `HOOKLINE_TOKENS` of the agent servers that require bearer tokens: alice's and bob's."""


def server_args(name: str, state: Path, *, legacy: bool = False, extra: tuple[str, ...] = ()) -> list[str]:
    """The arguments that run the test server `name`, writing under `state` (`extra`: more options)."""
    return [str(SERVERS / f"{name}.py"), "--state", str(state), *(["--legacy"] if legacy else []), *extra]


def stdio_toolset(name: str, state: Path, *, legacy: bool = False, **options: Any) -> MCPToolset:
    """A toolset on the test server `name`, over stdio."""
    return MCPToolset.stdio(sys.executable, server_args(name, state, legacy=legacy), **options)


def lines(state: Path, kind: str) -> list[str]:
    """The lines the server wrote to its `kind` log ("lists" or "calls"), none if it wrote none."""
    path = state / f"{kind}.log"
    return path.read_text().splitlines() if path.exists() else []


def server_pid(state: Path) -> int:
    """The pid the server wrote when it started."""
    return int((state / "pid").read_text())


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, dead but not yet reaped, does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class HttpServer:
    """A test server on streamable HTTP, which a test can kill and start again on the same port."""

    def __init__(self, name: str, state: Path, *, legacy: bool = False, extra: tuple[str, ...] = ()) -> None:
        self.args = server_args(name, state, legacy=legacy, extra=extra)
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


class HttpAgentServer:
    """`python -m hookline.mcp agents.py:AGENT --http --port 0 ...`, reached at `url` on 127.0.0.1.

    Its port is read from the line it prints on stderr. `tokens` is its `HOOKLINE_TOKENS`
    (None: no tokens, whatever the tests' environment holds).
    """

    def __init__(self, agent: str, *options: str, tokens: str | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HOOKLINE_TOKENS")}
        if tokens is not None:
            env["HOOKLINE_TOKENS"] = tokens
        self.process = subprocess.Popen([*SERVE, f"{AGENTS}:{agent}", "--http", "--port", "0", *options],
                                        stderr=subprocess.PIPE, text=True, env=env)
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        found = re.search(r"on http://\S+:(\d+)/mcp", line)
        if not found:
            self.stop()
            raise AssertionError(f"the server did not start: {line!r}")
        self.port = int(found.group(1))
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> float:
        """Ctrl-C it; return how long it took to exit."""
        started = time.monotonic()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(DEADLINE)
        if self.process.stderr is not None:
            self.process.stderr.close()
        return time.monotonic() - started


@asynccontextmanager
async def connect(url: str, token: str | None = None, *, mode: Any = "auto", **options: Any) -> AsyncIterator[Client]:
    """The `mcp` SDK's client on `url`, sending `Authorization: Bearer <token>` when a token is given.

    `options` go to `Client` (e.g. `extensions`).
    """
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    timeout = httpx2.Timeout(30.0, read=None)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http, \
            Client(streamable_http_client(url, http_client=http), mode=mode, **options) as client:
        yield client


def text(result: types.CallToolResult) -> str:
    """The text blocks of a tool result, joined."""
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))
