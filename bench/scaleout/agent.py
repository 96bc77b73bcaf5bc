"""The agent of the scale-out load test: a 50 ms fake model and two tool turns per run.

Every model call sleeps `SCALEOUT_MODEL_DELAY` seconds (default 0.05): the first two ask
for the `step` tool, the third answers. So a run is three model calls, two tool calls,
and about a dozen stored events (prompt, status lines, tool calls and results, answer).
The answer streams in `DELTAS` deltas, 2 ms apart, each `"<time.monotonic_ns()>|"` (one
clock for every process of a Linux host), so a follower can tell how long each took to
reach it, from another process too.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator

from hookline import Agent, ToolCallPart, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse, ModelStreamEvent, ResponseDone, TextDelta

DELAY = float(os.environ.get("SCALEOUT_MODEL_DELAY", "0.05"))
TOOL_TURNS = 2
DELTAS = 5


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


class StampedModel(FunctionModel):
    """The script's answer streamed as stamped deltas; its tool calls as they are."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        response = await self.request(request)
        if response.tool_calls:
            yield ResponseDone(response)
            return
        stamps = []
        for _ in range(DELTAS):
            stamps.append(f"{time.monotonic_ns()}|")
            yield TextDelta(stamps[-1])
            await asyncio.sleep(0.002)
        yield ResponseDone(ModelResponse(text="".join(stamps), usage=response.usage))


agent = Agent("scaleout", model=StampedModel(_script, name="fake-50ms"), tools=[step])
