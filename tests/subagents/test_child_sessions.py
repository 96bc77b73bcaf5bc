"""Sub-agents in child sessions (issue 27, part 1): an agent used as a tool runs in a session of the
caller's store linked to the call, its approvals pause the caller, and the caller's resume answers
them and lets it carry on to the end."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hookline import Agent, ConfigError, Event, RunContext, tool
from hookline._run.resume import paused_calls
from hookline.events import run_end
from hookline.sessions import SessionStore
from hookline.subagents import child_session_id, children_of
from support.run_paths import PATHS, run_by

from .agents import delegate, lead, middle, researcher, worker

pytestmark = pytest.mark.anyio


def _messages(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.role or "", e.text or ",".join(p.type for p in e.parts)) for e in events if e.kind == "message"]


async def test_the_sub_agent_runs_in_a_child_session_linked_both_ways(store: SessionStore) -> None:
    effects: list[str] = []
    boss = lead(researcher(effects, approval=False), store)
    result = await boss.prompt("clean up").session("s")

    assert (result.stop_reason, result.output) == ("completed", "lead: researcher: deleted /tmp/old")
    assert child_session_id("s", "p1") == "s.p1"
    child = await store.events("s.p1", view="all")
    assert child[0].kind == "marker"
    assert child[0].metadata == {"parent_session_id": "s", "parent_call_id": "p1"}
    assert _messages(child)[0] == ("user", "clean up")
    assert run_end(child[-1]) == "completed"
    parent = await store.events("s", view="all")
    (link,) = [e for e in parent if "child_session_id" in e.metadata]
    assert (link.author, link.text) == ("researcher", "researcher: runs in session s.p1")
    assert link.metadata == {"agent": "researcher", "agent_call_id": "p1", "child_session_id": "s.p1"}
    assert [(c.session_id, c.call_id, c.agent) for c in children_of(parent)] == [("s.p1", "p1", "researcher")]
    assert not [e for e in parent if e.kind == "message" and e.author == "researcher"], "its messages stay its own"
    assert (await store.get("s.p1", user="default", with_events=False)).user == "default"


async def test_without_a_session_the_sub_agent_runs_without_one() -> None:
    effects: list[str] = []
    boss = lead(researcher(effects, approval=False))
    result = await boss.prompt("clean up")
    assert result.output == "lead: researcher: deleted /tmp/old"
    assert await boss.session_store.list() == [], "no session was made"


@pytest.mark.parametrize("path", PATHS)
async def test_an_approval_inside_the_child_pauses_the_caller_and_its_resume_lets_the_child_finish(
    store: SessionStore, path: str
) -> None:
    effects: list[str] = []
    boss = lead(researcher(effects), store)
    paused, _ = await run_by(path, boss.prompt("clean up").session("s"))

    assert paused.stop_reason == "interrupted"
    (item,) = paused.interruptions
    assert (item.call_id, item.name, item.arguments, item.agent) == ("p1/r1", "delete", {"path": "/tmp/old"},
                                                                     "researcher")
    assert paused_calls(await store.events("s")) == [item], "the caller's log lists the sub-agent's paused call"
    assert effects == []
    assert run_end((await store.events("s.p1"))[-1]) == "interrupted"

    done, streamed = await run_by(path, boss.resume("s", {"p1/r1": True}))

    assert (done.stop_reason, done.output) == ("completed", "lead: researcher: deleted /tmp/old")
    assert effects == ["/tmp/old"]
    child = await store.events("s.p1", view="all")
    assert [m for m in _messages(child) if m[0] == "user"] == [("user", "clean up")], "the child went on, not anew"
    assert run_end(child[-1]) == "completed"
    assert paused_calls(await store.events("s")) == []
    if path == "stream":
        assert "researcher: run completed" in [e.text for e in streamed], "its status reaches the caller live"


async def test_a_refusal_reaches_the_sub_agent(store: SessionStore) -> None:
    effects: list[str] = []
    boss = lead(researcher(effects), store)
    await boss.prompt("clean up").session("s")
    done = await boss.resume("s", {"p1/r1": "not that file"})

    assert done.output == "lead: researcher: the user refused the call to delete: not that file"
    assert effects == []


async def test_a_resume_that_answers_nothing_of_the_child_leaves_it_paused(store: SessionStore) -> None:
    effects: list[str] = []
    boss = lead(researcher(effects), store)
    first = await boss.prompt("clean up").session("s")
    again = await boss.resume("s", {})

    assert again.stop_reason == "interrupted"
    assert again.interruptions == first.interruptions
    assert paused_calls(await store.events("s")) == first.interruptions
    assert (await boss.resume("s", {"p1/r1": True})).stop_reason == "completed"


async def test_an_unknown_inner_call_is_refused_before_anything_is_recorded(store: SessionStore) -> None:
    boss = lead(researcher([]), store)
    await boss.prompt("clean up").session("s")
    before = len(await store.events("s")), len(await store.events("s.p1"))

    with pytest.raises(ConfigError, match=r"never made; calls awaiting a decision: p1/r1"):
        await boss.resume("s", {"p1/r9": True})
    assert (len(await store.events("s")), len(await store.events("s.p1"))) == before


async def test_a_sub_sub_agent_pauses_the_top_and_the_top_resume_reaches_it(store: SessionStore) -> None:
    effects: list[str] = []
    top = lead(middle(researcher(effects)), store)
    paused = await top.prompt("clean up").session("s")

    (item,) = paused.interruptions
    assert (item.call_id, item.agent) == ("p1/m1/r1", "researcher")
    assert [c.session_id for c in children_of(await store.events("s"))] == ["s.p1"]
    assert [c.session_id for c in children_of(await store.events("s.p1"))] == ["s.p1.m1"]

    done = await top.resume("s", {"p1/m1/r1": True})
    assert done.output == "lead: middle: researcher: deleted /tmp/old"
    assert effects == ["/tmp/old"]


async def test_the_approval_audit_names_the_inner_call(store: SessionStore) -> None:
    boss = lead(researcher([]), store)
    await boss.prompt("clean up").session("s")

    def audit(calls: Any, approvals: Any) -> list[Event]:
        return [Event.status("alice", "agent", f"alice decided {c.name}", decided=c.id) for c in calls
                if c.id in approvals]

    await boss.resume("s", {"p1/r1": True}, audit=audit)
    lines = [e for e in await store.events("s", view="ui") if "decided" in e.metadata]
    assert [(e.text, e.metadata["decided"]) for e in lines] == [("alice decided delete", "p1/r1")]


async def test_the_parents_deps_reach_the_child_on_resume_too(store: SessionStore) -> None:
    seen: list[Any] = []

    @tool
    async def delete(path: str, ctx: RunContext[str]) -> str:
        """Delete a file."""
        seen.append(ctx.deps)
        return "deleted"

    from hookline.hooklib import RequireApproval

    inner = Agent("researcher", model=worker("r1", "delete", {"path": "x"}, ""), tools=[delete],
                  hooks={"before_tool": [RequireApproval(["delete"])]}, deps_type=str)
    boss = Agent("lead", model=delegate("p1", "research", ""), tools=[inner.as_tool("research", "Ask")],
                 session_store=store, deps_type=str)
    await boss.prompt("go").session("s").deps("the db")
    await boss.resume("s", {"p1/r1": True}).deps("the db")
    assert seen == ["the db"]


async def test_cancelling_the_caller_cancels_the_child(store: SessionStore) -> None:
    running = asyncio.Event()

    @tool
    async def delete(path: str) -> str:
        """Delete a file, slowly."""
        running.set()
        await asyncio.sleep(30)
        return "deleted"

    inner = Agent("researcher", model=worker("r1", "delete", {"path": "x"}, ""), tools=[delete])
    boss = lead(inner, store)
    request = boss.prompt("clean up").session("s")
    task = asyncio.ensure_future(run_by("stream", request))
    await asyncio.wait_for(running.wait(), 10)
    assert request.cancel()
    result, _ = await asyncio.wait_for(task, 10)

    assert result.stop_reason == "cancelled"
    assert run_end((await store.events("s.p1", view="all"))[-1]) == "cancelled"
    assert run_end((await store.events("s", view="all"))[-1]) == "cancelled"


async def test_another_users_session_of_the_childs_name_is_never_taken(store: SessionStore) -> None:
    await store.create(user="mallory", session_id="s.p1")
    boss = lead(researcher([], approval=False), store)
    result = await boss.prompt("clean up").session("s")

    (sent,) = [r for m in result.messages for r in m.tool_results]
    assert sent.is_error, "the call fails rather than run in mallory's session"
    assert await store.events("s.p1") == []


def test_child_session_ids_keep_the_rule_of_session_ids() -> None:
    from hookline._ids import session_id_problem

    assert child_session_id("s-1", "call_AbC-9") == "s-1.call_AbC-9"
    odd = child_session_id("s-1", "call/with spaces")
    assert odd.startswith("s-1.")
    assert session_id_problem(odd) is None
    long = child_session_id("x" * 120, "call_123456789")
    assert long.startswith("sub-")
    assert session_id_problem(long) is None
    assert long != child_session_id("x" * 120, "call_123456780")


def test_the_command_line_names_the_sub_agent_of_a_paused_call() -> None:
    from hookline._cli.run import describe_interruption
    from hookline.result import Interruption

    item = Interruption(call_id="p1/r1", name="delete", arguments={"path": "/tmp/old"}, reason="delete needs approval",
                        agent="researcher")
    assert describe_interruption(item) == ("paused researcher's delete(path='/tmp/old') [call p1/r1] for approval: "
                                           "delete needs approval")


async def test_edited_arguments_of_an_inner_call_are_checked_by_the_sub_agent(store: SessionStore) -> None:
    effects: list[str] = []
    boss = lead(researcher(effects), store)
    await boss.prompt("clean up").session("s")

    done = await boss.resume("s", {"p1/r1": {"args": {"path": "/tmp/other"}}})
    assert done.output == "lead: researcher: deleted /tmp/other"
    assert effects == ["/tmp/other"]

    await boss.prompt("clean up").session("t")
    failed = await boss.resume("t", {"p1/r1": {"args": {"where": "/"}}})
    (sent,) = [r for m in failed.messages for r in m.tool_results]
    assert sent.is_error, "the call failed: its edited arguments do not fit the inner tool"
    assert "do not fit its schema" in sent.content
    assert effects == ["/tmp/other"]
