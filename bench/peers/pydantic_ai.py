"""pydantic-ai: an `Agent` on a `FunctionModel` whose async function plays the scenario's model.

The function reports token usage, as a real model does: without it `FunctionModel` estimates
the usage of every call by walking the whole conversation, a cost no real run pays.
"""

from __future__ import annotations

import asyncio
from importlib.metadata import version as installed

from harness import Runner, Setup
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage, UsageLimits
from scenario import SYSTEM_PROMPT, USER_PROMPT, check_run, fake_decision

NAME = "pydantic-ai"
PERSISTS = False


def version() -> str:
    """The installed pydantic-ai-slim."""
    return installed("pydantic-ai-slim")


def _tool_results(messages: list[ModelMessage]) -> int:
    return sum(isinstance(p, ToolReturnPart) for m in messages if isinstance(m, ModelRequest) for p in m.parts)


async def build(setup: Setup) -> Runner:
    """A pydantic-ai agent for the scenario."""
    usage = RequestUsage(input_tokens=10, output_tokens=5)

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if setup.model_sleep_s:
            await asyncio.sleep(setup.model_sleep_s)
        decision = fake_decision(_tool_results(messages), setup.T)
        if decision is None:
            return ModelResponse(parts=[TextPart("done")], usage=usage)
        return ModelResponse(parts=[ToolCallPart("add", a, tool_call_id=i) for i, a in decision], usage=usage)

    agent = Agent(FunctionModel(answer), system_prompt=SYSTEM_PROMPT, tools=[setup.tool])
    limits = UsageLimits(request_limit=setup.T + 5)  # the default, 50, is below T + 1 at T = 50

    async def run_once() -> None:
        result = await agent.run(USER_PROMPT, usage_limits=limits)
        check_run(result.output, _tool_results(result.all_messages()), setup.T)

    return Runner(run_once)
