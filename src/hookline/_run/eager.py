"""`overlap`: run jobs concurrently without paying a task for those that never wait.

`asyncio.gather` wraps every coroutine in a task, so the event loop must step each one
and then wake the gatherer: three loop iterations for a batch even when every coroutine
could finish at once, as an `async def` tool that never awaits does. `overlap` instead
begins the jobs one by one on the spot: a coroutine takes its first step in a copy of the
context (`first_step`, as a task would run it), and a caller may begin a job its own,
cheaper way (the tool runner steps a tool's function itself). One that finishes in that
first step costs a function call. The first one that waits goes on in the caller's own
task, as if the caller awaited it; only the ones after it, not begun yet, get tasks of
their own, so they still overlap with it.

A coroutine runs whole in one task, never moved from one to another after it started:
what binds to the current task (an `asyncio.timeout`, an anyio cancel scope, as MCP
clients use) stays right. Python 3.12's eager task factory gives tasks the same start.
"""

from __future__ import annotations

import asyncio
import contextvars
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator, Sequence
from typing import Any, Generic, TypeVar

__all__ = ["Waiting", "drive", "first_step", "go_on", "overlap"]

_K = TypeVar("_K")
_J = TypeVar("_J")
_T = TypeVar("_T")


class Waiting(Generic[_T]):
    """What a job's first step gives when the job must wait: the rest of it, to await in the same task."""

    __slots__ = ("rest",)

    def __init__(self, rest: Awaitable[_T]) -> None:
        self.rest = rest


def first_step(coro: Coroutine[Any, Any, _T]) -> _T | Waiting[_T]:
    """Step `coro` once in a copy of the context (as a task would): its value, or `Waiting` with the rest."""
    context = contextvars.copy_context()
    try:
        awaited = context.run(coro.send, None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    return Waiting(drive(coro, awaited, context))


def overlap(
    jobs: Sequence[_J], begin: Callable[[_J], _T | Waiting[_T]], results: dict[_K, _T], key: Callable[[_J], _K]
) -> Awaitable[None] | None:
    """Begin the jobs with `begin` (`first_step` for coroutines); each one's value goes in `results` under its `key`.

    Returns None when every job finished in its first step; else what the caller must
    await for the others to finish (so a caller cancelled meanwhile still has the values
    of those that finished). An exception propagates: one raised in a first step at once
    (the coroutines after it are closed unstarted); one from the job that goes on in the
    caller's task when it comes (the later ones are cancelled); one from a later job, as
    `asyncio.gather` gives it, once the first that waited is done.
    """
    for number, job in enumerate(jobs):
        try:
            step = begin(job)
        except BaseException:
            _close(jobs[number + 1 :])
            raise
        if isinstance(step, Waiting):
            return go_on(key(job), step, jobs[number + 1 :], begin, results, key)
        results[key(job)] = step
    return None


def go_on(
    first: _K,
    step: Waiting[_T],
    later: Sequence[_J],
    begin: Callable[[_J], _T | Waiting[_T]],
    results: dict[_K, _T],
    key: Callable[[_J], _K],
) -> Awaitable[None]:
    """What `overlap` gives once the job keyed `first` waits at `step`.

    Its rest goes on in the caller's task; the `later` jobs, not begun, begin in tasks of
    their own, so they overlap with it.
    """
    tasks = [asyncio.ensure_future(_keep(key(job), job, begin, results)) for job in later]
    return _finish(first, step.rest, tasks, results)


async def _finish(
    key: _K, rest: Awaitable[_T], later: Sequence[asyncio.Future[None]], results: dict[_K, _T]
) -> None:
    try:
        results[key] = await rest
    except BaseException:
        for task in later:
            task.cancel()
        raise
    if later:
        await asyncio.gather(*later)


async def _keep(key: _K, job: _J, begin: Callable[[_J], _T | Waiting[_T]], results: dict[_K, _T]) -> None:
    step = begin(job)
    results[key] = await step.rest if isinstance(step, Waiting) else step


def _close(jobs: Sequence[Any]) -> None:
    """Close the coroutines among jobs never begun, so none is reported as never awaited."""
    for job in jobs:
        if isinstance(job, types.CoroutineType):
            job.close()


@types.coroutine
def drive(coro: Coroutine[Any, Any, _T], awaited: Any, context: contextvars.Context) -> Generator[Any, None, _T]:
    """Drive `coro`, whose first step yielded `awaited`, to its end in the awaiting task, each step in `context`."""
    while True:
        try:
            sent = yield awaited
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # a cancellation: `coro` handles it, or not
            step: Any = coro.throw
            value: Any = exc
        else:
            step, value = coro.send, sent
        try:
            awaited = context.run(step, value)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
