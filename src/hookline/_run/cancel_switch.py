"""`CancelSwitch`: how a run is stopped from any thread, and how it tells that stop from another cancellation."""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["CancelSwitch"]


class CancelSwitch:
    """A run's stop: asked for from any thread, carried out by cancelling the run's task on its own loop."""

    __slots__ = ("_loop", "_task", "pulled")

    def __init__(self) -> None:
        self.pulled = False
        """Whether the run was asked to stop (a run that never waits checks it, not seeing its task's cancel)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None

    def bind(self) -> None:
        """Note the run's task and its event loop; call it from the run's task."""
        self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()

    def pull(self) -> None:
        """Stop the run, from any thread: its task is cancelled (once: a second cancel would land in its ending)."""
        if self.pulled:
            return
        self.pulled = True
        if self._task is not None and self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._task.cancel)

    def stopped_the_run(self) -> bool:
        """Whether a cancellation the run caught is this switch's (it then takes it back); else it must go on."""
        if not self.pulled:
            return False
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            task.uncancel()
        return True
