"""An agent served as an MCP tool, called by the `mcp` SDK's own client, as an MCP host would.

    .venv/bin/python examples/mcp_server.py
    hookline mcp examples/mcp_server.py:agent            # serve it yourself (stdio), e.g. for an IDE

This script starts `python -m hookline.mcp mcp_server:agent` (what `hookline mcp`
runs) as a subprocess, lists its one tool, and calls it twice in one session: the progress
notifications carry the run's status lines, and the second call sees the first.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from _model import pick_model

from hookline import Agent, ToolCallPart, tool
from hookline.models import ModelRequest, ModelResponse


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    if last.role == "user":
        return ModelResponse(tool_calls=[ToolCallPart(id=f"c{len(request.messages)}", name="add",
                                                      arguments={"a": 2, "b": 3})])
    prompts = sum(1 for m in request.messages if m.role == "user")
    return ModelResponse(text=f"2 + 3 = {last.tool_results[0].content} (question {prompts} of this session)")


agent = Agent(name="calculator", model=pick_model(script), tools=[add],
              instructions="Use the add tool for sums; answer in one line.")


async def main() -> None:
    from mcp import Client, StdioServerParameters

    here = Path(__file__).parent
    # A stdio server inherits only a safe part of the environment: pass on the model settings.
    env = {k: v for k, v in os.environ.items() if k.startswith(("HOOKLINE_", "OPENAI_", "ANTHROPIC_", "PYTHON"))}
    server = StdioServerParameters(command=sys.executable, args=["-m", "hookline.mcp", "mcp_server:agent"],
                                   cwd=here, env=env)

    async def progress(step: float, total: float | None, message: str | None) -> None:
        print(f"  progress {step:g}: {message}")

    async with Client(server) as client:
        tools = (await client.list_tools()).tools
        print("tools:", ", ".join(f"{t.name}({', '.join(t.input_schema['properties'])})" for t in tools))
        for prompt in ("What is 2 + 3?", "And again?"):
            result = await client.call_tool("calculator", {"prompt": prompt, "session_id": "demo"},
                                            progress_callback=progress)
            print("answer:", "".join(getattr(block, "text", "") for block in result.content))


if __name__ == "__main__":
    asyncio.run(main())
