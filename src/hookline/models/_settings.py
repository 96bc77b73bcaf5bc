"""What every adapter does the same way with `ModelSettings`: pick the fields a call can use.

Each adapter maps the fields to its provider's parameters itself (the names and shapes
differ); here is what they share: the fields that only make sense with tools are left out
of a call without tools, and whatever an adapter leaves out is said on the
`hookline.models` logger at debug level, never raised: the same settings serve an agent
whatever its model.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from hookline.models.base import ModelSettings

__all__ = ["TOOL_ONLY", "left_out", "usable"]

logger = logging.getLogger("hookline.models")

TOOL_ONLY = frozenset({"tool_choice", "parallel_tool_calls"})
"""The fields sent only on a call that offers tools (providers reject them otherwise)."""


def left_out(provider: str, names: Iterable[str], why: str) -> None:
    """Say at debug level that the settings `names` were not sent to `provider`, and why."""
    names = sorted(names)
    if names:
        logger.debug("%s: model settings left out (%s): %s", provider, why, ", ".join(names))


def usable(settings: ModelSettings, provider: str, *, tools: bool) -> dict[str, Any]:
    """The fields of `settings` that are set, less the tool-only ones when the call offers no tools."""
    values = settings.given()
    if not tools:
        left_out(provider, [name for name in values if name in TOOL_ONLY], "the call offers no tools")
        values = {name: value for name, value in values.items() if name not in TOOL_ONLY}
    return values
