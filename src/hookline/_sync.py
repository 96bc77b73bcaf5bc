"""The event loop that blocking calls (`PromptRequest.run_sync`, `Agent.close_sync`) run on."""

from __future__ import annotations

import asyncio
import atexit
import threading

__all__ = ["sync_runner"]

_sync_loops = threading.local()


def sync_runner() -> asyncio.Runner:
    """This thread's runner, made on first use and closed at exit: one event loop a thread.

    So the model's connection pool, opened on it by the first blocking run, serves the next ones.
    """
    runner: asyncio.Runner | None = getattr(_sync_loops, "runner", None)
    if runner is None:
        runner = _sync_loops.runner = asyncio.Runner()
        atexit.register(runner.close)
    return runner
