"""Reasoning parts survive every store: a thinking block's signature comes back byte for byte.

A run on Anthropic's fake stores the model's thinking (and a redacted block) in the session;
a second run, through a new store instance that reads the log back from the database (the
same instance for the in-memory store), sends them to the API exactly as they came, first
in their assistant message.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hookline import Agent, ReasoningPart, ToolCallPart, tool
from hookline.models.anthropic import AnthropicModel
from hookline.sessions import SessionStore
from hookline.testing import FakeAnthropicServer, Reply

pytestmark = pytest.mark.anyio

# Awkward text on purpose: quotes, a backslash, a newline, NUL and astral characters.
THINKING = ReasoningPart(text='Add them: "1" \\ plus\n2 \x00 \U0001f600', signature="EqQBCgIYAhIM+/sig==")
REDACTED = ReasoningPart(data="EmwKAhgBEgy3va+redacted/==")


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_thinking_round_trips_through_the_store(backend: str, open_store: Callable[[], SessionStore]) -> None:
    store = open_store()
    with FakeAnthropicServer() as server:
        server.enqueue_reply(Reply(reasoning=[THINKING, REDACTED], tool_calls=[
            ToolCallPart(id="toolu_1", name="add", arguments={"a": 1, "b": 2})
        ]))
        server.enqueue_text("3")
        server.enqueue_text("Still 3.")
        model = AnthropicModel("claude-sonnet-4-6", base_url=server.base_url, api_key="k")
        async with model:
            first = Agent(model=model, tools=[add], session_store=store)
            await first.prompt("1+2?").session("s-1")
            again = Agent(model=model, tools=[add], session_store=store if backend == "memory" else open_store())
            result = await again.prompt("And now?").session("s-1")
        server.assert_complete()

    assert result.output == "Still 3."
    assistant = server.requests[2]["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][:2] == [
        {"type": "thinking", "thinking": THINKING.text, "signature": THINKING.signature},
        {"type": "redacted_thinking", "data": REDACTED.data},
    ]
    assert assistant["content"][2]["type"] == "tool_use"
