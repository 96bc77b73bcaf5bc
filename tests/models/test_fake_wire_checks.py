"""The fakes refuse, with the provider's 400, a body the real API would refuse for its content parts.

Bodies are posted with plain httpx, as a broken adapter would send them; a refused body is
recorded but takes no scripted answer, which the next good body gets.
"""

from __future__ import annotations

import httpx
import pytest

from hookline.testing import FakeAnthropicServer, FakeOpenAIServer, ScriptedServer
from hookline.types import JSONObject

IMAGE_URL = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
PNG_DATA = "iVBORw0KGgo="


def post(server: ScriptedServer, path: str, body: JSONObject) -> httpx.Response:
    return httpx.post(server.url + path, json=body, timeout=10)


def refused(server: ScriptedServer, path: str, body: JSONObject) -> str:
    """The refusal's message; the scripted answer is still there for the next good body."""
    server.enqueue_text("ok")
    answer = post(server, path, body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["type"] == "invalid_request_error"
    return str(answer.json()["error"]["message"])


def chat(*messages: JSONObject) -> JSONObject:
    return {"model": "gpt-4o-mini", "messages": list(messages)}


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ({"role": "tool", "tool_call_id": "c1", "content": [IMAGE_URL]},
         "'image_url' is not allowed in a tool message"),
        ({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "cat.png"}}]},
         "must be an http(s) URL or a data:image URL"),
        ({"role": "user", "content": [{"type": "file", "file": {"file_data": "data:text/plain;base64,aGk="}}]},
         "only PDF files are supported, got text/plain"),
        ({"role": "user", "content": [{"type": "input_image", "image_url": "https://example.com/cat.png"}]},
         "'input_image' is not allowed in a user message"),
    ],
    ids=["image-in-tool-message", "bare-path", "text-file", "responses-part"],
)
def test_the_chat_fake_refuses_parts_openai_refuses(message: JSONObject, said: str) -> None:
    with FakeOpenAIServer() as server:
        assert said in refused(server, "/v1/chat/completions", chat(message))
        good = chat({"role": "user", "content": [{"type": "text", "text": "What is this?"}, IMAGE_URL]})
        assert post(server, "/v1/chat/completions", good).status_code == 200
        assert len(server.requests) == 2
        server.assert_complete()


@pytest.mark.parametrize(
    ("item", "said"),
    [
        ({"type": "function_call_output", "call_id": "c1", "output": [IMAGE_URL]}, "'image_url' is not allowed"),
        ({"role": "user", "content": [{"type": "input_file", "file_url": "https://x/a.pdf", "file_id": "f1"}]},
         "exactly one of file_data, file_id and file_url"),
        ({"role": "user", "content": [{"type": "input_file", "file_data": "data:application/pdf;base64,JVBE"}]},
         "given with a filename"),
    ],
    ids=["chat-part-in-output", "two-sources", "no-filename"],
)
def test_the_responses_fake_refuses_parts_openai_refuses(item: JSONObject, said: str) -> None:
    with FakeOpenAIServer() as server:
        assert said in refused(server, "/v1/responses", {"model": "gpt-5-mini", "input": [item]})
        image = {"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "auto"}
        output = {"type": "function_call_output", "call_id": "c1", "output": [image]}
        assert post(server, "/v1/responses", {"model": "gpt-5-mini", "input": [output]}).status_code == 200
        server.assert_complete()


@pytest.mark.parametrize(
    ("block", "said"),
    [
        ({"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": PNG_DATA}},
         "messages.0.content.0.image.source.media_type: Input should be 'image/jpeg'"),
        ({"type": "document", "source": {"type": "base64", "media_type": "text/plain", "data": "aGk="}},
         "document.source.media_type: Input should be 'application/pdf'"),
        ({"type": "text", "text": ""}, "text content blocks must be non-empty"),
        ({"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "tool_use", "id": "t2"}]},
         "'tool_use' blocks are not allowed in a tool result"),
        ({"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "image", "source": {"type": "url", "url": "cat.png"}}]},
         "tool_result.content.0.image.source.url: must be an http(s) URL"),
    ],
    ids=["bmp-image", "text-as-base64-document", "empty-text", "tool-use-in-result", "bare-url-in-result"],
)
def test_the_anthropic_fake_refuses_blocks_anthropic_refuses(block: JSONObject, said: str) -> None:
    with FakeAnthropicServer() as server:
        body = {"model": "claude-haiku-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": [block]}]}
        assert said in refused(server, "/v1/messages", body)
        image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_DATA}}
        result = {"type": "tool_result", "tool_use_id": "t1", "content": [image]}
        body["messages"] = [{"role": "user", "content": [result]}]
        assert post(server, "/v1/messages", body).status_code == 200
        server.assert_complete()
