"""`ToolRunner`: runs the tool calls of one model turn.

Calls run concurrently, up to a limit, when their tools can overlap (async tools, or
synchronous ones marked `thread=True`); a plain synchronous tool is just called, since it
could not overlap anyway and a task would only cost time. Overlapping calls start at once
(`Tool.begin`, `hookline._run.eager`): only those that wait get a task, so an `async def` tool
that never awaits costs little more than a plain one. Results come back in the order of
the calls, whatever the order of completion. Every failure is already a result (see
`Tool.answer`); an unknown tool name becomes one here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from hookline._run.eager import Waiting, first_step, go_on, overlap
from hookline._run.status import current_capture, install_log_capture
from hookline.messages import ToolCallPart, ToolResultPart
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
        exit_tools: The tools that end the run when they succeed (the agent's exit
            conditions): what they return is kept in `values`, to become the run's output.
        trace: The run's trace, when tracing is on: each call then runs in a span of its own.
    """

    __slots__ = ("_inline_logs", "concurrency", "exit_tools", "on_log", "trace", "values")

    def __init__(self, concurrency: int, on_log: LogSink | None, *, exit_tools: frozenset[str] = frozenset(),
                 trace: RunTrace | None = None) -> None:
        self.concurrency = concurrency
        self.on_log = on_log
        self.exit_tools = exit_tools
        self.trace = trace
        self.values: dict[str, Any] = {}
        """What the exit tools returned, by call id."""
        self._inline_logs = _InlineLogs(on_log) if on_log is not None else None
        if on_log is not None:
            install_log_capture()

    def start(
        self, tools: dict[str, Tool], calls: list[ToolCallPart], finished: dict[str, ToolResultPart]
    ) -> Awaitable[None] | None:
        """Answer `calls` with `tools` into `finished` (by call id), each as soon as it is done.

        What can be answered at once is (a plain function, an `async def` tool that never
        waits): None when that is every call, else what the caller awaits for the others. So
        a run cancelled meanwhile still knows the results of the calls that finished.
        """
        unwrapped = self.trace is None and not self.exit_tools
        if unwrapped and self.on_log is not None:
            return self._start_logged(tools, calls, finished)
        overlapping: bool | None = None  # whether the calls may overlap: asked only once a call is not plain
        for number, call in enumerate(calls):
            tool = tools.get(call.name) if unwrapped else None
            if tool is not None and tool.inline:  # a plain function: called at once, no coroutine
                finished[call.id] = tool.answer_now(call)
                continue
            if overlapping is None:  # this call's tool, when concurrent, answers it without a walk
                overlapping = len(calls) > 1 and self.concurrency > 1 and (
                    (tool is not None and tool.concurrent) or _overlapping(tools, calls))
            if tool is None or not overlapping or self.concurrency < len(calls) - number:
                return self._the_rest(tools, calls[number:], finished, unwrapped, overlapping)
            step = tool.begin(call)  # an `async def` tool: stepped at once, in a context of its own
            if isinstance(step, Waiting):  # it goes on in the caller's task; the calls after it overlap with it
                begin = partial(self._begin, tools, unwrapped)
                return go_on(call.id, step, calls[number + 1 :], begin, finished, _call_id)
            finished[call.id] = step
        return None

    def _start_logged(
        self, tools: dict[str, Tool], calls: list[ToolCallPart], finished: dict[str, ToolResultPart]
    ) -> Awaitable[None] | None:
        """`start`, each call's log records going to `on_log`: the leading plain functions at once, the rest after."""
        number = self._inline_logged(tools, calls, finished)
        if number == len(calls):
            return None
        overlapping = len(calls) - number > 1 and self.concurrency > 1 and _overlapping(tools, calls[number:])
        return self._the_rest(tools, calls[number:], finished, False, overlapping)

    def _inline_logged(
        self, tools: dict[str, Tool], calls: list[ToolCallPart], finished: dict[str, ToolResultPart]
    ) -> int:
        """Answer the leading calls of plain functions, one capture of log records serving them all; how many."""
        logs = self._inline_logs
        assert logs is not None  # made with `on_log`
        token = current_capture.set(logs)
        try:
            for number, call in enumerate(calls):
                tool = tools.get(call.name)
                if tool is None or not tool.inline:
                    return number
                logs.call = call
                finished[call.id] = tool.answer_now(call)
            return len(calls)
        finally:
            current_capture.reset(token)

    def _the_rest(
        self, tools: dict[str, Tool], calls: list[ToolCallPart], finished: dict[str, ToolResultPart], direct: bool,
        overlapping: bool,
    ) -> Awaitable[None] | None:
        """`calls`, none begun, answered the general way: one by one, at most `concurrency` at once, or overlapped."""
        if not overlapping:
            return self._one_by_one(tools, calls, finished, direct)
        if self.concurrency < len(calls):
            return self._bounded(tools, calls, finished, direct)
        return overlap(calls, partial(self._begin, tools, direct), finished, _call_id)

    def _begin(
        self, tools: dict[str, Tool], direct: bool, call: ToolCallPart
    ) -> ToolResultPart | Waiting[ToolResultPart]:
        """`call` answered up to its first wait: by its tool's `begin` when nothing wraps it (`direct`)."""
        tool = tools.get(call.name) if direct else None
        if tool is not None:
            return tool.begin(call)
        return first_step(self._answer(tools, call, direct=False))

    async def _one_by_one(
        self, tools: dict[str, Tool], calls: list[ToolCallPart], finished: dict[str, ToolResultPart], direct: bool
    ) -> None:
        for call in calls:
            finished[call.id] = await self._answer(tools, call, direct)

    async def _bounded(
        self, tools: dict[str, Tool], calls: list[ToolCallPart], finished: dict[str, ToolResultPart], direct: bool
    ) -> None:
        """At most `concurrency` calls at once."""
        semaphore = asyncio.Semaphore(self.concurrency)

        async def one(call: ToolCallPart) -> None:
            async with semaphore:
                finished[call.id] = await self._answer(tools, call, direct)

        await asyncio.gather(*(one(c) for c in calls))

    def _answer(self, tools: dict[str, Tool], call: ToolCallPart, direct: bool) -> Coroutine[Any, Any, ToolResultPart]:
        """What answers `call`: the tool's own `answer` when nothing wraps it (`direct`), so one coroutine less."""
        tool = tools.get(call.name) if direct else None
        if tool is not None:
            return tool.answer(call)
        return self.call(tools, call) if self.trace is None else self._traced_call(tools, call)

    async def call(self, tools: dict[str, Tool], call: ToolCallPart) -> ToolResultPart:
        """Answer one call; log records it emits go to `on_log`."""
        tool = tools.get(call.name)
        if tool is None:
            available = ", ".join(tools) or "none"
            return error_result(call, f"unknown tool {call.name!r}; available tools: {available}")
        answering = tool.answer(call, self.values) if call.name in self.exit_tools else tool.answer(call)
        if self.on_log is None:
            return await answering
        token = current_capture.set(partial(self.on_log, call))
        try:
            return await answering
        finally:
            current_capture.reset(token)

    def exit_value(self, results: list[ToolResultPart], ran: dict[str, ToolResultPart]) -> tuple[str, Any] | None:
        """The first exit tool that ran and succeeded among `results`, and the run's output from it.

        The output is what the tool returned, or the result's content where an `after_tool`
        hook replaced the result (or the tool's value could not be kept).
        """
        for result in results:
            if result.name in self.exit_tools and not result.is_error and result.call_id in ran:
                kept = ran[result.call_id] is result and result.call_id in self.values
                return result.name, self.values[result.call_id] if kept else result.content
        return None

    async def _traced_call(self, tools: dict[str, Tool], call: ToolCallPart) -> ToolResultPart:
        assert self.trace is not None
        return await self.trace.tool(call, tools.get(call.name), partial(self.call, tools, call))


class _InlineLogs:
    """The log capture of plain functions called one after another: set once, told which call runs.

    Set for each call, a capture would cost a context variable's set and reset and a partial.
    """

    __slots__ = ("call", "sink")

    def __init__(self, sink: LogSink) -> None:
        self.sink = sink
        self.call: ToolCallPart | None = None

    def __call__(self, record: logging.LogRecord) -> None:
        assert self.call is not None  # set before each call
        self.sink(self.call, record)


_call_id = attrgetter("id")


def _overlapping(tools: dict[str, Tool], calls: list[ToolCallPart]) -> bool:
    """Whether a tool of `calls` can overlap with others (a loop: cheaper than `any` over a generator)."""
    for call in calls:
        tool = tools.get(call.name)
        if tool is not None and tool.concurrent:
            return True
    return False
