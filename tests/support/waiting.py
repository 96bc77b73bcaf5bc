"""Waiting in tests: on a condition, never for a fixed time.

A test that needs something to have happened waits for that very thing. When it is an
event, a line a process prints or a task's end, the test waits on it directly. These
helpers are for the rest: state with nothing to wait on (a file, a log read over HTTP,
a list another thread fills), looked at every `POLL` seconds until it holds, and a
failure naming what never came once `DEADLINE` has passed.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

DEADLINE = 60.0
"""Seconds a test waits for a condition before it fails: generous, so a loaded machine does not flake."""

POLL = 0.01
"""Seconds between two looks at a condition."""


def wait_until(condition: Callable[[], Any], what: str, *, deadline: float = DEADLINE) -> Any:
    """Block until `condition()` returns something true, and return it.

    Fails with "timed out ... waiting until `what`" after `deadline` seconds.
    """
    give_up = time.monotonic() + deadline
    while not (outcome := condition()):
        assert time.monotonic() < give_up, f"timed out after {deadline:g} s waiting until {what}"
        time.sleep(POLL)
    return outcome


async def await_until(condition: Callable[[], Any], what: str, *, deadline: float = DEADLINE) -> Any:
    """Await until `condition()` (a plain or an async function) returns something true, and return it.

    Fails with "timed out ... waiting until `what`" after `deadline` seconds.
    """
    give_up = time.monotonic() + deadline
    while not (outcome := await _look(condition)):
        assert time.monotonic() < give_up, f"timed out after {deadline:g} s waiting until {what}"
        await asyncio.sleep(POLL)
    return outcome


async def _look(condition: Callable[[], Any]) -> Any:
    outcome = condition()
    return await outcome if inspect.isawaitable(outcome) else outcome


async def assert_cancelled(task: asyncio.Task[Any]) -> None:
    """`task`, just cancelled, ends cancelled: it did not swallow its cancellation and go on."""
    await asyncio.wait([task], timeout=DEADLINE)
    if not task.done():
        task.cancel()
        raise AssertionError("the cancelled task never ended")
    assert task.cancelled(), f"the cancelled task went on and ended with {task.exception() or task.result()!r}"
