"""The agent of the scale-out load test: a 50 ms fake model and two tool turns per run.

Every model call sleeps `SCALEOUT_MODEL_DELAY` seconds (default 0.05): the first two ask
for the `step` tool, the third answers. So a run is three model calls, two tool calls,
and about a dozen stored events (prompt, status lines, tool calls and results, answer).
"""

from __future__ import annotations

import asyncio
import os

from hookline import Agent, ToolCallPart, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse

DELAY = float(os.environ.get("SCALEOUT_MODEL_DELAY", "0.05"))
TOOL_TURNS = 2


@tool
def step(n: int) -> int:
    """Return `n` (the tool turn's number)."""
    return n


async def _script(request: ModelRequest) -> ModelResponse:
    await asyncio.sleep(DELAY)
    done = sum(1 for message in request.messages if message.role == "tool")
    if done < TOOL_TURNS:
        call = ToolCallPart(id=f"step-{done + 1}", name="step", arguments={"n": done + 1})
        return ModelResponse(tool_calls=[call])
    return ModelResponse(text="done")


agent = Agent("scaleout", model=FunctionModel(_script, name="fake-50ms"), tools=[step])
