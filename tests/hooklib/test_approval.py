from __future__ import annotations

import pytest

from hookline import Agent, ConfigError, HookError, ToolCallPart, ToolError, tool
from hookline.conversation import conversation_problem
from hookline.hooklib import RequireApproval
from hookline.hooklib.approval import APPROVED_KEY, PENDING_KEY
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions.memory import InMemorySessionStore

pytestmark = pytest.mark.anyio

deleted: list[str] = []
read: list[str] = []


@tool
def delete(path: str) -> str:
    """Delete a file."""
    if path == "missing":
        raise ToolError(f"no file {path}")
    deleted.append(path)
    return f"deleted {path}"


@tool
def look(path: str) -> str:
    """Read a file."""
    read.append(path)
    return f"contents of {path}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    deleted.clear()
    read.clear()


PLANS: dict[str, list[list[tuple[str, str, str]]]] = {
    "clean": [[("c1", "delete", "a")], [("c2", "delete", "b")]],
    "again": [[("c3", "delete", "c")]],
    "broken": [[("b1", "delete", "missing")], [("b2", "delete", "b")]],
    "mixed": [[("m1", "look", "x"), ("m2", "delete", "x")]],
}


def script(request: ModelRequest) -> ModelResponse:
    """Follow the plan of the latest prompt: one list of calls per model turn, then answer."""
    start = max(i for i, m in enumerate(request.messages) if m.role == "user")
    steps = PLANS[request.messages[start].text]
    turn = sum(1 for m in request.messages[start:] if m.tool_calls)
    if turn < len(steps):
        calls = [ToolCallPart(id=i, name=n, arguments={"path": p}) for i, n, p in steps[turn]]
        return ModelResponse(tool_calls=calls)
    results = [r.content for m in request.messages[start:] for r in m.tool_results]
    return ModelResponse(text="done: " + "; ".join(results))


def make_agent(approval: RequireApproval, *, after_tool: bool = True) -> Agent:
    hooks = {"before_tool": [approval], **({"after_tool": [approval]} if after_tool else {})}
    return Agent(model=FunctionModel(script), tools=[delete, look], hooks=hooks, session_store=InMemorySessionStore())


async def saved_state(agent: Agent, session_id: str) -> dict:
    return (await agent.session_store.get(session_id)).state


async def test_always_interrupts_before_every_matching_call() -> None:
    agent = make_agent(RequireApproval(["delete"], policy="always"))

    first = await agent.prompt("clean").session("s")
    second = await agent.resume("s", approvals={"c1": True})
    third = await agent.resume("s", approvals={"c2": True})

    assert first.stop_reason == "interrupted"
    assert [(i.call_id, i.name, i.arguments, i.reason) for i in first.interruptions] == [
        ("c1", "delete", {"path": "a"}, "delete needs approval")
    ]
    assert second.stop_reason == "interrupted"
    assert [i.call_id for i in second.interruptions] == ["c2"]
    assert third.stop_reason == "completed"
    assert await saved_state(agent, "s") == {}


async def test_an_interrupted_call_does_not_run_and_the_log_stays_valid() -> None:
    agent = make_agent(RequireApproval(policy="always"))

    result = await agent.prompt("clean").session("s")

    assert deleted == []
    session = await agent.session_store.get("s")
    messages = [e.to_message() for e in session.events if e.kind == "message"]
    assert conversation_problem(messages, allow_open_tail=True) is None
    assert messages[-1].tool_calls[0].id == "c1"
    assert result.usage.model_calls == 1


async def test_an_approved_call_runs_on_resume() -> None:
    agent = make_agent(RequireApproval(policy="always"))
    await agent.prompt("clean").session("s")

    resumed = await agent.resume("s", approvals={"c1": True})

    assert deleted == ["a"]
    assert resumed.messages[0].tool_results[0].content == "deleted a"
    assert [i.call_id for i in resumed.interruptions] == ["c2"]


async def test_once_asks_once_per_tool_and_remembers_it_in_the_session() -> None:
    agent = make_agent(RequireApproval(["delete"], policy="once"))

    first = await agent.prompt("clean").session("s")
    assert [i.call_id for i in first.interruptions] == ["c1"]
    assert await saved_state(agent, "s") == {PENDING_KEY: {"c1": "delete"}}

    resumed = await agent.resume("s", approvals={"c1": True})
    assert resumed.stop_reason == "completed"
    assert deleted == ["a", "b"]  # c2 ran without asking: delete was approved once
    assert await saved_state(agent, "s") == {PENDING_KEY: {}, APPROVED_KEY: ["delete"]}

    later = await agent.prompt("again").session("s")
    assert later.stop_reason == "completed"
    assert deleted == ["a", "b", "c"]


async def test_once_does_not_learn_a_refusal() -> None:
    agent = make_agent(RequireApproval(["delete"], policy="once"))
    await agent.prompt("clean").session("s")

    resumed = await agent.resume("s", approvals={"c1": "not that file"})

    assert resumed.stop_reason == "interrupted"
    assert [i.call_id for i in resumed.interruptions] == ["c2"]
    refusal = resumed.messages[0].tool_results[0]
    assert refusal.is_error
    assert "not that file" in refusal.content
    assert await saved_state(agent, "s") == {PENDING_KEY: {"c2": "delete"}}


async def test_once_at_before_tool_only_learns_from_the_result() -> None:
    agent = make_agent(RequireApproval(["delete"], policy="once"), after_tool=False)
    await agent.prompt("clean").session("s")

    resumed = await agent.resume("s", approvals={"c1": True})

    assert resumed.stop_reason == "completed"
    assert deleted == ["a", "b"]
    assert await saved_state(agent, "s") == {PENDING_KEY: {}, APPROVED_KEY: ["delete"]}


@pytest.mark.parametrize(("after_tool", "asked_again"), [(True, False), (False, True)])
async def test_an_approved_call_that_fails_is_learned_only_at_after_tool(after_tool: bool, asked_again: bool) -> None:
    agent = make_agent(RequireApproval(["delete"], policy="once"), after_tool=after_tool)
    await agent.prompt("broken").session("s")

    resumed = await agent.resume("s", approvals={"b1": True})

    assert resumed.messages[0].tool_results[0].is_error
    assert (resumed.stop_reason == "interrupted") is asked_again
    assert (await saved_state(agent, "s")).get(APPROVED_KEY) == (None if asked_again else ["delete"])


async def test_only_the_listed_tools_are_paused() -> None:
    agent = make_agent(RequireApproval(["delete"]))

    result = await agent.prompt("mixed").session("s")

    assert [i.call_id for i in result.interruptions] == ["m2"]
    assert read == ["x"]
    assert deleted == []


async def test_never_is_a_switch_that_turns_approval_off() -> None:
    agent = make_agent(RequireApproval(policy="never"))

    result = await agent.prompt("clean").session("s")

    assert (result.stop_reason, deleted) == ("completed", ["a", "b"])


async def test_an_interrupt_without_a_session_stops_the_run() -> None:
    agent = Agent(model=FunctionModel(script), tools=[delete], hooks={"before_tool": [RequireApproval()]})

    result = await agent.prompt("clean")

    assert result.stop_reason == "interrupted"
    assert [i.call_id for i in result.interruptions] == ["c1"]
    assert deleted == []


async def test_registered_at_another_point_it_fails_loudly() -> None:
    agent = Agent(model=FunctionModel(script), tools=[delete], hooks={"before_llm": [RequireApproval()]})

    with pytest.raises(HookError, match="before_tool"):
        await agent.prompt("clean")


@pytest.mark.parametrize("kwargs", [{"policy": "sometimes"}, {"tools": "delete"}, {"tools": [1]}])
def test_bad_arguments_are_config_errors(kwargs: dict) -> None:
    with pytest.raises(ConfigError, match="RequireApproval"):
        RequireApproval(**kwargs)
