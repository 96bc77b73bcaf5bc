"""Replay (issue 27, part 4): an agent run again against the model answers a session recorded, with the
tools replayed from the log or run for real, and a report of where its conversation diverges."""

from __future__ import annotations

import pytest

from hookline import Agent
from hookline.replay import Recording, replay
from hookline.sessions import SessionStore

from .agents import add, agent, danger, guarded, off_by_one

pytestmark = pytest.mark.anyio


async def record(store: SessionStore, *, approve: bool = True) -> Recording:
    await agent.prompt("please add").session("s", store=store)
    paused = await agent.prompt("now the danger").session("s", store=store)
    assert paused.stop_reason == "interrupted"
    await agent.resume("s", {paused.interruptions[0].call_id: approve}, store=store)
    await agent.prompt("thanks").session("s", store=store)
    return Recording.of(await store.events("s", view="all"))


async def test_the_same_agent_makes_the_same_conversation(store: SessionStore) -> None:
    recording = await record(store)
    assert [m.text for m in recording.prompts] == ["please add", "now the danger", "thanks"]
    assert recording.ran == {"c1", "d5"}

    for tools in ("replay", "real"):
        report = await replay(agent, recording, tools=tools)  # type: ignore[arg-type]
        assert report.ok, report.divergences
        assert report.model_calls == 5
        assert report.summary().endswith("the same conversation")
        assert [r.stop_reason for r in report.results] == ["completed", "interrupted", "completed", "completed"]


async def test_a_tool_that_changed_diverges_when_run_for_real_only(store: SessionStore) -> None:
    recording = await record(store)
    assert (await replay(off_by_one, recording)).ok, "replayed, the tool's new code never runs"

    report = await replay(off_by_one, recording, tools="real")
    assert not report.ok
    first = report.divergences[0]
    assert (first.index, first.kind) == (2, "tool_result")
    assert "add -> 5" in first.expected
    assert "add -> 6" in first.got
    assert "1 divergence(s), the first at message #2" in report.summary()


async def test_a_guardrail_that_now_refuses_a_call_diverges(store: SessionStore) -> None:
    recording = await record(store)
    report = await replay(guarded, recording)
    kinds = [(d.index, d.kind) for d in report.divergences]
    assert kinds == [(6, "tool_result")], report.divergences
    assert "refused by guardrail no_danger" in report.divergences[0].got


async def test_a_refused_call_is_refused_again(store: SessionStore) -> None:
    recording = await record(store, approve=False)
    report = await replay(agent, recording)
    assert report.ok, report.divergences


async def test_an_agent_that_stops_early_diverges_with_what_it_did_not_make(store: SessionStore) -> None:
    recording = await record(store)
    short = Agent("calc", model=agent.model, tools=[add, danger], max_turns=1)
    report = await replay(short, recording)
    assert report.divergences[-1].kind == "stop"
    assert "made 1 model calls without finishing" in report.divergences[-1].got
    assert any(d.kind == "missing" for d in report.divergences)


async def test_more_calls_than_recorded_is_a_divergence(store: SessionStore) -> None:
    recording = await record(store)
    fewer = Recording(prompts=recording.prompts, answers=recording.answers[:1], results=recording.results,
                      ran=recording.ran, conversation=recording.conversation)
    report = await replay(agent, fewer)
    assert report.divergences[-1].kind == "stop"
    assert "holds 1 model answers" in report.divergences[-1].got
