"""`ModelGate`: what a model call may let out before its checks pass.

A guardrail may run beside a model call (`State.run_beside_model`) or judge its answer
(`after_llm`) before anyone sees it. While the call streams, its deltas are then held here
instead of going out, and let out (`release`) once the checks pass, or dropped (`drop`) when
one trips. A call cancelled because a check tripped keeps nothing of what it said
(`discarding`), where a call cancelled by the user keeps its cut-off text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from hookline.errors import HookError
from hookline.hook_points import HookPoint

__all__ = ["ModelGate", "ask_beside"]

T = TypeVar("T")


class ModelGate:
    """Holds a model call's streamed deltas until its checks pass.

    Args:
        holds_answers: Hold every call's deltas until its `after_llm` hooks have run (an
            output guardrail that keeps answers from streams: `holds_stream`).
    """

    __slots__ = ("discarding", "held", "holds_answers")

    def __init__(self, holds_answers: bool = False) -> None:
        self.holds_answers = holds_answers
        self.held: list[Callable[[], None]] | None = None
        """The held deltas' sends, in order; None while nothing is held."""
        self.discarding = False
        """A check tripped: the model call is being cancelled, and what it said is not kept."""

    def hold(self) -> None:
        """Hold the deltas from now on."""
        if self.held is None:
            self.held = []

    def release(self) -> None:
        """Let the held deltas out, in order, and stop holding."""
        held, self.held = self.held, None
        for send in held or ():
            send()

    def drop(self) -> None:
        """Forget the held deltas and stop holding: they never go out."""
        self.held = None


async def ask_beside(
    asking: Coroutine[Any, Any, T], checks: list[tuple[str, Awaitable[None]]], gate: ModelGate,
    stopped: Callable[[], bool],
) -> T | None:
    """Await `asking` (a model call) while `checks` run; None when, once they end, `stopped()` says they stopped it.

    The call's deltas are held until the checks end. When they stopped the run, the call is
    cancelled and its deltas dropped; else they go out (still held when the gate holds answers).

    Raises:
        HookError: A check raised; the model call is cancelled.
    """
    gate.hold()
    model = asyncio.ensure_future(asking)
    try:
        await _all(checks)
        if stopped():
            gate.discarding = True
            await _cancelled(model)
            gate.drop()
            return None
    except BaseException:
        await _cancelled(model)
        gate.drop()
        raise
    finally:
        gate.discarding = False
    if not gate.holds_answers:
        gate.release()
    return await model


async def _all(checks: list[tuple[str, Awaitable[None]]]) -> None:
    async def named(name: str, check: Awaitable[None]) -> None:
        try:
            await check
        except Exception as exc:
            raise HookError(f"check {name!r} beside the model call failed: {type(exc).__name__}: {exc}",
                            hook=name, point=HookPoint.BEFORE_LLM.value) from exc

    tasks = [asyncio.ensure_future(named(name, check)) for name, check in checks]
    try:
        await asyncio.gather(*tasks)
    finally:  # one failed, or the run was cancelled: the others end too
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _cancelled(task: asyncio.Future[Any]) -> None:
    """Cancel `task` and wait until it has ended (whatever it raises meanwhile)."""
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
