"""Token and call counts of a run, and what a model's tokens cost."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from pydantic.dataclasses import dataclass

__all__ = ["Prices", "Usage"]


@dataclass(slots=True)
class Usage:
    """What a run (or one model call) used.

    A pydantic dataclass rather than a model: the loop updates its counters on every turn,
    and plain attribute assignment keeps that cheap.
    """

    input_tokens: int = 0
    """Prompt tokens the provider counted."""
    output_tokens: int = 0
    """Completion tokens the provider counted."""
    model_calls: int = 0
    """Model calls made."""
    tool_calls: int = 0
    """Tool calls answered (run, skipped, denied or failed)."""

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        """Add `other`'s counts to this one, in place."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.model_calls += other.model_calls
        self.tool_calls += other.tool_calls


class Prices(BaseModel):
    """What a provider charges per million tokens of a model: set `Model.prices` to see each call's cost.

    hookline ships no price list (prices change, and differ by contract): you give them. Each
    model call's status line then records its cost as data (`metadata["model_call"]["cost"]`),
    and the inspector's traces add it up per prompt.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    input_per_mtok: float = Field(ge=0)
    """The price of a million input (prompt) tokens."""
    output_per_mtok: float = Field(ge=0)
    """The price of a million output (completion) tokens."""
    currency: str = Field(default="USD", min_length=1, max_length=8)
    """The currency the prices are in (a label: nothing converts it)."""

    def cost(self, usage: Usage) -> float:
        """What `usage`'s tokens cost, in `currency`."""
        return (usage.input_tokens * self.input_per_mtok + usage.output_tokens * self.output_per_mtok) / 1_000_000
