"""Parity (DESIGN §2 "Hooks fire the same way on every path"): one scripted scenario gives
the same hook trace, messages and outcome through `await agent.prompt(...)`,
`.run_sync()` and `.stream()`.

The tests are synchronous so that `.run_sync()` runs as users call it; the async paths
run under `asyncio.run`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest

from hookline import Agent, HookError, HooklineError, MaxTurnsExceeded, RunResult, State, tool

from .scripted import Script, add, answer, call, calls, shapes
from .tracer import at_every_point

MODES = ["await", "run_sync", "stream"]


@tool
async def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    await asyncio.sleep(0)  # suspends, so every mode must await the tool
    return a * b


class Witness:
    """A hook at every point writing down what it saw."""

    def __init__(self, scenario: str) -> None:
        self.scenario = scenario
        self.trace: list[tuple[Any, ...]] = []

    def run(self, state: State) -> None:
        point = str(state.point)
        seen: tuple[Any, ...] = (point, state.turn, tuple(shapes(state.messages)))
        if state.response is not None:
            seen += (tuple(shapes([state.response])),)
        if state.tool_calls:
            seen += (tuple(c.id for c in state.tool_calls),)
        if state.tool_call is not None and state.tool_result is not None:
            seen += (state.tool_call.id, state.tool_result.content, state.tool_result.is_error)
        self.trace.append(seen)
        self.act(state)

    def act(self, state: State) -> None:
        point = str(state.point)
        if self.scenario == "hook_exit" and point == "before_tool" and state.turn == 2:
            state.control.exit("enough")
        elif self.scenario == "interrupted" and point == "before_tool":
            state.interrupt("c2", "approve the product")
        elif self.scenario == "hook_error" and point == "after_tool" and state.turn == 2:
            raise RuntimeError("witness failed")
        elif self.scenario == "edits" and point == "after_tool" and state.tool_call and state.tool_call.id == "c1":
            state.tool_result = "three"
        elif self.scenario == "edits" and point == "on_exit" and state.turn == 3:
            state.control.continue_run()


@dataclass
class Outcome:
    trace: list[tuple[Any, ...]]
    messages: list[str]
    stop_reason: str | None
    output: Any
    model_calls: int | None
    tool_calls: int | None
    error: str | None
    requests: list[list[str]]


def _agent(scenario: str) -> tuple[Agent, Witness, Script]:
    witness = Witness(scenario)
    script = Script(
        calls(call("c1", "add", a=1, b=2), call("c2", "mul", a=3, b=4), input_tokens=5, output_tokens=1),
        calls(call("c3", "add", a=3, b=12)),
        answer("15"),
        answer("still 15"),
    )
    max_turns = 1 if scenario == "max_turns" else 10
    agent = Agent("parity", model=script.model, tools=[add, mul], hooks=at_every_point(witness), max_turns=max_turns)
    return agent, witness, script


async def _stream(agent: Agent) -> RunResult:
    request = agent.prompt("compute")
    events = [event async for event in request.stream()]
    assert request.result is not None
    assert [e.to_message() for e in events if e.kind == "message"] == request.result.messages
    return request.result


def _run(mode: str, scenario: str) -> Outcome:
    agent, witness, script = _agent(scenario)
    result: RunResult | None = None
    error: HooklineError | None = None
    try:
        if mode == "await":

            async def prompt() -> RunResult:
                return await agent.prompt("compute")

            result = asyncio.run(prompt())
        elif mode == "run_sync":
            result = agent.prompt("compute").run_sync()
        else:
            result = asyncio.run(_stream(agent))
    except MaxTurnsExceeded as exc:
        error, result = exc, exc.result
    except HookError as exc:
        error = exc
    return Outcome(
        trace=witness.trace,
        messages=shapes(result.messages) if result else [],
        stop_reason=result.stop_reason if result else None,
        output=result.output if result else None,
        model_calls=result.usage.model_calls if result else None,
        tool_calls=result.usage.tool_calls if result else None,
        error=f"{type(error).__name__}: {error}" if error else None,
        requests=[shapes(r.messages) for r in script.requests],
    )


EXPECTED = {
    "completed": ("completed", "15", None),
    "edits": ("completed", "still 15", None),
    "hook_exit": ("hook_exit", "", None),
    "interrupted": ("interrupted", "", None),
    "max_turns": ("max_turns", "", "MaxTurnsExceeded"),
    "hook_error": (None, None, "HookError"),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scenario", list(EXPECTED))
def test_every_path_gives_the_same_run(scenario: str, mode: str) -> None:
    outcome = _run(mode, scenario)
    stop_reason, output, error = EXPECTED[scenario]
    assert outcome.stop_reason == stop_reason
    assert outcome.output == output
    assert (outcome.error or "").split(":")[0] == (error or "")
    assert outcome.trace[-1][0] == "after_run"
    assert outcome == _run("await", scenario)


def test_the_completed_scenario_trace_is_what_the_contract_says() -> None:
    outcome = _run("run_sync", "completed")
    points = [(seen[0], seen[1]) for seen in outcome.trace]
    assert points == [
        ("before_run", 0),
        ("before_llm", 1), ("after_llm", 1), ("before_tool", 1), ("after_tool", 1), ("after_tool", 1),
        ("before_llm", 2), ("after_llm", 2), ("before_tool", 2), ("after_tool", 2),
        ("before_llm", 3), ("after_llm", 3), ("on_exit", 3),
        ("after_run", 3),
    ]
    assert outcome.messages == [
        "user:compute", "assistant:calls(c1,c2)", "tool:c1", "tool:c2", "assistant:calls(c3)", "tool:c3", "assistant:15"
    ]
    after_tools = [seen[3:] for seen in outcome.trace if seen[0] == "after_tool"]
    assert after_tools == [("c1", "3", False), ("c2", "12", False), ("c3", "15", False)]
    assert (outcome.model_calls, outcome.tool_calls) == (3, 3)


def test_run_sync_inside_an_event_loop_points_to_await() -> None:
    agent, _, _ = _agent("completed")

    async def inside() -> None:
        agent.prompt("compute").run_sync()

    with pytest.raises(RuntimeError, match="await"):
        asyncio.run(inside())
