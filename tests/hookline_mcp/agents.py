"""Agents for the MCP server tests, served by `python -m hookline.mcp <this file>:<name>`.

Each is backed by a `FunctionModel` script, so the server runs the real loop offline.
"""

from __future__ import annotations

import asyncio

from hookline import Agent, ToolCallPart, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _calculate(request: ModelRequest) -> ModelResponse:
    # One add call per prompt; the answer says how many prompts the conversation holds.
    last = request.messages[-1]
    prompts = sum(1 for m in request.messages if m.role == "user")
    if last.role == "user":
        return ModelResponse(tool_calls=[ToolCallPart(id=f"c{len(request.messages)}", name="add",
                                                      arguments={"a": 2, "b": 3})])
    result = last.tool_results[-1].content
    return ModelResponse(text=f"the sum is {result} (prompt {prompts} of this conversation)")


def _broken(request: ModelRequest) -> ModelResponse:
    raise RuntimeError("the model is down")


calculator = Agent("calculator", model=FunctionModel(_calculate), tools=[add])
broken = Agent("broken", model=FunctionModel(_broken))


@tool
async def pause(seconds: float) -> str:
    """Wait `seconds`, then say so."""
    await asyncio.sleep(seconds)
    return f"paused {seconds} s"


def _pause(request: ModelRequest) -> ModelResponse:
    # "pause N": one pause call of N seconds, then the answer.
    last = request.messages[-1]
    if last.role == "user":
        seconds = float(last.text.split()[-1])
        return ModelResponse(tool_calls=[ToolCallPart(id="p1", name="pause", arguments={"seconds": seconds})])
    return ModelResponse(text=f"done: {last.tool_results[-1].content}")


sleeper = Agent("sleeper", model=FunctionModel(_pause), tools=[pause])
