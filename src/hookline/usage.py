"""Token and call counts of a run."""

from __future__ import annotations

from pydantic.dataclasses import dataclass

__all__ = ["Usage"]


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
