"""A hook call that takes 10 ms or more leaves its time in the session's log, and the inspector's trace shows it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hookline import Agent, State, hook
from hookline.models import FunctionModel, ModelResponse
from hookline.server.inspection import prompts_of
from hookline.sessions import SQLiteSessionStore

pytestmark = pytest.mark.anyio


@hook
async def slow_check(state: State) -> None:
    await asyncio.sleep(0.03)  # a guardrail that asks a service, say


@hook
def quick_note(state: State) -> None:
    state.data["noted"] = True


async def test_a_slow_hook_call_is_on_record_with_its_time_and_a_quick_one_is_not(tmp_path: Path) -> None:
    async with SQLiteSessionStore(tmp_path / "s.db") as store:
        agent = Agent("timed", model=FunctionModel(lambda request: ModelResponse(text="ok")), session_store=store,
                      hooks={"before_llm": [slow_check, quick_note]})
        await agent.prompt("hi").session("s1")
        log = await store.events("s1", view="all")
    calls = [e.metadata["hook_call"] for e in log if "hook_call" in e.metadata]
    assert [(c["hook"], c["point"]) for c in calls] == [("slow_check", "before_llm")]
    assert 30 <= calls[0]["duration_ms"] < 1000
    (trace,) = prompts_of(log)
    (span,) = [s for s in trace.spans if s.kind == "hook"]
    assert (span.name, span.depth, span.duration_ms) == ("slow_check", 1, calls[0]["duration_ms"])
    assert span.started_at is not None
    assert span.ended_at is not None
    assert span.started_at <= span.ended_at


async def test_without_a_store_nothing_is_timed() -> None:
    answer = FunctionModel(lambda request: ModelResponse(text="ok"))
    agent = Agent("timed", model=answer, hooks={"before_llm": [slow_check]})
    events = [e async for e in agent.prompt("hi").stream()]
    assert not any("hook_call" in e.metadata for e in events)
