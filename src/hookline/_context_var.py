"""Where a tool's code finds its run: a `ContextVar` holding the run's maker of `RunContext`s.

The loop sets it for the length of a run. asyncio copies the context into every task, and
`asyncio.to_thread` into the worker thread, so a call finds the run that made it, never a
concurrent one. `RunContext` is told apart by a mark on its class, so that `tools` and
`hooks` can spot a context parameter without importing `hookline.context` (which imports
`State`, which imports the tools).
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from hookline.messages import ToolCallPart

__all__ = ["CONTEXT_MARK", "ContextMaker", "current_contexts", "is_context_type"]

CONTEXT_MARK = "_hookline_run_context"
"""The class attribute that marks `RunContext` (and only it)."""

ContextMaker = Callable[[ToolCallPart], Any]
"""Makes the `RunContext` of one tool call."""

current_contexts: ContextVar[ContextMaker | None] = ContextVar("hookline_run_contexts", default=None)

_NAMED = re.compile(r"^\s*(?:[\w.]+\.)?RunContext\b")


def is_context_type(annotation: Any) -> bool:
    """Whether `annotation` is `RunContext` or `RunContext[...]` (or, unresolved, a string naming it)."""
    if isinstance(annotation, str):
        return _NAMED.match(annotation) is not None
    target = typing.get_origin(annotation) or annotation
    return getattr(target, CONTEXT_MARK, False) is True
