"""`FakeOpenAIServer`: a scripted Chat Completions server speaking OpenAI's wire format.

It answers `POST /v1/chat/completions` with JSON, or with server-sent chunks ending in
`data: [DONE]` when the request asks to stream (a usage chunk first, when the request
sets `stream_options.include_usage`).
"""

from __future__ import annotations

import json
import time
from typing import ClassVar

from hookline.messages import ToolCallPart
from hookline.testing._serve import Reply, ScriptedServer, pieces
from hookline.types import JSONObject

__all__ = ["FakeOpenAIServer"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


class FakeOpenAIServer(ScriptedServer):
    """A fake OpenAI-compatible server on 127.0.0.1, scripted per test.

    Example:
        ```python
        with FakeOpenAIServer() as server:
            server.enqueue_text("hello")
            model = OpenAIModel("gpt-4o-mini", base_url=server.base_url, api_key="test")
            ...
            server.assert_complete()
        ```

    """

    path: ClassVar[str] = "/v1/chat/completions"
    id_prefix: ClassVar[str] = "call_"

    @property
    def base_url(self) -> str:
        """The base URL to give `OpenAIModel` or the `openai` SDK (`.../v1`)."""
        return self.url + "/v1"

    def _error_body(self, status: int, message: str) -> JSONObject:
        error_type = _ERROR_TYPES.get(status, "server_error")
        return {"error": {"message": message, "type": error_type, "param": None, "code": None}}

    def _stream_end(self) -> list[str]:
        return ["data: [DONE]"]

    def _ends_answer(self, chunk: JSONObject) -> bool:
        return any(choice.get("finish_reason") for choice in chunk.get("choices", [])) or "usage" in chunk

    def _reply_json(self, reply: Reply, request: JSONObject) -> JSONObject:
        message: JSONObject = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = [_call_json(call) for call in reply.tool_calls]
        choice = {"index": 0, "message": message, "finish_reason": _finish(reply), "logprobs": None}
        return {**_header(request, "chat.completion"), "choices": [choice], "usage": _usage(reply)}

    def _reply_chunks(self, reply: Reply, request: JSONObject) -> list[JSONObject]:
        header = _header(request, "chat.completion.chunk")
        deltas: list[JSONObject] = [{"role": "assistant", "content": ""}]
        deltas.extend({"content": piece} for piece in pieces(reply.text))
        for index, call in enumerate(reply.tool_calls):
            deltas.extend(_call_deltas(index, call))
        chunks = [_chunk(header, delta, None) for delta in deltas]
        chunks.append(_chunk(header, {}, _finish(reply)))
        if (request.get("stream_options") or {}).get("include_usage"):
            chunks.append({**header, "choices": [], "usage": _usage(reply)})
        return chunks


def _header(request: JSONObject, kind: str) -> JSONObject:
    return {"id": "chatcmpl-fake", "object": kind, "created": int(time.time()), "model": request.get("model", "fake")}


def _finish(reply: Reply) -> str:
    return "tool_calls" if reply.tool_calls else "stop"


def _usage(reply: Reply) -> JSONObject:
    total = reply.input_tokens + reply.output_tokens
    return {"prompt_tokens": reply.input_tokens, "completion_tokens": reply.output_tokens, "total_tokens": total}


def _arguments(call: ToolCallPart) -> str:
    return call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)


def _call_json(call: ToolCallPart) -> JSONObject:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": _arguments(call)}}


def _call_deltas(index: int, call: ToolCallPart) -> list[JSONObject]:
    # As OpenAI streams them: id and name first, then the arguments in fragments.
    first = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
    rest = [{"index": index, "function": {"arguments": piece}} for piece in pieces(_arguments(call), 5)]
    return [{"tool_calls": [fragment]} for fragment in [first, *rest]]


def _chunk(header: JSONObject, delta: JSONObject, finish_reason: str | None) -> JSONObject:
    return {**header, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}]}
