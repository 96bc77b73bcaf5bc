"""Small checks of what users pass to `Agent` and `PromptRequest`."""

from __future__ import annotations

from typing import Any

__all__ = ["positive", "type_name"]


def positive(value: Any) -> bool:
    """Whether `value` is an int of at least 1 (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def type_name(cls: Any) -> str:
    """A class's name for a message; anything else as its repr."""
    return cls.__name__ if isinstance(cls, type) else repr(cls)
