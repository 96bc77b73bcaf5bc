"""`AgentSpec`: what a run reads of its agent.

`Agent` imports the loop (a prompt request runs one), so the loop, and the tracing it calls,
cannot import `Agent` back without a cycle. They see the agent through this protocol, which
`Agent` fulfils; mypy checks that where `Agent` hands itself to a run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol

from pydantic import TypeAdapter

from hookline.events import StatusOptions
from hookline.hook_points import HookPoint
from hookline.hooks import BoundHook
from hookline.models.base import Model, ToolSpec
from hookline.state import State
from hookline.tools import Tool

__all__ = ["AgentSpec", "Instructions"]

Instructions = str | Callable[[State], str] | None
"""A system prompt, or a function of the state returning one (called before every model call)."""


class AgentSpec(Protocol):
    """The agent as a run sees it: its configuration, its tools per turn, and its hooks."""

    name: str
    """The author name in events."""
    app: str
    """The application name sessions are created under."""
    instructions: Instructions
    """The system prompt, or a function of the state returning one."""
    hooks: dict[HookPoint, tuple[BoundHook, ...]]
    """The hooks of each point, in order."""
    max_turns: int
    """Model calls allowed per run."""
    on_max_turns: Literal["raise", "final_answer"]
    """What happens when the turns run out."""
    tool_concurrency: int
    """How many tool calls of one turn run at once."""
    status: StatusOptions
    """Which status events are written."""
    output_adapter: TypeAdapter[Any] | None
    """Validates the final answer into the output type (None: the answer is text)."""
    exit_conditions: frozenset[str]
    """Tools whose successful run ends the run, their value its output."""

    @property
    def model(self) -> Model:
        """The model the run calls."""

    def tools_for(self, state: State) -> dict[str, Tool]:
        """The tools offered this turn, by name."""

    def specs_for(self, tools: dict[str, Tool]) -> list[ToolSpec]:
        """The specs of `tools`, as a model request carries them."""

    async def warm_up(self) -> None:
        """Warm up the hooks once and connect the toolsets."""
