"""The add-loop scenario (SCENARIO.md beside this file): what every adapter plays, and the check of a run.

Standard library only: the peers' venv imports it too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

SYSTEM_PROMPT = "You are a calculator agent. Use the add tool."
USER_PROMPT = "Please add some numbers."
MODEL_SLEEP_S = 0.05
"""How long the fake model waits per call in the concurrent phases."""
TOOL_SLEEP_S = 0.02
"""How long the `sleep` tool waits per call (does a framework overlap the two calls of a turn?)."""
TOOL_MODES = ("sync", "async", "sleep")

Call = tuple[str, dict[str, int]]
"""One tool call of the fake model: its id and its arguments."""


def make_tool(mode: str) -> Callable[..., Any]:
    """The `add` tool in one of its variants: `sync` (the spec), `async`, or `sleep` (async, sleeps 20 ms)."""
    if mode == "sync":

        def add(a: int, b: int) -> int:
            """Add two integers and return the sum."""
            return a + b

    elif mode == "async":

        async def add(a: int, b: int) -> int:  # type: ignore[misc]
            """Add two integers and return the sum."""
            return a + b

    elif mode == "sleep":

        async def add(a: int, b: int) -> int:  # type: ignore[misc]
            """Add two integers and return the sum."""
            await asyncio.sleep(TOOL_SLEEP_S)
            return a + b

    else:
        raise ValueError(f"unknown tool mode {mode!r}; expected one of: {', '.join(TOOL_MODES)}")
    return add


def fake_decision(tool_results: int, T: int) -> list[Call] | None:
    """The fake model's whole policy, from the number of tool results in the conversation it gets.

    Turn `tool_results // 2 + 1` up to T asks for two `add` calls; after T it answers "done" (None).
    """
    turn = tool_results // 2 + 1
    if turn > T:
        return None
    return [(f"call_{turn}_1", {"a": turn, "b": 1}), (f"call_{turn}_2", {"a": turn, "b": 2})]


def check_run(output: object, tool_results: int, T: int) -> None:
    """Raise AssertionError unless a run ended with the text "done" after exactly 2T tool results."""
    if output != "done":
        raise AssertionError(f"the run's output is {output!r}, expected 'done'")
    if tool_results != 2 * T:
        raise AssertionError(f"the run holds {tool_results} tool results, expected {2 * T}")
