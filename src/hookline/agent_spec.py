"""`AgentSpec`: what a run reads of its agent; `RequestedAgent`: what a prompt request reads.

`Agent` imports the loop and `PromptRequest` (`agent.prompt(...)` makes one, which runs the
loop), so neither they nor the tracing the loop calls can import `Agent` back without a
cycle. They see the agent through these protocols, which `Agent` fulfils; mypy checks that
where `Agent` hands itself over.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import TypeAdapter

from hookline.events import StatusOptions
from hookline.hook_points import HookPoint
from hookline.hooks import BoundHook
from hookline.models.base import Model, ModelSettings, ToolSpec
from hookline.sessions import SessionStore
from hookline.state import State
from hookline.tools import Tool

__all__ = ["AgentSpec", "Instructions", "RequestedAgent", "ToolCatalog"]

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


@dataclass(frozen=True, slots=True)
class ToolCatalog:
    """The tools an agent offers its model, as far as they can be told outside a run (`Agent.tool_catalog()`)."""

    specs: tuple[ToolSpec, ...]
    """Their specs, as a model request carries them (none when `chosen_per_turn`)."""
    chosen_per_turn: bool = False
    """A function of the state picks the tools before every model call: which, only a run knows."""
    toolsets_offline: bool = False
    """Its toolsets (e.g. MCP servers) are not connected now: `specs` holds only the plain tools."""


class RequestedAgent(AgentSpec, Protocol):
    """What a prompt request reads of its agent, besides what its run does."""

    deps_type: Any
    """The type of the deps every run must be given, or None."""
    model_settings: ModelSettings
    """The settings of every model call, which a request's own are laid over."""

    @property
    def session_store(self) -> SessionStore:
        """The store of a request's session when the request names none."""

    def tool_catalog(self) -> ToolCatalog:
        """The tools the agent offers its model, as far as they can be told outside a run."""
