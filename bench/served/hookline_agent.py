"""hookline's agent for the served benchmark: the add-loop scenario at T = 2, behind `hookline serve`.

    hookline serve bench/served/hookline_agent.py:agent --port 0 --db sessions.db

The fake model is the scenario's (`bench/scenario.py`): two calls of `add` per turn for two
turns, then "done"; it waits `SERVED_MODEL_DELAY` seconds (default 0) before each answer.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the scenario

from scenario import SYSTEM_PROMPT, fake_decision, make_tool

from hookline import Agent, ToolCallPart
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.usage import Usage

T = 2
DELAY = float(os.environ.get("SERVED_MODEL_DELAY", "0"))
_USAGE = Usage(input_tokens=10, output_tokens=5)


async def _answer(request: ModelRequest) -> ModelResponse:
    if DELAY:
        await asyncio.sleep(DELAY)
    decision = fake_decision(sum(1 for m in request.messages if m.role == "tool"), T)
    if decision is None:
        return ModelResponse(text="done", usage=_USAGE)
    return ModelResponse(tool_calls=[ToolCallPart(id=i, name="add", arguments=a) for i, a in decision], usage=_USAGE)


agent = Agent("calc", model=FunctionModel(_answer, name="fake"), instructions=SYSTEM_PROMPT, tools=[make_tool("sync")])
