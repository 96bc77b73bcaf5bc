"""A call paused inside a sub-agent, over `POST /v1/ai-sdk/chat`, answered by the `ai` package's own chat logic.

The lead agent's one call (`research`, id p1) runs the researcher as a sub-agent, whose call
`delete` (id p1/r1) needs approval. The chat holds a tool part for p1 only: the approval asks on
that part, its descriptor naming the inner call, and the answer to it answers the inner call.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from hookline.sessions import SessionStore
from subagents.agents import lead, researcher
from support.node_kit import run_node

from .live import LiveServer

DELETED: list[str] = []
"""What the researcher's `delete` deleted."""


@pytest.fixture
def lead_server(make_server: Callable[..., LiveServer], store: SessionStore) -> LiveServer:
    DELETED.clear()
    return make_server(agent=lead(researcher(DELETED), store))


def _chat(server: LiveServer, scenario: str) -> dict[str, Any]:
    seen: dict[str, Any] = run_node("ai_sdk_chat.mjs", server.url, f"c-{uuid.uuid4().hex[:8]}", scenario)
    assert seen["errors"] == [], seen["errors"]
    return seen


def _tool_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in message["parts"] if p["type"].startswith("tool-")]


def test_an_approval_inside_a_sub_agent_asks_on_the_call_that_runs_it(lead_server: LiveServer) -> None:
    seen = _chat(lead_server, "approval")
    (paused,) = _tool_parts(seen["paused"][-1])
    assert (paused["type"], paused["toolCallId"], paused["state"]) == ("tool-research", "p1", "approval-requested")
    (inner,) = paused["approval"]["descriptor"]["calls"]
    assert (inner["toolCallId"], inner["toolName"], inner["input"], inner["agent"]) == (
        "p1/r1", "delete", {"path": "/tmp/old"}, "researcher")
    assert [m["role"] for m in seen["messages"]] == ["user", "assistant"], "the resumed answer is the same message"
    (tool,) = _tool_parts(seen["messages"][-1])
    assert (tool["state"], tool["output"]) == ("output-available", "researcher: deleted /tmp/old")
    assert DELETED == ["/tmp/old"]


def test_a_refusal_inside_a_sub_agent_reaches_its_call(lead_server: LiveServer) -> None:
    seen = _chat(lead_server, "deny")
    (tool,) = _tool_parts(seen["messages"][-1])
    assert tool["state"] == "output-available"
    assert "not today" in tool["output"]
    assert DELETED == []
