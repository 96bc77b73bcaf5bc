"""Client-side tools over `POST /v1/ai-sdk/chat`: tools the chat's client runs (`onToolCall` + `addToolOutput`).

The chats run the `ai` package's own chat logic in node (`tests/node/ai_sdk_client_tools.mjs`:
`AbstractChat` + `DefaultChatTransport`, every chunk parsed by its `uiMessageChunkSchema`), its
transport's `body` declaring the client's tool, `sendAutomaticallyWhen:
lastAssistantMessageIsCompleteWithToolCalls` sending the client's output back. The stream's
pause and the refusals (422) are checked over plain HTTP.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hookline import ToolCallPart
from hookline.messages import ToolResultPart
from hookline.models import ModelRequest, ModelResponse
from hookline.sessions import SessionStore
from support.node_kit import run_node

from .agent import DANGER_LOG, make_agent
from .api import full_log
from .live import LiveServer

pytestmark = pytest.mark.anyio

LOCATION = {"description": "Where the user is, as the browser knows it.", "inputSchema": {"type": "object"}}
"""The client's tool, as the request body declares it (`tools: {get_location: ...}`)."""
OFFERED: list[list[str]] = []
"""The tools each model call was offered, by name."""


def _trailing_results(request: ModelRequest) -> list[ToolResultPart]:
    results: list[ToolResultPart] = []
    for message in reversed(request.messages):
        if message.role != "tool":
            break
        results = [*message.tool_results, *results]
    return results


def _call(name: str, **arguments: Any) -> ToolCallPart:
    return ToolCallPart(id=f"{name}-{uuid.uuid4().hex[:8]}", name=name, arguments=arguments)


def script(request: ModelRequest) -> ModelResponse:
    """"where": the client's get_location; "both": with the server's add; "risky": with danger (approval)."""
    OFFERED.append(sorted(t.name for t in request.tools))
    results = _trailing_results(request)
    if results:
        heard = "; ".join(f"{r.name} {'failed' if r.is_error else 'said'} {r.content}" for r in results)
        return ModelResponse(text=f"Heard: {heard}.")
    text = request.messages[-1].text
    calls = {"where": [_call("get_location")], "both": [_call("add", a=2, b=3), _call("get_location")],
             "risky": [_call("danger", target="prod"), _call("get_location")]}.get(text)
    return ModelResponse(tool_calls=calls) if calls else ModelResponse(text=f"You said: {text}")


@pytest.fixture
def chat_server(make_server: Callable[..., LiveServer], store: SessionStore) -> LiveServer:
    """A server whose scripted model calls the client's tool."""
    OFFERED.clear()
    DANGER_LOG.clear()
    return make_server(agent=make_agent(store, model_script=script))


def _chat(server: LiveServer, scenario: str) -> tuple[str, dict[str, Any]]:
    chat_id = f"c-{uuid.uuid4().hex[:8]}"
    seen: dict[str, Any] = run_node("ai_sdk_client_tools.mjs", server.url, chat_id, scenario)
    assert seen["errors"] == [], seen["errors"]
    assert seen["status"] == "ready"
    return chat_id, seen


def _parts(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [p for p in message["parts"] if p["type"] == kind]


async def _messages(server: LiveServer, chat_id: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        return [e for e in await full_log(http, chat_id) if e["kind"] == "message"]


def _calls(log: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [p for e in log for p in e["parts"] if p["type"] == "tool_call" and p["name"] == name]


def _results(log: list[dict[str, Any]], call_id: str) -> list[dict[str, Any]]:
    return [p for e in log for p in e["parts"] if p["type"] == "tool_result" and p["call_id"] == call_id]


async def test_a_client_tool_answered_by_on_tool_call_ends_in_one_assistant_message(chat_server: LiveServer) -> None:
    chat_id, seen = _chat(chat_server, "client")
    user, answer = seen["messages"]
    assert (user["role"], answer["role"]) == ("user", "assistant"), "the answer after the client's output is the same"
    (tool,) = _parts(answer, "tool-get_location")
    assert (tool["state"], tool["output"]) == ("output-available", {"city": "Paris"}), "as the client gave it"
    assert _parts(answer, "text")[-1]["text"] == 'Heard: get_location said {"city":"Paris"}.'
    assert [f["finishReason"] for f in seen["finishes"]] == ["tool-calls", "stop"]
    first, second = seen["sent"]
    assert list(first["tools"]) == list(second["tools"]) == ["get_location"], "the transport's body, every time"
    sent_back = second["messages"][-1]
    assert (sent_back["id"], _parts(sent_back, "tool-get_location")[0]["state"]) == (answer["id"], "output-available")
    assert OFFERED[0] == ["add", "danger", "get_location"], "the client's tool is offered to the model"
    log = await _messages(chat_server, chat_id)
    (call,) = _calls(log, "get_location")
    (result,) = _results(log, call["id"])
    assert (result["content"], result.get("is_error", False)) == ('{"city":"Paris"}', False)
    answers = ["".join(p.get("text", "") for p in e["parts"]) for e in log if e["role"] == "assistant"]
    assert answers == ["", 'Heard: get_location said {"city":"Paris"}.'], "the call and the answer, once each"


async def test_a_client_tool_error_reaches_the_model_as_an_error_result(chat_server: LiveServer) -> None:
    chat_id, seen = _chat(chat_server, "error")
    _, answer = seen["messages"]
    (tool,) = _parts(answer, "tool-get_location")
    assert (tool["state"], tool["errorText"]) == ("output-error", "no GPS here")
    assert _parts(answer, "text")[-1]["text"] == "Heard: get_location failed no GPS here."
    log = await _messages(chat_server, chat_id)
    (call,) = _calls(log, "get_location")
    (result,) = _results(log, call["id"])
    assert (result["content"], result["is_error"]) == ("no GPS here", True)


async def test_a_server_tool_and_a_client_tool_in_one_model_turn(chat_server: LiveServer) -> None:
    chat_id, seen = _chat(chat_server, "both")
    assert [m["role"] for m in seen["messages"]] == ["user", "assistant"]
    answer = seen["messages"][-1]
    (add,) = _parts(answer, "tool-add")
    (location,) = _parts(answer, "tool-get_location")
    assert (add["state"], add["output"]) == ("output-available", "5"), "the server ran its own"
    assert location["output"] == {"city": "Paris"}
    assert _parts(answer, "text")[-1]["text"] == 'Heard: add said 5; get_location said {"city":"Paris"}.'
    log = await _messages(chat_server, chat_id)
    ((add_call,), (location_call,)) = _calls(log, "add"), _calls(log, "get_location")
    assert len(_results(log, add_call["id"])) == len(_results(log, location_call["id"])) == 1


async def test_a_client_tool_and_an_approval_in_one_model_turn_go_back_together(chat_server: LiveServer) -> None:
    chat_id, seen = _chat(chat_server, "approval")
    paused = seen["paused"][-1]
    assert [p["state"] for p in paused["parts"] if p["type"].startswith("tool-")] == ["approval-requested",
                                                                                      "output-available"]
    assert [m["role"] for m in seen["messages"]] == ["user", "assistant"]
    answer = seen["messages"][-1]
    assert _parts(answer, "tool-danger")[0]["output"] == "wiped prod"
    assert _parts(answer, "text")[-1]["text"] == 'Heard: danger said wiped prod; get_location said {"city":"Paris"}.'
    assert DANGER_LOG == ["prod"]
    assert len(seen["sent"]) == 2, "one request answers both"
    log = await _messages(chat_server, chat_id)
    assert len(_results(log, _calls(log, "get_location")[0]["id"])) == 1


async def test_a_new_message_instead_of_the_output_closes_the_call_in_the_server_only(chat_server: LiveServer) -> None:
    chat_id, seen = _chat(chat_server, "abandon")
    assert [m["role"] for m in seen["messages"]] == ["user", "assistant", "user", "assistant"]
    (tool,) = _parts(seen["messages"][1], "tool-get_location")
    assert tool["state"] == "input-available", "the new answer's stream says nothing of the earlier message's call"
    assert _parts(seen["messages"][-1], "text")[-1]["text"] == "You said: never mind"
    log = await _messages(chat_server, chat_id)
    (result,) = _results(log, _calls(log, "get_location")[0]["id"])
    assert result["is_error"], "the model sees the call closed as not answered"


# -- over plain HTTP ------------------------------------------------------------------------


def _body(chat_id: str, *messages: dict[str, Any], tools: Any = None) -> dict[str, Any]:
    body = {"id": chat_id, "trigger": "submit-message", "messages": list(messages)}
    return body if tools is None else {**body, "tools": tools}


def _user(text: str) -> dict[str, Any]:
    return {"id": f"u-{uuid.uuid4().hex[:6]}", "role": "user", "parts": [{"type": "text", "text": text}]}


def _chunks(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    frames = [f for f in response.text.split("\n\n") if f and not f.startswith(":")]
    assert frames[-1] == "data: [DONE]"
    return [json.loads(f.removeprefix("data: ")) for f in frames[:-1]]


def _answered(user: dict[str, Any], chunks: list[dict[str, Any]], **states: dict[str, Any]) -> dict[str, Any]:
    """The assistant message a client sends back: each tool call of `chunks`, its part in the state `states` gives."""
    parts: list[dict[str, Any]] = [{"type": "step-start"}]
    for chunk in chunks:
        if chunk["type"] == "tool-input-available":
            part = {"type": f"tool-{chunk['toolName']}", "toolCallId": chunk["toolCallId"], "input": chunk["input"]}
            parts.append(part | states.get(chunk["toolName"], {"state": "input-available"}))
    return {"id": f"{user['id']}:reply", "role": "assistant", "parts": parts}


PARIS = {"state": "output-available", "output": {"city": "Paris"}}


async def test_a_call_to_a_client_tool_finishes_the_message_with_the_call_open(chat_server: LiveServer) -> None:
    user = _user("where")
    async with httpx.AsyncClient(base_url=chat_server.url, timeout=30) as http:
        chunks = _chunks(await http.post("/v1/ai-sdk/chat", json=_body("c-open", user, tools={"get_location":
                                                                                             LOCATION})))
    kinds = [c["type"] for c in chunks if c["type"] != "data-status"]
    assert kinds == ["start", "start-step", "tool-input-start", "tool-input-available", "finish-step", "finish"]
    assert chunks[-1] == {"type": "finish", "finishReason": "tool-calls"}
    assert next(c for c in chunks if c["type"] == "tool-input-available")["toolName"] == "get_location"


async def _refused(http: httpx.AsyncClient, body: dict[str, Any], said: str) -> None:
    response = await http.post("/v1/ai-sdk/chat", json=body)
    assert response.status_code == 422, response.text
    assert said in response.json()["message"], response.json()["message"]


async def test_bad_client_tool_declarations_answer_422(chat_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=chat_server.url, timeout=30) as http:
        for bad, said in [([], "tools"), ({"get_location": "x"}, "tools"), ({"bad name!": LOCATION}, "name"),
                          ({"get_location": {"inputSchema": []}}, "inputSchema"), ({"add": LOCATION}, "the agent's")]:
            await _refused(http, _body("c-bad", _user("where"), tools=bad), said)


async def test_outputs_that_answer_no_waiting_client_call_answer_422_and_are_stored_once(
    chat_server: LiveServer,
) -> None:
    tools, user = {"get_location": LOCATION}, _user("where")
    async with httpx.AsyncClient(base_url=chat_server.url, timeout=30) as http:
        chunks = _chunks(await http.post("/v1/ai-sdk/chat", json=_body("c-422", user, tools=tools)))
        answer = _answered(user, chunks, get_location=PARIS)
        await _refused(http, _body("c-422", user, answer), "send the same tools")
        stranger = {**answer, "parts": [{**answer["parts"][1], "toolCallId": "never-made"}]}
        await _refused(http, _body("c-422", user, stranger, tools=tools), "never made")
        renamed = {**answer, "parts": [{**answer["parts"][1], "type": "tool-get_weather"}]}
        await _refused(http, _body("c-422", user, renamed, tools=tools), "that call is to get_location")
        approved = _answered(user, chunks, get_location={"state": "approval-responded",
                                                         "approval": {"id": "a1", "approved": True}})
        await _refused(http, _body("c-422", user, approved, tools=tools), "addToolOutput")

        resumed = _chunks(await http.post("/v1/ai-sdk/chat", json=_body("c-422", user, answer, tools=tools)))
        assert resumed[0] == {"type": "start", "messageId": answer["id"]}
        assert not [c for c in resumed if c["type"].startswith("tool-output")], "the client holds its own output"
        await _refused(http, _body("c-422", user, answer, tools=tools), "waits for")  # sent again
        log = [e for e in await full_log(http, "c-422") if e["kind"] == "message"]
    (call,) = _calls(log, "get_location")
    assert len(_results(log, call["id"])) == 1, "the output sent twice is stored once"
    assert len([e for e in log if e["role"] == "assistant"]) == 2, "the call and one answer"


async def test_an_output_for_a_call_paused_for_approval_answers_422(chat_server: LiveServer) -> None:
    tools, risky = {"get_location": LOCATION}, _user("risky")
    async with httpx.AsyncClient(base_url=chat_server.url, timeout=30) as http:
        chunks = _chunks(await http.post("/v1/ai-sdk/chat", json=_body("c-risky", risky, tools=tools)))
        assert [c["type"] for c in chunks].count("tool-approval-request") == 1, "for danger only"
        danger = _answered(risky, chunks, danger=PARIS, get_location=PARIS)
        await _refused(http, _body("c-risky", risky, danger, tools=tools), "runs on the server")
    assert DANGER_LOG == []
