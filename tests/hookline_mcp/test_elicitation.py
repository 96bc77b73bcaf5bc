"""A server's question to the user (MCP elicitation) pauses the run like an approval; the answer goes back on resume.

Run against a real server (`servers/asking_server.py`) in both protocol eras and over both
transports: on 2025-era connections the server waits with its `elicitation/create` open,
on 2026-07-28 it answers `input_required` and the client retries with the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hookline import Agent, ToolCallPart
from hookline._run.resume import paused_calls
from hookline.mcp import MCPToolset
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import InMemorySessionStore, SessionStore

from .harness import lines

pytestmark = pytest.mark.anyio

QUESTION = "Which name and plan should the account have?"


def model() -> FunctionModel:
    """Calls `sign_up`, then answers with what it returned."""

    def answer(request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if last.role == "user":
            return ModelResponse(tool_calls=[ToolCallPart(id="c1", name="sign_up", arguments={})])
        return ModelResponse(text=last.tool_results[0].content)

    return FunctionModel(answer)


async def paused(toolset: MCPToolset, store: SessionStore) -> Agent:
    """An agent whose run on session "s" paused at the server's question."""
    agent = Agent(model=model(), tools=[toolset], session_store=store)
    result = await agent.prompt("open an account").session("s")
    assert result.stop_reason == "interrupted"
    return agent


async def test_a_servers_question_pauses_the_run_with_its_schema(toolset_of: Callable[..., MCPToolset],
                                                                 state: Path) -> None:
    store = InMemorySessionStore()
    async with Agent(model=model(), tools=[toolset_of("asking_server")], session_store=store) as agent:
        result = await agent.prompt("open an account").session("s")

    assert result.stop_reason == "interrupted"
    (question,) = result.interruptions
    assert (question.call_id, question.name, question.reason) == ("c1", "sign_up", QUESTION)
    assert question.response_schema is not None
    assert question.response_schema["properties"]["plan"] == {"type": "string", "enum": ["free", "pro"],
                                                              "default": "free"}
    assert paused_calls(await store.events("s")) == [question]
    assert lines(state, "calls") == ["sign_up asked"]


@pytest.mark.parametrize(("given", "said", "server_saw"), [
    ({"response": {"name": "Ada"}}, "signed up Ada on free", 'sign_up accept {"name": "Ada", "plan": "free"}'),
    ({"response": {"name": "Bo", "plan": "pro"}}, "signed up Bo on pro",
     'sign_up accept {"name": "Bo", "plan": "pro"}'),
    (False, "no account: the user chose decline", "sign_up decline"),
    ({"cancel": True}, "no account: the user chose cancel", "sign_up cancel"),
])
async def test_the_answer_on_resume_goes_back_to_the_server(toolset_of: Callable[..., MCPToolset], state: Path,
                                                            given: Any, said: str, server_saw: str) -> None:
    store = InMemorySessionStore()
    toolset = toolset_of("asking_server")
    async with await paused(toolset, store) as agent:
        result = await agent.resume("s", approvals={"c1": given})

    assert (result.stop_reason, result.output) == ("completed", said), "the schema's default fills what was left out"
    assert lines(state, "calls") == ["sign_up asked", server_saw], "the call the server waited on, answered"


async def test_an_answer_after_a_restart_is_given_when_the_server_asks_again(
        toolset_of: Callable[..., MCPToolset], state: Path) -> None:
    store = InMemorySessionStore()
    first = await paused(toolset_of("asking_server"), store)
    await first.close()  # as a process that stopped: its open call is gone with it
    async with Agent(model=model(), tools=[toolset_of("asking_server")], session_store=store) as agent:
        result = await agent.resume("s", approvals={"c1": {"response": {"name": "Ada"}}})

    assert result.output == "signed up Ada on free"
    # the call is sent again (the first one went with its connection), and the server's new question answered
    assert lines(state, "calls") == ["sign_up asked", "sign_up asked", 'sign_up accept {"name": "Ada", "plan": "free"}']


async def test_outside_a_run_the_question_is_cancelled(toolset_of: Callable[..., MCPToolset], state: Path) -> None:
    async with toolset_of("asking_server") as toolset:
        (sign_up,) = toolset.tools()
        assert await sign_up.call({}) == "no account: the user chose cancel"
