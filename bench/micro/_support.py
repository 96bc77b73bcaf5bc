"""Helpers of the hot-path microbenchmarks (`pytest bench/micro --benchmark-only`).

Not collected by the main test run (the root config has `testpaths = ["tests"]`).
Coroutines that never suspend are driven with `drive()` (one `send(None)`), so that the
figures hold the code under test and not an event loop's scheduling.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from hookline import Agent, ToolCallPart
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.usage import Usage

SYSTEM_PROMPT = "You are a calculator agent. Use the add tool."
USER_PROMPT = "Please add some numbers."


def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    return a + b


def drive(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that completes without suspending; return its value."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("the coroutine suspended: use an event loop for it")


def add_loop_model(T: int) -> FunctionModel:
    """The shared scenario's fake model (SCENARIO.md §2): two `add` calls per turn for T turns, then "done"."""

    async def model(request: ModelRequest) -> ModelResponse:
        n = sum(1 for m in request.messages if m.role == "tool")
        turn = n // 2 + 1
        usage = Usage(input_tokens=10, output_tokens=5)
        if turn > T:
            return ModelResponse(text="done", usage=usage)
        calls = [ToolCallPart(id=f"call_{turn}_{i}", name="add", arguments={"a": turn, "b": i}) for i in (1, 2)]
        return ModelResponse(tool_calls=calls, usage=usage)

    return FunctionModel(model)


def add_loop_agent(T: int = 10, **kwargs: Any) -> Agent:
    return Agent(model=add_loop_model(T), instructions=SYSTEM_PROMPT, tools=[add], max_turns=T + 1, **kwargs)
