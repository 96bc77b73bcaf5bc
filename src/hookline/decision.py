"""`Decision`: what a `before_tool` hook decided for one tool call.

Hooks record decisions through `State` (`skip_tool`, `deny_tool`, `interrupt`); the loop
applies them once every hook of the point has run, and a resumption plans them from the
approvals it is given (`hookline._run.resume`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from hookline.messages import ToolResultPart
from hookline.result import Interruption

__all__ = ["Decision"]


@dataclass(frozen=True, slots=True)
class Decision:
    """What a `before_tool` hook decided for one call."""

    action: Literal["skip", "deny", "interrupt"]
    """Answer without running (`skip`), refuse (`deny`), or pause the run for approval (`interrupt`)."""
    result: ToolResultPart | None = None
    """The result the call is answered with (none for `interrupt`)."""
    reason: str = ""
    """Why, as the hook gave it; for a call whose tool asked the user a question, the question."""
    response_schema: dict[str, Any] | None = None
    """For `interrupt` on a question: the JSON schema of the answer (None for an approval)."""
    inner: tuple[Interruption, ...] = ()
    """For `interrupt` of a call whose tool runs a sub-agent that paused: the sub-agent's paused
    calls, as the run lists them (their ids prefixed with this call's)."""
