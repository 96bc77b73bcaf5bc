"""`hookline.mcp.server`: an agent served as an MCP tool, checked with the `mcp` SDK's own client.

The server runs as a subprocess (`python -m hookline.mcp tests/.../agents.py:NAME`),
over stdio and over streamable HTTP on 127.0.0.1 (with bearer tokens: test_server_auth.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from support.waiting import DEADLINE

from .harness import AGENTS, SERVE, HttpAgentServer, connect, text

pytestmark = pytest.mark.anyio


def stdio_server(agent: str, *options: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "HOOKLINE_MODEL")}
    return StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], f"{AGENTS}:{agent}", *options], env=env)


class Progress:
    """Keeps the progress notifications of one call."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.steps: list[float] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.steps.append(progress)
        self.messages.append(message or "")


async def test_the_agent_is_one_tool_whose_progress_carries_the_status_lines() -> None:
    async with Client(stdio_server("calculator")) as client:
        listing = await client.list_tools()
        assert [t.name for t in listing.tools] == ["calculator"]
        schema = listing.tools[0].input_schema
        assert set(schema["properties"]) == {"prompt", "session_id"}
        assert schema["required"] == ["prompt"]
        progress = Progress()
        result = await client.call_tool("calculator", {"prompt": "2+3?"}, progress_callback=progress)
    assert not result.is_error
    assert text(result) == "the sum is 5 (prompt 1 of this conversation)"
    assert "running add(a=2, b=3)" in progress.messages
    assert "add returned 5" in progress.messages
    assert progress.messages[0] == "turn 1: calling model"
    assert progress.messages[-1] == "run completed"
    assert progress.steps == sorted(progress.steps)
    assert len(set(progress.steps)) == len(progress.steps)


async def test_the_hookline_mcp_command_serves_over_stdio() -> None:
    env = {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}
    command = StdioServerParameters(command=sys.executable, args=["-m", "hookline", "mcp", f"{AGENTS}:calculator"],
                                    env=env)
    async with Client(command) as client:
        result = await client.call_tool("calculator", {"prompt": "2+3?"})
    assert text(result) == "the sum is 5 (prompt 1 of this conversation)"


async def test_a_session_id_carries_the_conversation_over(tmp_path: Path) -> None:
    async with Client(stdio_server("calculator", "--db", str(tmp_path / "sessions.db"))) as client:
        first = await client.call_tool("calculator", {"prompt": "2+3?", "session_id": "s-1"})
        second = await client.call_tool("calculator", {"prompt": "and again?", "session_id": "s-1"})
        alone = await client.call_tool("calculator", {"prompt": "once"})
    assert text(first).endswith("(prompt 1 of this conversation)")
    assert text(second).endswith("(prompt 2 of this conversation)")
    assert text(alone).endswith("(prompt 1 of this conversation)")


async def test_a_failed_run_and_a_bad_call_are_error_results() -> None:
    async with Client(stdio_server("broken")) as client:
        failed = await client.call_tool("broken", {"prompt": "hi"})
        empty = await client.call_tool("broken", {"prompt": "  "})
        with pytest.raises(MCPError, match="this server has one tool: 'broken'"):
            await client.call_tool("calculator", {"prompt": "hi"})
    assert failed.is_error
    assert "the run failed" in text(failed)
    assert "the model is down" in text(failed)
    assert empty.is_error
    assert "prompt must be a non-empty string" in text(empty)


@pytest.fixture
def http_agent() -> Iterator[HttpAgentServer]:
    server = HttpAgentServer("calculator")
    yield server
    server.stop()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_over_http_progress_arrives_and_the_answer_returns(http_agent: HttpAgentServer, mode: Any) -> None:
    async with Client(http_agent.url, mode=mode) as client:
        progress = Progress()
        result = await client.call_tool("calculator", {"prompt": "2+3?"}, progress_callback=progress)
        era = client.protocol_version
    assert era == ("2026-07-28" if mode == "auto" else "2025-11-25"), "both eras on one endpoint, the new one first"
    assert text(result) == "the sum is 5 (prompt 1 of this conversation)"
    assert "running add(a=2, b=3)" in progress.messages


@pytest.mark.parametrize("exposed", [False, True], ids=["loopback", "beyond-loopback-with-tokens"])
async def test_the_http_server_stops_on_ctrl_c_while_a_client_is_connected(exposed: bool) -> None:
    server = (HttpAgentServer("calculator", "--host", "0.0.0.0", tokens="s3cret:alice") if exposed
              else HttpAgentServer("calculator"))
    try:
        # legacy: the client keeps a session, with its GET stream open, while the server stops
        async with connect(server.url, "s3cret" if exposed else None, mode="legacy") as client:
            result = await client.call_tool("calculator", {"prompt": "2+3?"})
            took = await anyio.to_thread.run_sync(server.stop)
    finally:
        server.stop()
    assert text(result) == "the sum is 5 (prompt 1 of this conversation)"
    assert took < 5.0
    assert server.process.returncode in (0, -signal.SIGINT, 130)


def test_http_beyond_loopback_without_tokens_is_refused() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOOKLINE_TOKENS")}
    out = subprocess.run([*SERVE, f"{AGENTS}:calculator", "--http", "--host", "0.0.0.0"], capture_output=True,
                         text=True, timeout=DEADLINE, check=False, env=env)
    assert out.returncode == 2
    assert "refusing to serve MCP on 0.0.0.0 without authentication" in out.stderr
    assert "HOOKLINE_TOKENS=token:user" in out.stderr
    assert "--host 127.0.0.1" in out.stderr
