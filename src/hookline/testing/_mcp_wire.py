"""What the MCP test servers send and read on the wire: tools, results, the input a tool asks for, its answers.

Shared by the conformance kit's fixture (`hookline.testing._mcp_fixture`) and the tests' own
servers. A tool asks with an `input_required` result on 2026-07-28 requests; the client
answers in a retry of the call, which may echo a request state.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

__all__ = [
    "AUDIO", "IMAGE", "OBJECT", "ROOTS_REQUEST", "Call", "Context", "Handler", "answer", "elicit_request",
    "input_required", "modern", "sampling_request", "state_of", "string_arguments", "text", "tool",
]

IMAGE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
"""A 1x1 PNG, base64."""
AUDIO = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
"""A silent WAV, base64."""

Context = Any
"""The SDK's `ServerRequestContext` of a request (the fixture reads its `session`, `protocol_version`, `request_id`)."""
Call = types.CallToolRequestParams
Handler = Callable[[Context, Call], Awaitable[types.CallToolResult | types.InputRequiredResult]]


def text(value: str, *, is_error: bool = False) -> types.CallToolResult:
    """A result of one text block."""
    return types.CallToolResult(content=[types.TextContent(text=value)], is_error=is_error)


def modern(ctx: Context) -> bool:
    """Whether the request is a 2026-07-28 one (input comes by `input_required` results)."""
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def elicit_request(message: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An `elicitation/create` input request, as an `input_required` result carries it."""
    schema = {"type": "object", "properties": properties, "required": required}
    return {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}


def sampling_request(prompt: str, max_tokens: int = 100) -> dict[str, Any]:
    """A `sampling/createMessage` input request."""
    message = {"role": "user", "content": {"type": "text", "text": prompt}}
    return {"method": "sampling/createMessage", "params": {"messages": [message], "maxTokens": max_tokens}}


ROOTS_REQUEST = {"method": "roots/list"}


def input_required(requests: dict[str, dict[str, Any]], state: dict[str, Any] | None = None
                   ) -> types.InputRequiredResult:
    """Ask the client for `requests`; `state` comes back (sealed, then opened) with its answers."""
    payload: dict[str, Any] = {"resultType": "input_required", "inputRequests": requests}
    if state is not None:
        payload["requestState"] = json.dumps(state)
    return types.InputRequiredResult.model_validate(payload)


def answer(params: types.InputResponseRequestParams, key: str) -> dict[str, Any] | None:
    """The client's answer to input request `key` in this retry, as JSON, or None."""
    response = (params.input_responses or {}).get(key)
    if response is None:
        return None
    dumped = response.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped if isinstance(dumped, dict) else None


def state_of(params: types.InputResponseRequestParams) -> dict[str, Any]:
    """The request state this retry echoes (opened by the boundary), or `{}`."""
    if not params.request_state:
        return {}
    value = json.loads(params.request_state)
    return value if isinstance(value, dict) else {}


OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
"""The input schema of a tool that takes no arguments."""


def tool(name: str, description: str, schema: dict[str, Any] | None = None) -> types.Tool:
    """A tool's declaration (`schema`: its input schema, none by default)."""
    return types.Tool(name=name, description=description, input_schema=schema or OBJECT)


def string_arguments(*names: str) -> dict[str, Any]:
    """The input schema of required string arguments `names`."""
    return {"type": "object", "properties": {n: {"type": "string"} for n in names}, "required": list(names)}
