"""The agent on real session stores: saved state, prepared parts, interrupt and resume, a killed process."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hookline import Agent, Event, Message, SessionBusy, State, TextPart, ToolCallPart, ToolResultPart, hook, tool
from hookline.conversation import conversation_problem
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SessionStore, SQLiteSessionStore

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent


class Recorder:
    """A scripted model that calls `add` once per prompt, and keeps every request."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def __call__(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        last = request.messages[-1]
        if last.role == "user":
            n = len(self.requests)
            return ModelResponse(tool_calls=[ToolCallPart(id=f"c{n}", name="add", arguments={"a": n, "b": 1})])
        return ModelResponse(text=f"sum is {last.tool_results[0].content}")


effects: list[int] = []


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    effects.append(a + b)
    return a + b


def make_agent(store: SessionStore, model: Recorder, **kwargs: Any) -> Agent:
    return Agent(name="calc", model=FunctionModel(model), tools=[add], session_store=store, **kwargs)


async def test_a_session_keeps_the_conversation_and_state(store: SessionStore) -> None:
    model = Recorder()

    @hook
    def count_runs(state: State) -> None:
        state.data["runs"] = state.data.get("runs", 0) + 1

    agent = make_agent(store, model, hooks={"before_run": [count_runs]})
    await agent.prompt("first").session("s1", user="u1")
    result = await agent.prompt("second").session("s1", user="u1")

    assert result.output == "sum is 4"
    second_request = model.requests[2].messages
    assert [m.role for m in second_request] == ["user", "assistant", "tool", "assistant", "user"]
    session = await store.get("s1", user="u1")
    assert session.state == {"runs": 2}
    prompt_view = await store.events("s1", view="prompt")
    assert all(e.kind == "message" for e in prompt_view)
    assert [e.seq for e in prompt_view] == sorted(e.seq for e in prompt_view)
    statuses = [e for e in await store.events("s1", view="all") if e.kind == "status"]
    assert any(e.text == "running add(a=1, b=1)" for e in statuses)
    assert conversation_problem([e.to_message() for e in prompt_view]) is None


async def test_prepared_parts_join_the_next_prompt_first(store: SessionStore) -> None:
    model = Recorder()
    agent = make_agent(store, model)
    await store.create(session_id="s2")
    edit = ToolCallPart(id="u1", name="write_file", arguments={"path": "a.txt", "text": "hi"})
    await store.prepare_event("s2", Event(author="user", role="user", parts=[edit]))
    await store.prepare_event("s2", Event(author="user", role="user", parts=[
        ToolResultPart(call_id="u1", content="written", name="write_file")]))

    await agent.prompt("what did I change?").session("s2")

    first = model.requests[0].messages[0]
    assert first.role == "user"
    assert [p.type for p in first.parts] == ["tool_call", "tool_result", "text"]
    assert (await store.get("s2")).events[-1].partial is False


async def test_interrupted_run_resumes_from_a_new_store_instance(tmp_path: Path) -> None:
    effects.clear()
    path = str(tmp_path / "s.db")

    @hook
    def ask_first(state: State) -> None:
        for call in state.tool_calls:
            state.interrupt(call.id, "adding needs approval")

    async with SQLiteSessionStore(path) as store:
        agent = make_agent(store, Recorder(), hooks={"before_tool": [ask_first]})
        paused = await agent.prompt("add").session("s3")
    assert paused.stop_reason == "interrupted"
    assert [(i.call_id, i.reason) for i in paused.interruptions] == [("c1", "adding needs approval")]
    assert effects == []

    async with SQLiteSessionStore(path) as store:
        agent = make_agent(store, Recorder(), hooks={"before_tool": [ask_first]})
        done = await agent.resume("s3", approvals={"c1": True})
        again = await agent.resume("s3", approvals={"c1": True})
    assert done.stop_reason == "completed"
    assert done.output == "sum is 2"
    assert effects == [2], "an approved call runs once, even when resume is called twice"
    assert again.stop_reason == "completed"


async def test_a_refused_call_answers_the_model(store: SessionStore) -> None:
    effects.clear()
    model = Recorder()

    @hook
    def ask_first(state: State) -> None:
        state.interrupt(state.tool_calls[0].id, "check")

    agent = make_agent(store, model, hooks={"before_tool": [ask_first]})
    await agent.prompt("add").session("s4")
    result = await agent.resume("s4", approvals={"c1": "not today"})
    assert effects == []
    refusal = result.messages[0].tool_results[0]
    assert refusal.is_error
    assert "not today" in refusal.content
    assert result.output.startswith("sum is")


async def test_a_second_run_on_a_busy_session_waits_or_fails(store: SessionStore) -> None:
    release = asyncio.Event()

    async def slow_model(request: ModelRequest) -> ModelResponse:
        await release.wait()
        return ModelResponse(text="ok")

    agent = Agent(model=FunctionModel(slow_model), session_store=store)
    first = asyncio.ensure_future(agent.prompt("one").session("busy"))
    await asyncio.sleep(0.05)
    with pytest.raises(SessionBusy):
        await agent.prompt("two").session("busy", wait=0)
    waiting = asyncio.ensure_future(agent.prompt("three").session("busy", wait=10))
    await asyncio.sleep(0.05)
    release.set()
    await first
    await waiting
    texts = [e.text for e in await store.events("busy", view="prompt")]
    assert texts == ["one", "ok", "three", "ok"], "runs never interleave their half-turns"


async def test_a_killed_process_leaves_a_log_that_resume_can_finish(tmp_path: Path) -> None:
    db, marker = str(tmp_path / "crash.db"), tmp_path / "marker"
    child = subprocess.Popen([sys.executable, str(HERE / "crash_agent.py"), db, str(marker)])
    try:
        for _ in range(200):
            if marker.exists():
                break
            await asyncio.sleep(0.05)
        assert marker.exists(), "the tool never started"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()

    sys.path.insert(0, str(HERE))
    try:
        from crash_agent import build
    finally:
        sys.path.remove(str(HERE))
    agent = build(db, tmp_path / "marker2")
    async with agent.session_store:
        prompt_view = await agent.session_store.events("crash", view="prompt")
        assert [e.role for e in prompt_view] == ["user", "assistant"]
        paused = await agent.resume("crash")
        assert paused.stop_reason == "interrupted"
        assert "process stopped" in paused.interruptions[0].reason
        refused = await agent.resume("crash", approvals={"c1": "do not run it again"})
        assert refused.output == "finished"
        messages = [e.to_message() for e in await agent.session_store.events("crash", view="prompt")]
        assert conversation_problem(messages) is None


async def test_a_new_prompt_closes_calls_left_open(store: SessionStore) -> None:
    await store.create(session_id="open")
    await store.append_event("open", Event(author="user", role="user", parts=[TextPart(text="go")]))
    call = ToolCallPart(id="lost", name="add", arguments={"a": 1, "b": 2})
    await store.append_event("open", Event.from_message(Message(role="assistant", parts=[call]), "calc"))
    model = Recorder()
    await make_agent(store, model).prompt("hello again").session("open")
    seen = model.requests[0].messages
    assert conversation_problem(seen) is None
    assert seen[2].tool_results[0].is_error


async def test_resume_streams_like_a_prompt(store: SessionStore) -> None:
    @hook
    def ask_first(state: State) -> None:
        state.interrupt(state.tool_calls[0].id, "check")

    agent = make_agent(store, Recorder(), hooks={"before_tool": [ask_first]})
    await agent.prompt("add").session("s5")
    request = agent.resume("s5", approvals={"c1": True})
    events = [event async for event in request.stream()]
    assert request.result is not None
    assert request.result.stop_reason == "completed"
    assert [e.text for e in events if e.kind == "status" and e.source == "tool"] == [
        "running add(a=1, b=1)", "add returned 2"]
    assert events[-2].kind == "message"
    assert events[-2].text.startswith("sum is")
