"""`FakeOpenAIServer`: a scripted OpenAI server speaking Chat Completions and the Responses API.

It answers `POST /v1/chat/completions` with JSON, or with server-sent chunks ending in
`data: [DONE]` when the request asks to stream (a usage chunk first, when the request
sets `stream_options.include_usage`). It answers `POST /v1/responses` in the Responses
API's format (`hookline.testing._responses_wire`). Both routes play the same script: each
scripted reply is rendered in the format of the route that takes it.
"""

from __future__ import annotations

import json
import time
from contextvars import ContextVar
from typing import ClassVar

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from hookline.messages import ToolCallPart
from hookline.testing._responses_wire import ENDING_EVENTS, response_events, response_json
from hookline.testing._serve import Reply, ScriptedServer, pieces
from hookline.testing._wire_checks import chat_problem, responses_problem
from hookline.types import JSONObject

__all__ = ["FakeOpenAIServer"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}

_responses: ContextVar[bool] = ContextVar("hookline_fake_openai_responses", default=False)
"""Whether the request being answered came to the Responses API's route."""


class FakeOpenAIServer(ScriptedServer):
    """A fake OpenAI-compatible server on 127.0.0.1, scripted per test.

    Chat Completions (`OpenAIModel`) and the Responses API (`OpenAIResponsesModel`) share
    one `base_url` and one script. A `Reply`'s `reasoning` reaches the Responses API as
    reasoning items, and Chat Completions as the texts of its parts, joined, in the message's
    (or, streamed, the deltas') `reasoning_field`, as DeepSeek and vLLM send it.

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
    responses_path: ClassVar[str] = "/v1/responses"
    """The Responses API's route."""
    id_prefix: ClassVar[str] = "call_"

    def __init__(self) -> None:
        super().__init__()
        self.reasoning_field = "reasoning_content"
        """The Chat Completions field a reply's reasoning goes in: "reasoning_content" (DeepSeek) or "reasoning"."""
        self.app.router.routes.append(Route(self.responses_path, self._handle_responses, methods=["POST"]))

    async def _handle_responses(self, request: Request) -> Response:
        token = _responses.set(True)
        try:
            return await self._handle(request)
        finally:
            _responses.reset(token)

    @property
    def base_url(self) -> str:
        """The base URL to give `OpenAIModel` or the `openai` SDK (`.../v1`)."""
        return self.url + "/v1"

    def _error_body(self, status: int, message: str) -> JSONObject:
        error_type = _ERROR_TYPES.get(status, "server_error")
        return {"error": {"message": message, "type": error_type, "param": None, "code": None}}

    def _refusal(self, body: JSONObject) -> str | None:
        return responses_problem(body) if _responses.get() else chat_problem(body)

    def _stream_end(self) -> list[str]:
        return [] if _responses.get() else ["data: [DONE]"]

    def _frame(self, chunk: JSONObject) -> str:
        # Responses API events are named (Chat Completions chunks are not): `event:` carries the type.
        kind = chunk.get("type")
        named = f"event: {kind}\n" if isinstance(kind, str) else ""
        return f"{named}data: {json.dumps(chunk)}"

    def _ends_answer(self, chunk: JSONObject) -> bool:
        if chunk.get("type") in ENDING_EVENTS:
            return True
        return any(choice.get("finish_reason") for choice in chunk.get("choices", [])) or "usage" in chunk

    def _reply_json(self, reply: Reply, request: JSONObject) -> JSONObject:
        if _responses.get():
            return response_json(reply, request)
        message: JSONObject = {"role": "assistant", "content": reply.text or None}
        reasoning = _reasoning(reply)
        if reasoning:
            message[self.reasoning_field] = reasoning
        if reply.tool_calls:
            message["tool_calls"] = [_call_json(call) for call in reply.tool_calls]
        choice = {"index": 0, "message": message, "finish_reason": _finish(reply), "logprobs": None}
        return {**_header(request, "chat.completion"), "choices": [choice], "usage": _usage(reply)}

    def _reply_chunks(self, reply: Reply, request: JSONObject) -> list[JSONObject]:
        if _responses.get():
            return response_events(reply, request)
        header = _header(request, "chat.completion.chunk")
        deltas: list[JSONObject] = [{"role": "assistant", "content": ""}]
        deltas.extend({self.reasoning_field: piece} for piece in pieces(_reasoning(reply)))
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


def _reasoning(reply: Reply) -> str:
    return "\n\n".join(part.text for part in reply.reasoning if part.text)


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
