"""`hookline.mcp.server`: an agent served as an MCP tool, checked with the `mcp` SDK's own client.

The server runs as a subprocess (`python -m hookline.mcp tests/.../agents.py:NAME`),
over stdio and over streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from support.waiting import DEADLINE

pytestmark = pytest.mark.anyio

AGENTS = Path(__file__).with_name("agents.py")
SERVE = [sys.executable, "-m", "hookline.mcp"]


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


def text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


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


class HttpAgentServer:
    """`python -m hookline.mcp ... --http --port 0`, with the URL read from its stderr."""

    def __init__(self, agent: str, *options: str) -> None:
        self.process = subprocess.Popen([*SERVE, f"{AGENTS}:{agent}", "--http", "--port", "0", *options],
                                        stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        found = re.search(r"on (http://127\.0\.0\.1:\d+/mcp)", line)
        assert found, f"the server did not start: {line!r}"
        self.url = found.group(1)

    def stop(self) -> float:
        """Ctrl-C it; return how long it took to exit."""
        started = time.monotonic()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(DEADLINE)
        if self.process.stderr is not None:
            self.process.stderr.close()
        return time.monotonic() - started


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


def test_the_http_server_stops_on_ctrl_c(http_agent: HttpAgentServer) -> None:
    assert http_agent.stop() < 5.0
    assert http_agent.process.returncode in (0, -signal.SIGINT, 130)


def test_http_beyond_loopback_is_refused() -> None:
    out = subprocess.run([*SERVE, f"{AGENTS}:calculator", "--http", "--host", "0.0.0.0"], capture_output=True,
                         text=True, timeout=DEADLINE, check=False)
    assert out.returncode == 2
    assert "no authentication" in out.stderr
    assert "--host 127.0.0.1" in out.stderr
