from __future__ import annotations

import pytest

from hookline import Agent, ConfigError, RunResult, ToolCallPart, tool
from hookline.conversation import conversation_problem
from hookline.hooklib import Budget
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.usage import Usage

pytestmark = pytest.mark.anyio


@tool
def tick() -> str:
    """Count one step."""
    return "tick"


def busy_model(calls_per_turn: int = 1, tokens: int = 0) -> FunctionModel:
    """A model that never stops calling `tick`, reporting `tokens` per call."""
    turn = 0

    def script(request: ModelRequest) -> ModelResponse:
        nonlocal turn
        turn += 1
        calls = [ToolCallPart(id=f"t{turn}-{i}", name="tick") for i in range(calls_per_turn)]
        return ModelResponse(
            tool_calls=calls, usage=Usage(input_tokens=tokens // 2, output_tokens=tokens - tokens // 2)
        )

    return FunctionModel(script)


async def run(agent: Agent, mode: str) -> RunResult:
    if mode == "await":
        return await agent.prompt("work")
    request = agent.prompt("work")
    async for _ in request.stream():
        pass
    assert request.result is not None
    return request.result


@pytest.mark.parametrize("mode", ["await", "stream"])
async def test_max_turns_ends_the_run_before_the_next_model_call(mode: str) -> None:
    agent = Agent(model=busy_model(), tools=[tick], max_turns=50, hooks={"before_llm": [Budget(max_turns=3)]})

    result = await run(agent, mode)

    assert result.stop_reason == "hook_exit"
    assert result.usage.model_calls == 3
    assert result.usage.tool_calls == 3
    assert result.exit_reason == "budget: 3 model calls reached (max_turns=3)"
    assert conversation_problem(result.messages) is None


async def test_max_tokens_counts_input_and_output_tokens() -> None:
    agent = Agent(
        model=busy_model(tokens=40), tools=[tick], max_turns=50, hooks={"before_llm": [Budget(max_tokens=100)]}
    )

    result = await agent.prompt("work")

    assert result.stop_reason == "hook_exit"
    assert result.usage.model_calls == 3  # 40, 80, 120 tokens: the third call reaches the limit
    assert result.usage.total_tokens == 120
    assert result.exit_reason == "budget: 120 tokens used (max_tokens=100)"


async def test_max_tool_calls_counts_every_answered_call() -> None:
    agent = Agent(
        model=busy_model(calls_per_turn=2),
        tools=[tick],
        max_turns=50,
        hooks={"before_llm": [Budget(max_tool_calls=3)]},
    )

    result = await agent.prompt("work")

    assert result.stop_reason == "hook_exit"
    assert result.usage.model_calls == 2
    assert result.usage.tool_calls == 4
    assert result.exit_reason.startswith("budget: 4 tool calls reached")
    assert conversation_problem(result.messages) is None


async def test_a_run_within_budget_completes() -> None:
    def script(request: ModelRequest) -> ModelResponse:
        if not any(m.tool_results for m in request.messages):
            return ModelResponse(tool_calls=[ToolCallPart(id="c1", name="tick")])
        return ModelResponse(text="done")

    budget = Budget(max_tokens=1000, max_turns=2, max_tool_calls=2)
    agent = Agent(model=FunctionModel(script), tools=[tick], hooks={"before_llm": [budget]})

    result = await agent.prompt("work")

    assert (result.stop_reason, result.output) == ("completed", "done")
    assert result.exit_reason == ""


async def test_the_budget_is_per_run() -> None:
    agent = Agent(model=busy_model(), tools=[tick], max_turns=50, hooks={"before_llm": [Budget(max_turns=2)]})
    history: list = []

    first = await agent.prompt("one").with_history(history)
    second = await agent.prompt("two").with_history(history)

    assert first.usage.model_calls == second.usage.model_calls == 2


def test_run_sync_ends_the_same_way() -> None:
    agent = Agent(model=busy_model(), tools=[tick], max_turns=50, hooks={"before_llm": [Budget(max_turns=1)]})

    result = agent.prompt("work").run_sync()

    assert (result.stop_reason, result.usage.model_calls) == ("hook_exit", 1)


@pytest.mark.parametrize(
    "kwargs", [{}, {"max_turns": 0}, {"max_tokens": -5}, {"max_tool_calls": 1.5}, {"max_turns": True}]
)
def test_bad_limits_are_config_errors(kwargs: dict) -> None:
    with pytest.raises(ConfigError, match="Budget"):
        Budget(**kwargs)
