"""`A2AAgent`: hookline calling remote A2A agents, a plain SDK server and a hookline server, as a tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookline import Agent, Event, RunResult, ToolCallPart
from hookline.a2a import A2AAgent
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SessionStore
from hookline.sessions.sqlite import SQLiteSessionStore
from server.live import LiveServer
from support.waiting import DEADLINE, await_until

from .agents import DANGER_LOG
from .conftest import TOKENS
from .harness import PlainServer

pytestmark = pytest.mark.anyio


def caller_script(request: ModelRequest) -> ModelResponse:
    """Hands the prompt to the `remote` tool, then says what it answered."""
    last = request.messages[-1]
    if last.role == "tool":
        result = last.tool_results[0]
        return ModelResponse(text=("remote failed: " if result.is_error else "remote said: ") + str(result.content))
    return ModelResponse(tool_calls=[ToolCallPart(id="call-remote", name="remote", arguments={"input": last.text})])


def caller(remote: A2AAgent, store: SessionStore) -> Agent:
    return Agent("caller", model=FunctionModel(caller_script), tools=[remote.as_tool()], session_store=store)


@pytest.fixture
def calls(tmp_path: Path) -> SessionStore:
    """The calling agent's store."""
    return SQLiteSessionStore(tmp_path / "caller.db")


async def run(agent: Agent, prompt: str, session_id: str) -> tuple[RunResult, list[Event]]:
    request = agent.prompt(prompt).session(session_id)
    events = [event async for event in request.stream()]
    assert request.result is not None
    return request.result, events


def tool_lines(events: list[Event]) -> list[str]:
    return [e.text for e in events if e.kind == "status" and e.author == "remote" and e.source == "tool"]


async def test_a_remote_answer_is_the_result_and_its_working_lines_the_calls_status(
    plain: PlainServer, calls: SessionStore
) -> None:
    agent = caller(A2AAgent(plain.url, name="remote"), calls)
    result, events = await run(agent, "echo hello", "s-echo")

    assert result.output == "remote said: echo: echo hello"
    assert "echoing" in tool_lines(events)
    line = next(e for e in events if e.text == "echoing")
    assert line.metadata["call_id"] == "call-remote"


async def test_input_required_pauses_the_calling_run_and_the_approval_completes_the_same_remote_task(
    plain: PlainServer, calls: SessionStore
) -> None:
    agent = caller(A2AAgent(plain.url, name="remote"), calls)
    paused, events = await run(agent, "approve the deletion", "s-approve")

    assert paused.stop_reason == "interrupted"
    [question] = paused.interruptions
    assert (question.name, question.call_id, question.reason) == ("remote", "call-remote", "may I delete it?")
    assert "checking" in tool_lines(events)
    done = await agent.resume("s-approve", {"call-remote": True})

    assert done.output == "remote said: deleted"
    assert plain.executors.answers == [{"approved": True}]


async def test_a_refusal_reaches_the_remote_agent_with_its_reason(plain: PlainServer, calls: SessionStore) -> None:
    agent = caller(A2AAgent(plain.url, name="remote"), calls)
    await run(agent, "approve the deletion", "s-refuse")
    done = await agent.resume("s-refuse", {"call-remote": "not now"})

    assert done.output == "remote said: kept: not now"
    assert plain.executors.answers == [{"approved": False, "reason": "not now"}]


async def test_resumed_by_another_process_the_call_is_sent_again_and_its_question_answered_at_once(
    plain: PlainServer, calls: SessionStore
) -> None:
    await run(caller(A2AAgent(plain.url, name="remote"), calls), "approve the deletion", "s-elsewhere")
    fresh = caller(A2AAgent(plain.url, name="remote"), calls)  # knows nothing of the paused remote task
    done = await fresh.resume("s-elsewhere", {"call-remote": True})

    assert done.output == "remote said: deleted"
    assert plain.executors.answers == [{"approved": True}]


async def test_cancelling_the_calling_run_cancels_the_remote_task(plain: PlainServer, calls: SessionStore) -> None:
    agent = caller(A2AAgent(plain.url, name="remote"), calls)
    request = agent.prompt("wait for ever").session("s-cancel")
    async for event in request.stream():
        if event.text == "waiting":
            assert request.cancel()

    assert request.result is not None
    assert request.result.stop_reason == "cancelled"
    await await_until(lambda: plain.executors.cancelled, "the remote agent was asked to cancel its task")


async def test_a_failed_remote_task_is_a_tool_error_the_model_reads(plain: PlainServer, calls: SessionStore) -> None:
    result, _ = await run(caller(A2AAgent(plain.url, name="remote"), calls), "fail please", "s-fail")

    assert result.output.startswith("remote failed: ")
    assert "TASK_STATE_FAILED" in result.output
    assert "no luck" in result.output


async def test_without_a_session_a_remote_question_is_a_tool_error(plain: PlainServer, calls: SessionStore) -> None:
    result = await caller(A2AAgent(plain.url, name="remote"), calls).prompt("approve the deletion")

    assert result.stop_reason == "completed"
    assert result.output.startswith("remote failed: ")
    assert "no session" in result.output
    assert "may I delete it?" in result.output


async def test_an_agent_that_is_not_there_is_a_tool_error_naming_it(calls: SessionStore) -> None:
    remote = A2AAgent("http://127.0.0.1:9", name="remote", timeout=DEADLINE)
    result, _ = await run(caller(remote, calls), "hello", "s-nowhere")

    assert result.output.startswith("remote failed: the remote agent 'remote'")


async def test_a_hookline_server_as_the_remote_agent_pauses_the_caller_and_completes_on_approval(
    server: LiveServer, calls: SessionStore
) -> None:
    DANGER_LOG.clear()
    remote = A2AAgent(server.url, name="remote")
    agent = caller(remote, calls)
    paused, events = await run(agent, "danger please", "s-hookline")

    assert paused.stop_reason == "interrupted"
    assert "danger(target='prod')" in paused.interruptions[0].reason
    assert "turn 1: calling model" in tool_lines(events)  # the remote run's own lines, as the call's
    assert DANGER_LOG == []
    done = await agent.resume("s-hookline", {"call-remote": True})

    assert done.output == "remote said: The tool said: wiped prod."
    assert DANGER_LOG == ["prod"]
    assert (await remote.card()).name == "remote"


async def test_a_token_goes_with_every_request_and_a_missing_one_is_a_clear_error(
    auth_server: LiveServer, calls: SessionStore
) -> None:
    token = next(t for t, user in TOKENS.items() if user == "alice")
    allowed = A2AAgent(auth_server.url, name="remote", headers={"Authorization": f"Bearer {token}"})
    refused = A2AAgent(auth_server.url, name="remote")

    result, _ = await run(caller(allowed, calls), "add them", "s-token")
    denied, _ = await run(caller(refused, calls), "add them", "s-no-token")

    assert result.output == "remote said: The tool said: 5."
    assert denied.output.startswith("remote failed: ")
    assert "401" in denied.output


def test_the_tool_takes_one_input_and_names_the_agent() -> None:
    tool = A2AAgent("http://127.0.0.1:9/", name="researcher").as_tool()

    assert tool.name == "researcher"
    assert list(tool.parameters["properties"]) == ["input"]
    assert tool.parameters["required"] == ["input"]
    assert "researcher" in tool.description

