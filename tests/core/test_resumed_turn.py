"""A resume takes up its paused turn on a path of its own (issue 29, the house, item 5): the
approved calls run without passing `before_tool` again (docs/hooks.md), `after_tool` reads each,
and the calls of the turns after it pass `before_tool` as any call does."""

from __future__ import annotations

import pytest

from hookline import Agent, HookPoint, State, hook, tool
from hookline.sessions import InMemorySessionStore

from .scripted import Script, answer, call, calls

pytestmark = pytest.mark.anyio

SEEN: list[tuple[str, list[str]]] = []


@tool
def deploy(target: str) -> str:
    """Deploy to a target."""
    return f"deployed to {target}"


@hook
def watch_and_pause(state: State) -> None:
    if state.point == HookPoint.BEFORE_TOOL:
        SEEN.append(("before_tool", [c.id for c in state.tool_calls]))
        for pending in state.tool_calls:
            state.interrupt(pending.id, "a human decides")
    else:
        assert state.tool_call is not None
        SEEN.append(("after_tool", [state.tool_call.id]))


async def test_the_approved_calls_skip_before_tool_and_the_next_turns_calls_pass_it() -> None:
    SEEN.clear()
    script = Script(calls(call("c1", "deploy", target="prod")), calls(call("c2", "deploy", target="eu")), answer("-"))
    agent = Agent(model=script.model, tools=[deploy], session_store=InMemorySessionStore(),
                  hooks={"before_tool": [watch_and_pause], "after_tool": [watch_and_pause]})
    assert (await agent.prompt("ship it").session("s")).stop_reason == "interrupted"

    resumed = await agent.resume("s", approvals={"c1": True})

    assert SEEN == [("before_tool", ["c1"]), ("after_tool", ["c1"]), ("before_tool", ["c2"])]
    assert resumed.stop_reason == "interrupted"
    assert [i.call_id for i in resumed.interruptions] == ["c2"]
    assert resumed.messages[0].tool_results[0].content == "deployed to prod"
