"""OpenAI's Responses API wire format, as `FakeOpenAIServer` speaks it at `POST /v1/responses`.

A reply becomes a `response` object whose `output` holds its items in order: reasoning
items, then the message, then the function calls. Streamed, each item is announced
(`response.output_item.added`), filled by deltas (summary text, output text, call
arguments) and finished (`response.output_item.done`), between `response.created` and
`response.completed`, which carries the usage. A reasoning item holds its encrypted content
only when the request asked for it (`include: ["reasoning.encrypted_content"]`), as the API does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

from hookline.messages import ReasoningPart, ToolCallPart
from hookline.testing._serve import Reply, pieces
from hookline.types import JSONObject

__all__ = ["ENDING_EVENTS", "response_events", "response_json"]

ENDING_EVENTS = ("response.completed", "response.incomplete")
"""The events that end a response stream."""


def response_json(reply: Reply, request: JSONObject) -> JSONObject:
    """The whole `response` object answering `request`."""
    return _response(reply, request, "completed", list(_items(reply, request)))


def response_events(reply: Reply, request: JSONObject) -> list[JSONObject]:
    """The stream of events answering `request`, numbered by `sequence_number`."""
    events: list[JSONObject] = [{"type": "response.created", "response": _response(reply, request, "in_progress", [])}]
    for index, item in enumerate(_items(reply, request)):
        events.extend(_item_events(index, item))
    events.append({"type": "response.completed", "response": response_json(reply, request)})
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


def _response(reply: Reply, request: JSONObject, status: str, output: list[JSONObject]) -> JSONObject:
    done = status == "completed"
    return {
        "id": "resp_fake",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": request.get("model", "fake"),
        "output": output,
        "usage": _usage(reply) if done else None,
        "error": None,
        "incomplete_details": None,
        "instructions": request.get("instructions"),
        "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools", []),
        "store": request.get("store", True),
    }


def _usage(reply: Reply) -> JSONObject:
    return {
        "input_tokens": reply.input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": reply.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }


def _items(reply: Reply, request: JSONObject) -> Iterator[JSONObject]:
    encrypted = "reasoning.encrypted_content" in (request.get("include") or [])
    for number, part in enumerate(reply.reasoning, 1):
        yield _reasoning_item(part, number, encrypted)
    if reply.text:
        content = [{"type": "output_text", "text": reply.text, "annotations": [], "logprobs": []}]
        yield {"type": "message", "id": "msg_fake", "status": "completed", "role": "assistant", "content": content}
    for number, call in enumerate(reply.tool_calls, 1):
        yield _call_item(call, number)


def _reasoning_item(part: ReasoningPart, number: int, encrypted: bool) -> JSONObject:
    summary = [{"type": "summary_text", "text": part.text}] if part.text else []
    item: JSONObject = {"type": "reasoning", "id": part.id or f"rs_fake{number}", "summary": summary}
    item["encrypted_content"] = (part.data or f"encrypted-{number}") if encrypted else None
    return item


def _call_item(call: ToolCallPart, number: int) -> JSONObject:
    arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
    return {"type": "function_call", "id": f"fc_fake{number}", "call_id": call.id, "name": call.name,
            "arguments": arguments, "status": "completed"}


def _item_events(index: int, item: JSONObject) -> list[JSONObject]:
    """One output item as the API streams it: announced empty, filled by deltas, then finished."""
    where = {"output_index": index, "item_id": item["id"]}
    if item["type"] == "reasoning":
        added = {**item, "summary": [], "encrypted_content": None}
        deltas = [
            {"type": "response.reasoning_summary_text.delta", **where, "summary_index": 0, "delta": piece}
            for summary in item["summary"] for piece in pieces(summary["text"])
        ]
    elif item["type"] == "message":
        added = {**item, "status": "in_progress", "content": []}
        text = item["content"][0]["text"]
        deltas = [{"type": "response.content_part.added", **where, "content_index": 0,
                   "part": {"type": "output_text", "text": "", "annotations": []}}]
        deltas += [{"type": "response.output_text.delta", **where, "content_index": 0, "delta": piece, "logprobs": []}
                   for piece in pieces(text)]
        deltas.append({"type": "response.output_text.done", **where, "content_index": 0, "text": text, "logprobs": []})
    else:
        added = {**item, "status": "in_progress", "arguments": ""}
        deltas = [{"type": "response.function_call_arguments.delta", **where, "delta": piece}
                  for piece in pieces(item["arguments"], 5)]
        deltas.append({"type": "response.function_call_arguments.done", **where, "arguments": item["arguments"]})
    return [
        {"type": "response.output_item.added", "output_index": index, "item": added},
        *deltas,
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]
