"""Hooks: user code that steps into the loop at the hook points (`HookPoint`).

A hook is anything with `run(state)`; it may also have `run_async(state)`,
`warm_up()`/`warm_up_async()` and `close()`/`close_async()`. `@hook` turns a plain or
async function into one. Hooks return nothing: they state their intent through `State`
(`state.control.exit(...)`, `state.skip_tool(...)`), and the loop applies it once every
hook of the point has run.

A hook function (or a `run`/`run_async` method) may take a `RunContext` instead of the
state or beside it, told apart by its annotation: `def h(ctx: RunContext)`,
`def h(state, ctx: RunContext)`.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from hookline._context_var import is_context_type
from hookline.context import RunContext
from hookline.errors import ConfigError
from hookline.hook_points import HookPoint
from hookline.state import State

__all__ = ["BoundHook", "FunctionHook", "Hook", "HookPoint", "hook", "normalize_hooks"]


_POINTS = ", ".join(p.value for p in HookPoint)


@runtime_checkable
class Hook(Protocol):
    """Anything with `run(state)`: the shape of a hook."""

    def run(self, state: State) -> None:
        """Read or change the live state."""


@dataclass(frozen=True, slots=True)
class FunctionHook:
    """A plain or async function used as a hook (made by `@hook`)."""

    function: Callable[..., Any]
    name: str

    def run(self, state: State) -> None:
        """Call a plain function (async functions go through `run_async`)."""
        self.function(state)

    async def run_async(self, state: State) -> None:
        """Call the function, awaiting it if it is async."""
        result = self.function(state)
        if inspect.isawaitable(result):
            await result


def hook(function: Callable[..., Any] | None = None, /, *, name: str | None = None) -> Any:
    """Make a plain or async function `f(state)` a hook: `@hook` or `@hook(name="budget")`.

    It may take a `RunContext` instead of the state or beside it: `f(ctx: RunContext)`, `f(state, ctx: RunContext)`.
    """

    def wrap(f: Callable[..., Any]) -> FunctionHook:
        if not callable(f):
            raise ConfigError(f"@hook needs a function taking the state, not {type(f).__name__}")
        return FunctionHook(f, name or str(getattr(f, "__qualname__", type(f).__name__)))

    return wrap(function) if function is not None else wrap


@dataclass(frozen=True, slots=True)
class BoundHook:
    """A hook with its methods looked up once: what the loop calls."""

    hook: Any
    name: str
    invoke: Callable[..., Any]
    is_async: bool
    plan: tuple[bool, ...] | None = None
    """For a hook that takes a `RunContext`: for each parameter, whether it gets the context (else the state)."""

    async def __call__(self, state: State, context: RunContext[Any] | None = None) -> None:
        """Run the hook on `state` (and `context`, for a hook that takes one)."""
        if self.plan is not None:
            args = [context if wants_context else state for wants_context in self.plan]
            result = self.invoke(*args)
            if self.is_async:
                await result
        elif self.is_async:
            await self.invoke(state)
        else:
            self.invoke(state)


def _bind(item: Any) -> BoundHook:
    if isinstance(item, BoundHook):
        return item
    if not isinstance(item, Hook) and callable(item):
        item = hook(item)
    if not isinstance(item, Hook):
        raise ConfigError(f"a hook needs a run(state) method or must be a function, not {type(item).__name__}")
    name = getattr(item, "name", None) or type(item).__name__
    run_async = getattr(item, "run_async", None)
    if isinstance(item, FunctionHook):
        is_async = inspect.iscoroutinefunction(item.function)
        plan = _context_plan(item.function, name)
        if plan is not None:
            return BoundHook(item, name, item.function, is_async, plan)
        if not is_async:
            return BoundHook(item, name, item.run, False)
    if run_async is not None:
        return BoundHook(item, name, run_async, True, _context_plan(run_async, name))
    return BoundHook(item, name, item.run, False, _context_plan(item.run, name))


def _context_plan(function: Callable[..., Any], name: str) -> tuple[bool, ...] | None:
    """Which parameters of a hook take the `RunContext` (the others the state); None if none does."""
    try:
        params = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # a name only a type checker sees: read the annotations as written
        hints = {}
    marks = [is_context_type(hints.get(p.name, p.annotation)) for p in params]
    if not any(marks):
        return None
    plan = []
    for param, is_context in zip(params, marks, strict=True):
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD) and (
            is_context or param.default is param.empty
        ):
            plan.append(is_context)
        elif is_context:
            raise ConfigError(f"hook {name!r}: the loop passes the RunContext by position; "
                              f"make {param.name!r} a positional parameter")
    return tuple(plan)


def _point(name: Any) -> HookPoint:
    try:
        return HookPoint(name)
    except ValueError:
        raise ConfigError(f"unknown hook point {name!r}; expected one of: {_POINTS}") from None


def normalize_hooks(hooks: Mapping[Any, Iterable[Any]] | None) -> dict[HookPoint, tuple[BoundHook, ...]]:
    """Check hook points and bind hooks: `{"before_llm": [h1, h2]}` → points to bound hooks.

    Raises:
        ConfigError: an unknown point, or something that is not a hook.
    """
    if hooks is None:
        return {}
    if not isinstance(hooks, Mapping):
        raise ConfigError(f"hooks must be a dict of hook point -> list of hooks, not {type(hooks).__name__}")
    bound: dict[HookPoint, tuple[BoundHook, ...]] = {}
    for key, items in hooks.items():
        point = _point(key)
        if not isinstance(items, list | tuple):
            raise ConfigError(f"the hooks of {point.value!r} must be a list, e.g. {{{point.value!r}: [my_hook]}}")
        bound[point] = bound.get(point, ()) + tuple(_bind(item) for item in items)
    return {point: items for point, items in bound.items() if items}


async def call_optional(target: Any, sync_name: str, async_name: str) -> None:
    """Call `target.async_name()` if it has one, else `target.sync_name()` if it has that."""
    method = getattr(target, async_name, None)
    if method is not None:
        await method()
        return
    method = getattr(target, sync_name, None)
    if method is not None:
        result = method()
        if isinstance(result, Awaitable):
            await result
