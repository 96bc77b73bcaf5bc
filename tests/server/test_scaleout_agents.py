"""The agent the scale-out tests serve with `hookline serve <this file>:agent` (no tests here).

Its `FunctionModel` script reads the last user prompt:
- "gate <path>" -> calls `wait_for(path)`, a tool that returns once the file exists (the test
  opens the gate when it is ready to see the rest of the run live), then answers "opened";
- "hang"        -> the model call takes `HANG_SECONDS` (only a cancel ends it in time);
- anything else -> "You said: <text>".
"""

from __future__ import annotations

import asyncio
import os
import time

from hookline import Agent, ToolCallPart, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse

HANG_SECONDS = 120.0
GATE_LIMIT = 120.0  # s: a gate nobody opens fails the run rather than holding it forever


@tool
async def wait_for(path: str) -> str:
    """Return once the file at `path` exists."""
    # A condition in another process (the test's), looked at every 10 ms: this module is
    # loaded by `hookline serve`, which cannot import the tests' `waiting` helpers.
    deadline = time.monotonic() + GATE_LIMIT
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"nobody opened the gate {path}")
        await asyncio.sleep(0.01)
    return "open"


async def _script(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    if last.role == "tool":
        return ModelResponse(text="opened")
    text = last.text
    if text.startswith("gate "):
        call = ToolCallPart(id=f"gate-{len(request.messages)}", name="wait_for", arguments={"path": text[5:]})
        return ModelResponse(tool_calls=[call])
    if text.startswith("hang"):
        await asyncio.sleep(HANG_SECONDS)  # a model that never answers in time: only a cancel ends the run
    return ModelResponse(text=f"You said: {text}")


agent = Agent("scaleout", model=FunctionModel(_script, name="scripted"), tools=[wait_for])
