"""Running a request each way a user can: `await`, `run_sync`, `stream`.

Hooks, tools and stores must behave the same on every path, so tests that check them run
once per path (`@pytest.mark.parametrize("path", PATHS)`) through `run_by`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hookline import Event, RunResult

PATHS = ["await", "run_sync", "stream"]
"""The ways to run a request."""


async def run_by(path: str, request: Any) -> tuple[RunResult, list[Event]]:
    """Run `request` (a prompt or a resume) the way `path` names; its result, and the events streamed.

    `run_sync` runs in a worker thread, as from code that is not async; only `stream`
    gives events.
    """
    if path == "await":
        return await request, []
    if path == "run_sync":
        return await asyncio.to_thread(request.run_sync), []
    events = [event async for event in request.stream()]
    assert request.result is not None, "the stream ended without a result"
    return request.result, events
