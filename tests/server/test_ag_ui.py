"""AG-UI 1.0 at `POST /v1/ag-ui`, checked by the protocol's own packages.

Every event is validated by the official Python models (`ag-ui-protocol`'s `Event` union), and
every recorded stream, alone, by `ag-ui-validate` (its library and its command line) with no
error and no warning. The server is a real one on 127.0.0.1 around the scripted agent
(`agent.py`: "add" calls a tool, "danger" pauses for approval, "fail" fails, "slow" thinks).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui.core import Event as AGUIEvent
from ag_ui_validate.pytest_plugin import validate_agui
from pydantic import TypeAdapter

from hookline import Agent, ToolCallPart
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SessionStore
from support.node_kit import run_node

from .agent import DANGER_LOG, SLOW_SECONDS
from .api import full_log
from .live import TOKENS, LiveServer

pytestmark = pytest.mark.anyio

EVENT = TypeAdapter(AGUIEvent)
VALIDATOR = Path(sys.executable).with_name("ag-ui-validate")


def run_input(thread_id: str, *messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A `RunAgentInput` as a client sends it (camelCase)."""
    return {"threadId": thread_id, "runId": f"run-{uuid.uuid4().hex[:8]}", "messages": list(messages), "tools": [],
            "context": [], "state": {}, "forwardedProps": {}, **fields}


def user(text: str, message_id: str | None = None) -> dict[str, Any]:
    return {"id": message_id or f"u-{uuid.uuid4().hex[:8]}", "role": "user", "content": text}


async def ag_ui(http: httpx.AsyncClient, body: dict[str, Any], *, path: Path | None = None) -> list[dict[str, Any]]:
    """POST the input; the events of the answer, each validated by the official models, the stream by the checker."""
    raw = b""
    async with http.stream("POST", "/v1/ag-ui", json=body, headers={"Accept": "text/event-stream"}) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        async for chunk in response.aiter_bytes():
            raw += chunk
    frames = [f for f in raw.decode().split("\n\n") if f.strip() and not f.startswith(":")]
    assert all(f.startswith("data: ") and "\n" not in f for f in frames), "one data-only line per frame"
    events = [json.loads(f.removeprefix("data: ")) for f in frames]
    for event in events:
        EVENT.validate_python(event)
    report = validate_agui(events)
    problems = [d for d in report.diagnostics if d.severity in ("error", "warning")]
    assert not problems, [(d.rule_id, d.message) for d in problems]
    if path is not None:
        path.write_bytes(raw)
    return events


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


@pytest.fixture
async def http(server: LiveServer) -> Any:
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        yield client


async def test_a_text_answer_streams_as_text_message_events_whose_id_the_stored_answer_keeps(
    http: httpx.AsyncClient,
) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    first = user("hello big world")
    events = await ag_ui(http, run_input(thread, first))
    assert types(events)[:2] == ["RUN_STARTED", "STATE_SNAPSHOT"]
    assert types(events)[-1] == "RUN_FINISHED"
    assert events[-1]["outcome"] == {"type": "success"}
    text = [e for e in events if e["type"].startswith("TEXT_MESSAGE")]
    assert text[0]["type"] == "TEXT_MESSAGE_START"
    assert len([e for e in text if e["type"] == "TEXT_MESSAGE_CONTENT"]) == 5, "one event per model delta"
    assert "".join(e.get("delta", "") for e in text) == "You said: hello big world"
    log = await full_log(http, thread)
    (answer,) = [e for e in log if e["role"] == "assistant"]
    assert {e["messageId"] for e in text} == {answer["id"]}
    (prompt,) = [e for e in log if e["role"] == "user"]
    assert prompt["id"] == first["id"], "the user message keeps the client's id"


async def test_a_conversation_sent_whole_again_stores_only_the_new_user_message(http: httpx.AsyncClient) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    first = user("hello")
    events = await ag_ui(http, run_input(thread, first))
    answer_id = next(e["messageId"] for e in events if e["type"] == "TEXT_MESSAGE_START")
    answer = {"id": answer_id, "role": "assistant", "content": "You said: hello"}
    await ag_ui(http, run_input(thread, first, answer, user("again")))
    assert [e["role"] for e in await full_log(http, thread) if e["kind"] == "message"] == [
        "user", "assistant", "user", "assistant"]


async def test_tool_calls_and_results_map_to_tool_call_events(http: httpx.AsyncClient) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    events = await ag_ui(http, run_input(thread, user("add 2 and 3")))
    start = next(e for e in events if e["type"] == "TOOL_CALL_START")
    assert start["toolCallName"] == "add"
    args = next(e for e in events if e["type"] == "TOOL_CALL_ARGS")
    assert json.loads(args["delta"]) == {"a": 2, "b": 3}
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert (result["toolCallId"], result["content"]) == (start["toolCallId"], "5")
    assert "The tool said: 5." in "".join(e.get("delta", "") for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    activity = [e for e in events if e["type"] == "ACTIVITY_SNAPSHOT"]
    assert {e["activityType"] for e in activity} == {"hookline.status"}
    assert any(e["content"]["text"] == "add returned 5" for e in activity)


async def test_an_approval_is_an_interrupt_and_a_resume_answers_it_in_a_stream_that_stands_alone(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    paused = await ag_ui(http, run_input(thread, user("danger")), path=tmp_path / "paused.sse")
    outcome = paused[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    (interrupt,) = outcome["interrupts"]
    call_id = next(e["toolCallId"] for e in paused if e["type"] == "TOOL_CALL_START")
    assert interrupt["toolCallId"] == call_id
    assert interrupt["id"] != call_id, "an interrupt's id is its own"
    assert interrupt["reason"] == "approval"
    assert interrupt["responseSchema"]["required"] == ["approved"]
    DANGER_LOG.clear()
    resumed = await ag_ui(http, run_input(thread, resume=[{"interruptId": interrupt["id"], "status": "resolved",
                                                            "payload": True}]), path=tmp_path / "resumed.sse")
    assert types(resumed)[:3] == ["RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT"]
    assert [m["role"] for m in resumed[2]["messages"]] == ["user", "assistant"]
    result = next(e for e in resumed if e["type"] == "TOOL_CALL_RESULT")
    assert (result["toolCallId"], result["content"]) == (call_id, "wiped prod")
    assert resumed[-1]["outcome"] == {"type": "success"}
    assert DANGER_LOG == ["prod"]
    for capture in ("paused.sse", "resumed.sse"):  # the checker's command line, on each recorded stream alone
        checked = subprocess.run([str(VALIDATOR), str(tmp_path / capture), "--max-warnings", "0"],
                                 capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize(("payload", "content"), [
    (False, "the user refused the call to danger"),
    ({"approved": False, "reason": "not on a Friday"}, "not on a Friday"),
])
async def test_a_refusal_answers_the_call_without_running_it(
    http: httpx.AsyncClient, payload: Any, content: str
) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    paused = await ag_ui(http, run_input(thread, user("danger")))
    (interrupt,) = paused[-1]["outcome"]["interrupts"]
    DANGER_LOG.clear()
    resumed = await ag_ui(http, run_input(thread, resume=[{"interruptId": interrupt["id"], "status": "resolved",
                                                            "payload": payload}]))
    result = next(e for e in resumed if e["type"] == "TOOL_CALL_RESULT")
    assert content in result["content"]
    assert DANGER_LOG == []


async def test_a_cancelled_resume_entry_is_a_refusal_and_edited_args_run_the_call_with_them(
    http: httpx.AsyncClient,
) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    (interrupt,) = (await ag_ui(http, run_input(thread, user("danger"))))[-1]["outcome"]["interrupts"]
    DANGER_LOG.clear()
    await ag_ui(http, run_input(thread, resume=[{"interruptId": interrupt["id"], "status": "cancelled"}]))
    assert DANGER_LOG == []
    (interrupt,) = (await ag_ui(http, run_input(thread, user("danger"))))[-1]["outcome"]["interrupts"]
    edited = {"approved": True, "editedArgs": {"target": "staging"}}
    await ag_ui(http, run_input(thread, resume=[{"interruptId": interrupt["id"], "status": "resolved",
                                                 "payload": edited}]))
    assert DANGER_LOG == ["staging"]


async def test_a_failed_run_ends_with_one_run_error(http: httpx.AsyncClient) -> None:
    events = await ag_ui(http, run_input(f"t-{uuid.uuid4().hex[:8]}", user("fail now")))
    assert types(events)[-1] == "RUN_ERROR"
    assert types(events).count("RUN_ERROR") == 1
    assert events[-1]["code"] == "model_failed"
    assert "the provider is down" in events[-1]["message"]


async def test_a_cancelled_run_finishes_with_the_cancelled_outcome(http: httpx.AsyncClient) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    running = asyncio.create_task(ag_ui(http, run_input(thread, user("slow"))))
    async def cancelled() -> int:
        return (await http.post(f"/v1/sessions/{thread}/cancel")).status_code
    for _ in range(200):
        if await cancelled() == 202:
            break
        await asyncio.sleep(SLOW_SECONDS / 50)
    events = await running
    assert events[-1]["outcome"] == {"type": "cancelled"}


async def test_bad_inputs_answer_clear_errors_and_record_nothing(http: httpx.AsyncClient) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    cases = [
        ({"threadId": thread}, 422, "RunAgentInput"),
        (run_input("not a valid id!", user("hi")), 422, "invalid session id"),
        (run_input(thread), 422, "no new user message"),
        (run_input(thread, user("hi"), resume=[{"interruptId": "approve:x", "status": "resolved"}]), 422,
         "send the answers alone"),
    ]
    for body, status, said in cases:
        response = await http.post("/v1/ag-ui", json=body)
        assert response.status_code == status, response.text
        assert said in response.json()["message"]
    await ag_ui(http, run_input(thread, user("hello")))
    response = await http.post("/v1/ag-ui", json=run_input(thread, resume=[
        {"interruptId": "approve:nothing", "status": "resolved", "payload": True}]))
    assert response.status_code == 422
    assert "answers no interrupt" in response.json()["message"]


async def test_another_users_thread_is_not_found(make_server: Any) -> None:
    server = make_server(tokens=TOKENS)
    thread = f"t-{uuid.uuid4().hex[:8]}"
    async with httpx.AsyncClient(base_url=server.url, timeout=30,
                                 headers={"Authorization": "Bearer tok-alice"}) as alice, \
            httpx.AsyncClient(base_url=server.url, timeout=30, headers={"Authorization": "Bearer tok-bob"}) as bob:
        await ag_ui(alice, run_input(thread, user("hello")))
        response = await bob.post("/v1/ag-ui", json=run_input(thread, user("mine now")))
        assert response.status_code == 404
    async with httpx.AsyncClient(base_url=server.url) as anonymous:
        assert (await anonymous.post("/v1/ag-ui", json={})).status_code == 401


def test_the_official_http_agent_runs_tools_and_resumes_an_interrupt(server: LiveServer) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    DANGER_LOG.clear()
    seen = run_node("ag_ui_client.mjs", server.url, thread)
    tool_calls = [m for m in seen["afterAdd"] if m["role"] == "assistant" and m.get("toolCalls")]
    assert tool_calls[0]["toolCalls"][0]["function"]["name"] == "add"
    assert [m["content"] for m in seen["afterAdd"] if m["role"] == "tool"] == ["5"]
    assert seen["afterAdd"][-1]["content"] == "The tool said: 5."
    assert seen["interrupt"]["type"] == "interrupt"
    assert seen["interrupt"]["interrupts"][0]["reason"] == "approval"
    assert seen["last"]["type"] == "success"
    assert DANGER_LOG == ["prod"]
    assert [m["content"] for m in seen["messages"] if m["role"] == "tool"][-1] == "wiped prod"
    ids = [m["id"] for m in seen["messages"]]
    assert len(ids) == len(set(ids)), "the resumed stream's snapshot and its events make no duplicate"


def _weather_script(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    if last.role == "tool":
        return ModelResponse(text=f"Outside: {last.tool_results[0].content}.")
    assert [t.name for t in request.tools] == ["get_weather"], "the client's tool is offered to the model"
    return ModelResponse(tool_calls=[ToolCallPart(id="w1", name="get_weather", arguments={"city": "Paris"})])


async def test_a_frontend_tool_is_called_by_the_model_and_answered_by_the_client(
    make_server: Callable[..., LiveServer], store: SessionStore
) -> None:
    server = make_server(agent=Agent("weather", model=FunctionModel(_weather_script), session_store=store))
    tool = {"name": "get_weather", "description": "The weather in a city, as the browser knows it.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
    thread = f"t-{uuid.uuid4().hex[:8]}"
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        asked = await ag_ui(http, run_input(thread, user("weather?"), tools=[tool]))
        assert asked[-1]["outcome"] == {"type": "success", "pendingToolCallIds": ["w1"]}
        call = [e for e in asked if e["type"].startswith("TOOL_CALL")]
        assert [e["type"] for e in call] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
        assert not any(e["type"] == "TOOL_CALL_RESULT" for e in asked), "the client runs it"
        assistant = {"id": call[0]["parentMessageId"], "role": "assistant",
                     "toolCalls": [{"id": "w1", "type": "function",
                                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
        result = {"id": "r1", "role": "tool", "toolCallId": "w1", "content": "sunny, 21 C"}
        answered = await ag_ui(http, run_input(thread, user("weather?"), assistant, result, tools=[tool]))
        assert next(e for e in answered if e["type"] == "TOOL_CALL_RESULT")["content"] == "sunny, 21 C"
        text = "".join(e["delta"] for e in answered if e["type"] == "TEXT_MESSAGE_CONTENT")
        assert text == "Outside: sunny, 21 C."
        assert answered[-1]["outcome"] == {"type": "success"}


async def test_a_frontend_tool_the_client_failed_to_run_answers_the_model_with_its_error(
    make_server: Callable[..., LiveServer], store: SessionStore
) -> None:
    server = make_server(agent=Agent("weather", model=FunctionModel(_weather_script), session_store=store))
    tool = {"name": "get_weather", "description": "The weather in a city, as the browser knows it.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
    thread = f"t-{uuid.uuid4().hex[:8]}"
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        asked = await ag_ui(http, run_input(thread, user("weather?"), tools=[tool]))
        parent = next(e for e in asked if e["type"] == "TOOL_CALL_START")["parentMessageId"]
        assistant = {"id": parent, "role": "assistant", "toolCalls": [
            {"id": "w1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
        failed = {"id": "r1", "role": "tool", "toolCallId": "w1", "content": "", "error": "no network in the browser"}
        answered = await ag_ui(http, run_input(thread, user("weather?"), assistant, failed, tools=[tool]))
        result = next(e for e in answered if e["type"] == "TOOL_CALL_RESULT")
        assert result["content"] == "no network in the browser"
        assert "".join(e["delta"] for e in answered if e["type"] == "TEXT_MESSAGE_CONTENT") == \
            "Outside: no network in the browser."
    (stored,) = [r for e in await store.events(thread, view="prompt") for r in e.to_message().tool_results]
    assert stored.is_error, "an error the client reports is an error result, not the call's output"
