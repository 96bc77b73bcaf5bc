"""`ToolRunner`: runs the tool calls of one model turn.

Calls run concurrently, up to a limit, when their tools can overlap (async tools, or
synchronous ones marked `thread=True`); a plain synchronous tool is just called, since it
could not overlap anyway and a task would only cost time. Results come back in the order
of the calls, whatever the order of completion. Every failure is already a result (see
`Tool.answer`); an unknown tool name becomes one here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from hookline.messages import ToolCallPart, ToolResultPart
from hookline.status import current_capture, install_log_capture
from hookline.tools import Tool, error_result

if TYPE_CHECKING:
    from hookline.tracing import RunTrace

__all__ = ["LogSink", "ToolRunner"]

LogSink = Callable[[ToolCallPart, logging.LogRecord], None]
"""Receives each log record a tool emits, with the call that emitted it."""


class ToolRunner:
    """Runs tool calls with bounded concurrency.

    Args:
        concurrency: How many calls may run at once.
        on_log: Where log records emitted during a call go, or None to not capture them.
    """

    __slots__ = ("concurrency", "on_log", "trace")

    def __init__(self, concurrency: int, on_log: LogSink | None) -> None:
        self.concurrency = concurrency
        self.on_log = on_log
        self.trace: RunTrace | None = None
        """The run's trace, when tracing is on: each call then runs in a span of its own."""
        if on_log is not None:
            install_log_capture()

    async def run(
        self, tools: dict[str, Tool], calls: list[ToolCallPart], finished: dict[str, ToolResultPart]
    ) -> None:
        """Answer `calls` with `tools` into `finished` (by call id), each as soon as it is done.

        So a run cancelled meanwhile still knows the results of the calls that finished.
        """
        answer = self.call if self.trace is None else self._traced_call
        if len(calls) < 2 or self.concurrency == 1 or not any(
            (t := tools.get(c.name)) is not None and t.concurrent for c in calls
        ):
            for call in calls:
                finished[call.id] = await answer(tools, call)
            return
        semaphore = asyncio.Semaphore(self.concurrency) if self.concurrency < len(calls) else None

        async def one(call: ToolCallPart) -> None:
            if semaphore is None:
                finished[call.id] = await answer(tools, call)
                return
            async with semaphore:
                finished[call.id] = await answer(tools, call)

        await asyncio.gather(*(one(c) for c in calls))

    async def call(self, tools: dict[str, Tool], call: ToolCallPart) -> ToolResultPart:
        """Answer one call; log records it emits go to `on_log`."""
        tool = tools.get(call.name)
        if tool is None:
            available = ", ".join(tools) or "none"
            return error_result(call, f"unknown tool {call.name!r}; available tools: {available}")
        if self.on_log is None:
            return await tool.answer(call)
        token = current_capture.set(partial(self.on_log, call))
        try:
            return await tool.answer(call)
        finally:
            current_capture.reset(token)

    async def _traced_call(self, tools: dict[str, Tool], call: ToolCallPart) -> ToolResultPart:
        assert self.trace is not None
        return await self.trace.tool(call, tools.get(call.name), partial(self.call, tools, call))
