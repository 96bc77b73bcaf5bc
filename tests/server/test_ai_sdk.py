"""The AI SDK's UI message stream at `POST /v1/ai-sdk/chat`, driven by the `ai` package's own chat logic.

`AbstractChat` and `DefaultChatTransport` (AI SDK v6, npm `ai`) run in node against a real server;
the transport parses every chunk with the package's own `uiMessageChunkSchema`. The stream's
framing (header, `data: [DONE]`) and bad requests are checked over plain HTTP.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from hookline import Agent
from hookline.hooklib import OutputGuardrail
from hookline.sessions import SessionStore
from support.node_kit import node_output, run_node

from .agent import DANGER_LOG, make_agent
from .live import LiveServer
from .live_agents import LiveModel, steps, told

pytestmark = pytest.mark.anyio


def _chat(server: LiveServer, scenario: str) -> dict[str, Any]:
    result: dict[str, Any] = run_node("ai_sdk_chat.mjs", server.url, f"c-{uuid.uuid4().hex[:8]}", scenario)
    assert result["errors"] == [], result["errors"]
    return result


def _parts(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [p for p in message["parts"] if p["type"] == kind or p["type"].startswith(kind)]


def test_use_chat_gets_tool_parts_and_the_answer(server: LiveServer) -> None:
    seen = _chat(server, "tools")
    user, answer = seen["messages"]
    assert user["role"] == "user"
    assert answer["role"] == "assistant"
    assert answer["id"] == f"{user['id']}:reply"
    (tool,) = _parts(answer, "tool-")
    assert (tool["type"], tool["state"], tool["input"], tool["output"]) == ("tool-add", "output-available",
                                                                           {"a": 2, "b": 3}, "5")
    assert _parts(answer, "text")[-1]["text"] == "The tool said: 5."
    assert len(_parts(answer, "step-start")) == 2, "one step per model call"
    assert any(p["data"]["text"] == "add returned 5" for p in _parts(answer, "data-status"))
    assert seen["finishes"][-1]["finishReason"] == "stop"


def test_an_approval_answered_in_the_chat_continues_the_same_assistant_message(server: LiveServer) -> None:
    DANGER_LOG.clear()
    seen = _chat(server, "approval")
    (paused,) = _parts(seen["paused"][-1], "tool-danger")
    assert paused["state"] == "approval-requested"
    assert seen["finishes"][0]["finishReason"] == "tool-calls"
    assert [m["role"] for m in seen["messages"]] == ["user", "assistant"], "the resumed answer is the same message"
    (tool,) = _parts(seen["messages"][-1], "tool-danger")
    assert (tool["state"], tool["output"]) == ("output-available", "wiped prod")
    assert _parts(seen["messages"][-1], "text")[-1]["text"] == "The tool said: wiped prod."
    assert DANGER_LOG == ["prod"]


def test_a_refusal_in_the_chat_is_an_output_denied(server: LiveServer) -> None:
    DANGER_LOG.clear()
    seen = _chat(server, "deny")
    (tool,) = _parts(seen["messages"][-1], "tool-danger")
    assert tool["state"] == "output-denied"
    assert DANGER_LOG == []


async def test_the_stream_is_framed_as_the_ai_sdk_reads_it(server: LiveServer) -> None:
    body = {"id": f"c-{uuid.uuid4().hex[:8]}", "trigger": "submit-message",
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hello"}]}]}
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        response = await http.post("/v1/ai-sdk/chat", json=body)
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    frames = [f for f in response.text.split("\n\n") if f]
    assert frames[-1] == "data: [DONE]"
    chunks = [json.loads(f.removeprefix("data: ")) for f in frames[:-1]]
    assert chunks[0] == {"type": "start", "messageId": "u1:reply"}
    assert chunks[-1] == {"type": "finish", "finishReason": "stop"}


async def test_an_answer_a_guardrail_holds_back_finishes_as_content_filtered(
    make_server: Callable[..., LiveServer], store: SessionStore
) -> None:
    agent = make_agent(store)
    guarded = agent.clone(hooks={**agent.hooks, "after_llm": [OutputGuardrail(lambda _: "not today")]})
    server = make_server(agent=guarded)
    body = {"id": f"c-{uuid.uuid4().hex[:8]}", "trigger": "submit-message",
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hello"}]}]}
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        response = await http.post("/v1/ai-sdk/chat", json=body)
    chunks = [json.loads(f.removeprefix("data: ")) for f in response.text.split("\n\n") if f and f != "data: [DONE]"]
    assert chunks[-1] == {"type": "finish", "finishReason": "content-filter"}
    assert not [c for c in chunks if c["type"] == "text-delta"], "the held-back answer never streamed"


async def test_bad_chat_requests_answer_clear_errors(server: LiveServer) -> None:
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    cases = [
        ({"messages": []}, "useChat"),
        ({"id": "c-x", "messages": [user], "trigger": "regenerate-message"}, "fork"),
        ({"id": "bad id!", "messages": [user], "trigger": "submit-message"}, "invalid session id"),
        ({"id": "c-y", "messages": [{"id": "a", "role": "assistant", "parts": []}]}, "answers no call"),
        ({"id": "c-z", "messages": [{"id": "u", "role": "user", "parts": [{"type": "file", "url": "x",
                                                                         "mediaType": "image/png"}]}]}, "text parts"),
    ]
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        for body, said in cases:
            response = await http.post("/v1/ai-sdk/chat", json=body)
            assert response.status_code == 422, response.text
            assert said in response.json()["message"]
        assert (await http.get("/v1/ai-sdk/chat/c-none/stream")).status_code == 204


def test_use_chat_resumes_an_answer_going_on_and_rebuilds_it(
    make_server: Callable[..., LiveServer], store: SessionStore
) -> None:
    server = make_server(agent=Agent("live", model=LiveModel(), tools=[steps], session_store=store))
    seen = _chat(server, "resume")
    before = _parts(seen["before"][-1], "text")[-1]["text"]
    assert 10 <= len(before.split()) < 80, "the first chat stopped mid-answer"
    assert [m["role"] for m in seen["messages"]] == ["user", "assistant"]
    assert seen["messages"][-1]["id"] == seen["before"][-1]["id"], "the resumed stream continues the same message"
    assert _parts(seen["messages"][-1], "text")[-1]["text"] == told(80)
    assert seen["status"] == "ready"


def test_the_node_example_chats_with_a_server(server: LiveServer) -> None:
    example = Path(__file__).parents[2] / "examples" / "ai_sdk_chat.mjs"
    printed = node_output(example, server.url, "add 2 and 3")
    assert '[add] {"a":2,"b":3} -> 5' in printed.splitlines()
    assert "The tool said: 5." in printed
