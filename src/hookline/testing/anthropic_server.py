"""`FakeAnthropicServer`: a scripted Messages API server speaking Anthropic's wire format.

It answers `POST /v1/messages` with JSON, or, when the request asks to stream, with
server-sent events from `message_start` to `message_stop` (thinking and signature deltas,
text deltas and tool input JSON deltas in between). A reply's `reasoning` comes first, as
`thinking` blocks with a signature, or `redacted_thinking` blocks for a part with `data`.
"""

from __future__ import annotations

import json
from typing import ClassVar

from hookline.messages import ReasoningPart, ToolCallPart
from hookline.testing._serve import Reply, ScriptedServer, pieces
from hookline.testing._wire_checks import anthropic_problem
from hookline.types import JSONObject

__all__ = ["FakeAnthropicServer"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class FakeAnthropicServer(ScriptedServer):
    """A fake Anthropic Messages API on 127.0.0.1, scripted per test.

    Example:
        ```python
        with FakeAnthropicServer() as server:
            server.enqueue_tool_calls([("add", {"a": 1, "b": 2})])
            model = AnthropicModel("claude-sonnet-4-6", base_url=server.base_url, api_key="test")
            ...
            server.assert_complete()
        ```

    """

    path: ClassVar[str] = "/v1/messages"
    id_prefix: ClassVar[str] = "toolu_"

    @property
    def base_url(self) -> str:
        """The base URL to give `AnthropicModel` or the `anthropic` SDK (the root URL)."""
        return self.url

    def _error_body(self, status: int, message: str) -> JSONObject:
        return {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}}

    def _refusal(self, body: JSONObject) -> str | None:
        return anthropic_problem(body)

    # The SDK skips events without a name, so the garbage comes under a name it reads.
    _garbage_frame: ClassVar[str] = "event: content_block_delta\ndata: {not json"

    def _ends_answer(self, chunk: JSONObject) -> bool:
        return chunk.get("type") in ("message_delta", "message_stop")

    def _frame(self, chunk: JSONObject) -> str:
        return f"event: {chunk.get('type', 'message')}\ndata: {json.dumps(chunk)}"

    def _reply_json(self, reply: Reply, request: JSONObject) -> JSONObject:
        content: list[JSONObject] = [_thinking(part, number) for number, part in enumerate(reply.reasoning, 1)]
        content += [{"type": "text", "text": reply.text}] if reply.text else []
        content.extend(_tool_use(call, call.arguments) for call in reply.tool_calls)
        return {
            **_message(reply, request),
            "content": content,
            "stop_reason": _stop_reason(reply),
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
        }

    def _reply_chunks(self, reply: Reply, request: JSONObject) -> list[JSONObject]:
        start = {**_message(reply, request), "content": [], "stop_reason": None}
        start["usage"] = {"input_tokens": reply.input_tokens, "output_tokens": 1}
        events: list[JSONObject] = [{"type": "message_start", "message": start}, {"type": "ping"}]
        blocks = [_thinking_block(part, number) for number, part in enumerate(reply.reasoning, 1)]
        blocks += [_text_block(reply.text)] if reply.text else []
        blocks.extend(_tool_block(call) for call in reply.tool_calls)
        for index, (block, deltas) in enumerate(blocks):
            events.append({"type": "content_block_start", "index": index, "content_block": block})
            events.extend({"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas)
            events.append({"type": "content_block_stop", "index": index})
        delta = {"stop_reason": _stop_reason(reply), "stop_sequence": None}
        events.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": reply.output_tokens}})
        events.append({"type": "message_stop"})
        return events


def _message(reply: Reply, request: JSONObject) -> JSONObject:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", "fake"),
        "stop_sequence": None,
    }


def _stop_reason(reply: Reply) -> str:
    return "tool_use" if reply.tool_calls else "end_turn"


def _tool_use(call: ToolCallPart, arguments: object) -> JSONObject:
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments}


def _thinking(part: ReasoningPart, number: int) -> JSONObject:
    if part.data is not None:
        return {"type": "redacted_thinking", "data": part.data}
    return {"type": "thinking", "thinking": part.text, "signature": part.signature or f"sig-fake{number}"}


def _thinking_block(part: ReasoningPart, number: int) -> tuple[JSONObject, list[JSONObject]]:
    # As the API streams them: a redacted block whole; a thinking block empty, its text, then its signature.
    block = _thinking(part, number)
    if block["type"] == "redacted_thinking":
        return block, []
    deltas = [{"type": "thinking_delta", "thinking": piece} for piece in pieces(part.text)]
    deltas.append({"type": "signature_delta", "signature": block["signature"]})
    return {"type": "thinking", "thinking": "", "signature": ""}, deltas


def _text_block(text: str) -> tuple[JSONObject, list[JSONObject]]:
    return {"type": "text", "text": ""}, [{"type": "text_delta", "text": piece} for piece in pieces(text)]


def _tool_block(call: ToolCallPart) -> tuple[JSONObject, list[JSONObject]]:
    # As the API streams them: the block with an empty input, then the input JSON in fragments.
    raw = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
    deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in pieces(raw, 5)]
    return _tool_use(call, {}), deltas
