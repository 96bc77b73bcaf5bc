"""Hook dispatch: a whole add-loop run with 0/1/10 no-op hooks at every point, and `Run._hooks` alone."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hookline import HookPoint, State, hook
from hookline._run.loop import Run

from ._support import USER_PROMPT, add_loop_agent, drive


@hook
def noop(state: State) -> None:
    return None


@hook
async def noop_async(state: State) -> None:
    return None


def _hooks(n: int, h: Any = noop) -> dict[HookPoint, list[Any]]:
    return {point: [h] * n for point in HookPoint} if n else {}


@pytest.mark.parametrize("n", [0, 1, 10])
def test_run_with_hooks(benchmark: Any, loop: asyncio.AbstractEventLoop, n: int) -> None:
    """One T=10 add-loop run (11 model calls, 20 tool calls) with `n` no-op hooks at each of the 7 points."""
    agent = add_loop_agent(10, hooks=_hooks(n))

    async def once() -> None:
        result = await agent.prompt(USER_PROMPT)
        assert result.output == "done"

    benchmark(lambda: loop.run_until_complete(once()))


@pytest.mark.parametrize("n", [0, 1, 10])
def test_run_with_async_hooks(benchmark: Any, loop: asyncio.AbstractEventLoop, n: int) -> None:
    agent = add_loop_agent(10, hooks=_hooks(n, noop_async))
    benchmark(lambda: loop.run_until_complete(agent.prompt(USER_PROMPT)._run()))


@pytest.mark.parametrize("n", [0, 1, 10])
def test_dispatch_one_point(benchmark: Any, n: int) -> None:
    """`Run._hooks(point)` alone: one point, `n` sync no-op hooks."""
    agent = add_loop_agent(10, hooks=_hooks(n))
    run = Run(agent, None)
    benchmark(lambda: drive(run._hooks(HookPoint.BEFORE_LLM)))
