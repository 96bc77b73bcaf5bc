"""`Budget`: stop a run cleanly once it has used up its tokens, model calls or tool calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hookline.errors import ConfigError

if TYPE_CHECKING:
    from hookline.state import State

__all__ = ["Budget"]


class Budget:
    """A hook that ends the run (`stop_reason == "hook_exit"`) when a limit is reached.

    Register it at `before_llm`: it is checked before every model call, and once a limit is
    reached the next call is never made. The call that crosses `max_tokens` completes (its
    size is known only afterwards); once `max_tool_calls` results are in, the model does
    not get to read them. The limits count this run only (`state.usage`): tokens as the
    provider reports them, model calls made, and tool calls answered. Unlike
    `Agent(max_turns=...)`, which raises `MaxTurnsExceeded`, a budget ends the run as a
    normal result whose `exit_reason` says which limit was hit.

    Example:
        ```python
        agent = Agent(model=..., tools=[search], hooks={"before_llm": [Budget(max_turns=5)]})
        result = await agent.prompt("research hooks")
        if result.stop_reason == "hook_exit":
            print(result.exit_reason)   # "budget: 5 model calls reached (max_turns=5)"
        ```

    Args:
        max_tokens: Input plus output tokens allowed.
        max_turns: Model calls allowed.
        max_tool_calls: Tool calls allowed.

    Raises:
        ConfigError: No limit was given, or a limit is not a positive integer.

    """

    def __init__(
        self, max_tokens: int | None = None, max_turns: int | None = None, max_tool_calls: int | None = None
    ) -> None:
        limits = {"max_tokens": max_tokens, "max_turns": max_turns, "max_tool_calls": max_tool_calls}
        for key, value in limits.items():
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ConfigError(f"Budget({key}=...) takes a positive integer or None, not {value!r}")
        if all(value is None for value in limits.values()):
            raise ConfigError("Budget() needs at least one limit: max_tokens, max_turns or max_tool_calls")
        self.max_tokens = max_tokens
        self.max_turns = max_turns
        self.max_tool_calls = max_tool_calls

    def __repr__(self) -> str:
        return (
            f"Budget(max_tokens={self.max_tokens!r}, max_turns={self.max_turns!r}, "
            f"max_tool_calls={self.max_tool_calls!r})"
        )

    def run(self, state: State) -> None:
        """Exit the run if any limit is reached."""
        reason = self.exceeded(state)
        if reason is not None:
            state.control.exit(f"budget: {reason}")

    def exceeded(self, state: State) -> str | None:
        """Which limit `state.usage` has reached, as a phrase, or None while all are left."""
        usage = state.usage
        checks = (
            (self.max_tokens, usage.total_tokens, "tokens used", "max_tokens"),
            (self.max_turns, usage.model_calls, "model calls reached", "max_turns"),
            (self.max_tool_calls, usage.tool_calls, "tool calls reached", "max_tool_calls"),
        )
        for limit, used, what, key in checks:
            if limit is not None and used >= limit:
                return f"{used} {what} ({key}={limit})"
        return None
