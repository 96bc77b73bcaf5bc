"""A tour of the hook points: one hook at each, printing what it sees.

    .venv/bin/python examples/hook_tour.py
    HOOKLINE_MODEL=openai:gpt-4o-mini .venv/bin/python examples/hook_tour.py

The run: the model calls `add(2, 3)`, reads the result and answers. Every hook point
fires on the way, in this order: before_run, before_llm, after_llm, before_tool,
after_tool, before_llm, after_llm, on_exit, after_run.
"""

from __future__ import annotations

import asyncio

from _model import pick_model

from hookline import Agent, State, ToolCallPart, hook, tool
from hookline.models import ModelRequest, ModelResponse


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script(request: ModelRequest) -> ModelResponse:
    """Call `add` first; once its result is in, answer with it."""
    results = [r for m in request.messages for r in m.tool_results]
    if not results:
        return ModelResponse(tool_calls=[ToolCallPart(id="call-1", name="add", arguments={"a": 2, "b": 3})])
    return ModelResponse(text=f"2 + 3 = {results[-1].content}")


def show(state: State, text: str) -> None:
    print(f"[{state.point}] turn {state.turn}: {text}")


@hook
def before_run(state: State) -> None:
    show(state, f"prompt {state.messages[-1].text!r}; session {state.session_id}")


@hook
def before_llm(state: State) -> None:
    roles = ", ".join(m.role for m in state.messages)
    show(state, f"the model will see {len(state.messages)} messages ({roles})")


@hook
def after_llm(state: State) -> None:
    assert state.response is not None
    calls = ", ".join(f"{c.name}({c.arguments})" for c in state.response.tool_calls)
    show(state, f"the model answered {state.response.text!r}" + (f" and calls {calls}" if calls else ""))


@hook
def before_tool(state: State) -> None:
    show(state, "pending calls: " + ", ".join(f"{c.id} {c.name}" for c in state.tool_calls))


@hook
def after_tool(state: State) -> None:
    assert state.tool_call is not None
    assert state.tool_result is not None
    show(state, f"{state.tool_call.name} returned {state.tool_result.content!r}")


@hook
def on_exit(state: State) -> None:
    show(state, "the model answered without tool calls: the run is about to stop")


@hook
def after_run(state: State) -> None:
    usage = state.usage
    show(state, f"done: {usage.model_calls} model calls, {usage.tool_calls} tool calls, {usage.total_tokens} tokens")


agent = Agent(
    name="tour",
    model=pick_model(script),
    instructions="Use the add tool for arithmetic, then answer in one short sentence.",
    tools=[add],
    hooks={
        "before_run": [before_run],
        "before_llm": [before_llm],
        "after_llm": [after_llm],
        "before_tool": [before_tool],
        "after_tool": [after_tool],
        "on_exit": [on_exit],
        "after_run": [after_run],
    },
)


async def main() -> None:
    result = await agent.prompt("What is 2 + 3?")
    print(f"answer: {result.output} ({result.stop_reason})")


if __name__ == "__main__":
    asyncio.run(main())
