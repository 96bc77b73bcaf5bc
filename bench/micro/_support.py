"""Helpers of the hot-path microbenchmarks (`pytest bench/micro --benchmark-only`).

Not collected by the main test run (the root config has `testpaths = ["tests"]`). pytest puts
bench/ on `sys.path` (bench/micro is a package, bench/ is not), so the scenario and hookline's
adapter are shared with bench/harness.py. Coroutines that never suspend are driven with
`drive()` (one `send(None)`), so that the figures hold the code under test and not an event
loop's scheduling.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from bench_hookline import fake_model
from scenario import SYSTEM_PROMPT, USER_PROMPT, make_tool

from hookline import Agent

__all__ = ["USER_PROMPT", "add", "add_loop_agent", "drive"]

add = make_tool("sync")


def drive(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that completes without suspending; return its value."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("the coroutine suspended: use an event loop for it")


def add_loop_agent(T: int = 10, **kwargs: Any) -> Agent:
    """hookline's agent of the add-loop scenario (SCENARIO.md), with `kwargs` for `Agent`."""
    return Agent(model=fake_model(T, 0.0), instructions=SYSTEM_PROMPT, tools=[add], max_turns=T + 1, **kwargs)
