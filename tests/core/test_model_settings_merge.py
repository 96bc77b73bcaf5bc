"""How model settings combine: the agent's, under the run's, under a `before_llm` hook's.

Later set fields win (agent < run < hook); a hook's settings hold for the one model call
they precede; the same on every path (`await`, `.run_sync()`, `.stream()`). The tests are
synchronous so that `.run_sync()` runs as users call it.
"""

from __future__ import annotations

import asyncio

import pytest

from hookline import Agent, ConfigError, HookError, ModelSettings, RunResult, State, ToolCallPart, hook, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse

MODES = ["await", "run_sync", "stream"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Seen:
    """A model that calls `add` once, then answers; it keeps the settings of every call."""

    def __init__(self) -> None:
        self.settings: list[ModelSettings] = []

    def __call__(self, request: ModelRequest) -> ModelResponse:
        self.settings.append(request.model_settings)
        if len(self.settings) == 1:
            return ModelResponse(tool_calls=[ToolCallPart(id="c1", name="add", arguments={"a": 2, "b": 3})])
        return ModelResponse(text="5")


def run(agent: Agent, mode: str, **run_settings: object) -> RunResult:
    request = agent.prompt("2+3?")
    if run_settings:
        request = request.model_settings(**run_settings)
    if mode == "run_sync":
        return request.run_sync()

    async def go() -> RunResult:
        if mode == "await":
            return await request
        async for _ in request.stream():
            pass
        assert request.result is not None
        return request.result

    return asyncio.run(go())


@hook
def cold_first_turn(state: State) -> None:
    if state.turn == 1:
        state.model_settings = ModelSettings(temperature=0.0, tool_choice="add")
        state.model_settings = {"extra_headers": {"X-Hook": "1"}}  # laid over the first assignment


@pytest.mark.parametrize("mode", MODES)
def test_agent_then_run_then_hook_and_the_hook_holds_for_one_call(mode: str) -> None:
    seen = Seen()
    agent = Agent(
        model=FunctionModel(seen), tools=[add], hooks={"before_llm": [cold_first_turn]},
        model_settings={"temperature": 0.2, "max_tokens": 100, "extra_headers": {"X-Agent": "a"}},
    )

    result = run(agent, mode, temperature=0.7, stop=["END"])

    assert result.output == "5"
    run_settings = ModelSettings(temperature=0.7, max_tokens=100, stop=["END"], extra_headers={"X-Agent": "a"})
    assert seen.settings == [
        run_settings.merged(ModelSettings(temperature=0.0, tool_choice="add", extra_headers={"X-Hook": "1"})),
        run_settings,
    ]
    assert seen.settings[0].extra_headers == {"X-Agent": "a", "X-Hook": "1"}


def test_without_any_settings_every_call_has_none() -> None:
    seen = Seen()

    run(Agent(model=FunctionModel(seen), tools=[add]), "await")

    assert seen.settings == [ModelSettings(), ModelSettings()]
    assert all(settings.given() == {} for settings in seen.settings)


def test_run_settings_layer_and_leave_the_agent_alone() -> None:
    seen = Seen()
    agent = Agent(model=FunctionModel(seen), tools=[add], model_settings=ModelSettings(max_tokens=10))
    request = agent.prompt("2+3?").model_settings(ModelSettings(temperature=1.0)).model_settings({"max_tokens": 20})

    request.run_sync()
    run(agent, "await")

    assert seen.settings[0] == ModelSettings(temperature=1.0, max_tokens=20)
    assert seen.settings[2] == ModelSettings(max_tokens=10)
    assert agent.model_settings == ModelSettings(max_tokens=10)


def test_what_a_hook_reads_is_what_the_call_gets() -> None:
    read: list[tuple[str, ModelSettings]] = []

    @hook
    def reads(state: State) -> None:
        if state.point == "before_llm" and state.turn == 1:
            state.model_settings = ModelSettings(reasoning_effort="high")
        read.append((str(state.point), state.model_settings))

    seen = Seen()
    agent = Agent(model=FunctionModel(seen), tools=[add], model_settings={"temperature": 0.5},
                  hooks={"before_llm": [reads], "after_llm": [reads]})
    run(agent, "await")

    chosen = ModelSettings(temperature=0.5, reasoning_effort="high")
    assert read[0] == ("before_llm", chosen)
    assert seen.settings[0] == chosen
    assert read[1] == ("after_llm", ModelSettings(temperature=0.5))


@pytest.mark.parametrize("point", ["before_run", "after_llm", "before_tool", "after_tool", "on_exit"])
def test_settings_can_be_set_only_in_before_llm(point: str) -> None:
    @hook
    def too_late(state: State) -> None:
        state.model_settings = ModelSettings(temperature=0.1)

    agent = Agent(model=FunctionModel(Seen()), tools=[add], hooks={point: [too_late]})

    with pytest.raises(HookError, match=f"can only be set in before_llm, not in {point}") as raised:
        run(agent, "await")
    assert raised.value.point == point


def test_a_hook_setting_a_bad_value_fails_the_run_naming_the_field() -> None:
    @hook
    def bad(state: State) -> None:
        state.model_settings = {"temperature": 9}

    agent = Agent(model=FunctionModel(Seen()), tools=[add], hooks={"before_llm": [bad]})

    with pytest.raises(HookError) as raised:
        run(agent, "await")
    assert isinstance(raised.value.__cause__, ConfigError)
    assert "temperature: Input should be less than or equal to 2" in str(raised.value.__cause__)


def test_bad_settings_on_the_agent_or_the_run_fail_at_once() -> None:
    with pytest.raises(ConfigError, match="max_tokens: Input should be greater than or equal to 1"):
        Agent(model=FunctionModel(Seen()), model_settings={"max_tokens": -1})
    with pytest.raises(ConfigError, match="model settings must be a ModelSettings or a dict, not float"):
        Agent(model=FunctionModel(Seen()), model_settings=0.5)  # type: ignore[arg-type]
    agent = Agent(model=FunctionModel(Seen()))
    with pytest.raises(ConfigError, match="reasoning_effort: Input should be"):
        agent.prompt("hi").model_settings(reasoning_effort="extreme")
