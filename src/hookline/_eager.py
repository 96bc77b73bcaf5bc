"""`overlap`: run coroutines concurrently without paying a task for those that never wait.

`asyncio.gather` wraps every coroutine in a task, so the event loop must step each one
and then wake the gatherer: three loop iterations for a batch even when every coroutine
could finish at once, as an `async def` tool that never awaits does. `overlap` instead
starts the coroutines one by one on the spot, each in a copy of the context (as a task
would run it). One that finishes in that first step costs a function call. The first one
that waits goes on in the caller's own task, as if the caller awaited it; only the ones
after it, not started yet, get tasks of their own, so they still overlap with it.

A coroutine runs whole in one task, never moved from one to another after it started:
what binds to the current task (an `asyncio.timeout`, an anyio cancel scope, as MCP
clients use) stays right. Python 3.12's eager task factory gives tasks the same start.
"""

from __future__ import annotations

import asyncio
import contextvars
import types
from collections.abc import Awaitable, Coroutine, Generator, Sequence
from typing import Any, TypeVar

__all__ = ["overlap"]

_K = TypeVar("_K")
_T = TypeVar("_T")


def overlap(jobs: Sequence[tuple[_K, Coroutine[Any, Any, _T]]], results: dict[_K, _T]) -> Awaitable[None] | None:
    """Start the coroutines of `jobs`; each one's value goes in `results` under its key once it is done.

    Returns None when every coroutine finished in its first step; else what the caller
    must await for the others to finish (so a caller cancelled meanwhile still has the
    values of those that finished). An exception propagates: one raised in a first step
    at once (the coroutines after it are closed unstarted); one from the coroutine that
    goes on in the caller's task when it comes (the later ones are cancelled); one from a
    later coroutine, as `asyncio.gather` gives it, once the first that waited is done.
    """
    for number, (key, coro) in enumerate(jobs):
        context = contextvars.copy_context()
        try:
            awaited = context.run(coro.send, None)
        except StopIteration as done:
            results[key] = done.value
            continue
        except BaseException:
            _close(jobs[number + 1 :])
            raise
        later = [asyncio.ensure_future(_keep(k, c, results)) for k, c in jobs[number + 1 :]]
        return _finish(key, _go_on(coro, awaited, context), later, results)
    return None


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


async def _keep(key: _K, coro: Coroutine[Any, Any, _T], results: dict[_K, _T]) -> None:
    results[key] = await coro


def _close(jobs: Sequence[tuple[Any, Coroutine[Any, Any, Any]]]) -> None:
    for _, coro in jobs:
        coro.close()


@types.coroutine
def _go_on(coro: Coroutine[Any, Any, _T], awaited: Any, context: contextvars.Context) -> Generator[Any, None, _T]:
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
