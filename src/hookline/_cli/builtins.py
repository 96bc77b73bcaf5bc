"""The default agent of `hookline run` and `hookline chat`: terse, with a few safe tools.

The tools touch nothing outside the process (no files, no network, no shell), so a first
run on any model, even a tiny offline one, can call a tool without risk.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hookline.agent import Agent
from hookline.models import Model
from hookline.tools import tool

__all__ = ["DEFAULT_INSTRUCTIONS", "add", "current_time", "default_agent", "multiply"]

DEFAULT_INSTRUCTIONS = (
    "You are a terse assistant. Use a tool when it helps: add and multiply for arithmetic, "
    "current_time for the date or time. Answer in one or two short sentences."
)
"""The default agent's instructions."""


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.

    """
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: The first number.
        b: The second number.

    """
    return a * b


@tool
def current_time() -> str:
    """Return the current date and time in UTC, as an ISO 8601 string."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def default_agent(model: str | Model) -> Agent:
    """Build the agent `hookline run` and `hookline chat` use when no `--agent` is given."""
    return Agent("hookline", model=model, instructions=DEFAULT_INSTRUCTIONS, tools=[add, multiply, current_time])
