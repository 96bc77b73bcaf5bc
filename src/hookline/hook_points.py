"""`HookPoint`: the named places in the loop where hooks run.

A module of its own, below everything that uses it: `State` records which point is running,
the hooks are keyed by point, and the loop fires them, so none of those may be needed to name
a point.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["HookPoint"]


class HookPoint(StrEnum):
    """The named places in the loop where hooks run."""

    BEFORE_RUN = "before_run"
    """Once, before the first model call; the prompt is already in `state.messages`."""
    BEFORE_LLM = "before_llm"
    """Before every model call; `state.messages` is what the model will see."""
    AFTER_LLM = "after_llm"
    """After every model call; `state.response` is the answer, which may be edited."""
    BEFORE_TOOL = "before_tool"
    """Once per model turn with tool calls; `state.tool_calls` are the pending calls."""
    AFTER_TOOL = "after_tool"
    """Once per call run; `state.tool_call` and `state.tool_result` (replaceable)."""
    ON_EXIT = "on_exit"
    """The model answered without tool calls and the run is about to stop; it may go on."""
    AFTER_RUN = "after_run"
    """The run has stopped, whatever the reason: for memories, metrics, cleanup."""
