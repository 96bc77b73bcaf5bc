"""The agent on real stores, beyond the store contract: a new store instance, a killed process, resume streamed."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from hookline import State, hook
from hookline.conversation import conversation_problem
from hookline.sessions import SessionStore, SQLiteSessionStore
from hookline.testing._store_run_cases import Adder

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent


async def test_interrupted_run_resumes_from_a_new_store_instance(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")

    @hook
    def ask_first(state: State) -> None:
        for call in state.tool_calls:
            state.interrupt(call.id, "adding needs approval")

    first, second = Adder(), Adder()
    async with SQLiteSessionStore(path) as store:
        paused = await first.agent(store, hooks={"before_tool": [ask_first]}).prompt("add").session("s3")
    assert paused.stop_reason == "interrupted"
    assert [(i.call_id, i.reason) for i in paused.interruptions] == [("c1", "adding needs approval")]
    assert first.effects == []

    async with SQLiteSessionStore(path) as store:
        agent = second.agent(store, hooks={"before_tool": [ask_first]})
        done = await agent.resume("s3", approvals={"c1": True})
        again = await agent.resume("s3", approvals={"c1": True})
    assert done.stop_reason == "completed"
    assert done.output == "sum is 2"
    assert second.effects == [2], "an approved call runs once, even when resume is called twice"
    assert again.stop_reason == "completed"


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


async def test_resume_streams_like_a_prompt(store: SessionStore) -> None:
    @hook
    def ask_first(state: State) -> None:
        state.interrupt(state.tool_calls[0].id, "check")

    agent = Adder().agent(store, hooks={"before_tool": [ask_first]})
    await agent.prompt("add").session("s5")
    request = agent.resume("s5", approvals={"c1": True})
    events = [event async for event in request.stream()]
    assert request.result is not None
    assert request.result.stop_reason == "completed"
    assert [e.text for e in events if e.kind == "status" and e.source == "tool"] == [
        "running add(a=1, b=1)", "add returned 2"]
    assert events[-2].kind == "message"
    assert events[-2].text.startswith("sum is")
