"""A program that runs an agent with a stdio MCP server and ends without closing anything.

Run by `test_lifecycle.py` as `python never_closed.py STATE MODE`: MODE `done` ends after
a run; `inflight` ends while a tool call is still running on the server; `sync` uses
`run_sync` (whose event loop closes at exit).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from hookline import Agent, ToolCallPart
from hookline.mcp import MCPToolset
from hookline.models import FunctionModel, ModelRequest, ModelResponse

SERVER = Path(__file__).with_name("servers") / "tools_server.py"


def add_then_answer(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    if last.role == "user":
        return ModelResponse(tool_calls=[ToolCallPart(id="1", name="add", arguments={"a": 1, "b": 2})])
    return ModelResponse(text=last.tool_results[0].content)


def build(state: str) -> tuple[Agent, MCPToolset]:
    toolset = MCPToolset.stdio(sys.executable, [str(SERVER), "--state", state])
    return Agent(model=FunctionModel(add_then_answer), tools=[toolset]), toolset


async def done(state: str) -> None:
    agent, _ = build(state)
    print((await agent.prompt("add")).output, flush=True)


async def inflight(state: str) -> None:
    agent, toolset = build(state)
    print((await agent.prompt("add")).output, flush=True)
    slow = next(t for t in toolset.tools() if t.name == "slow")
    left_running = asyncio.ensure_future(slow.call({"seconds": 600}))
    calls = Path(state) / "calls.log"
    async with asyncio.timeout(60):  # until the server has the call (it writes it down), looked at every 10 ms
        while "slow" not in (calls.read_text() if calls.exists() else ""):
            await asyncio.sleep(0.01)
    assert not left_running.done()


def sync(state: str) -> None:
    agent, _ = build(state)
    print(agent.prompt("add").run_sync().output, flush=True)


if __name__ == "__main__":
    where, mode = sys.argv[1], sys.argv[2]
    if mode == "sync":
        sync(where)
    else:
        asyncio.run(done(where) if mode == "done" else inflight(where))
