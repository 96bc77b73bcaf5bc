"""`OpenAIResponsesModel`: OpenAI's Responses API, through the official SDK.

The Responses API is where OpenAI's reasoning models keep their reasoning from one call to
the next: an answer's `reasoning` items go back in the next call's `input`. This adapter
keeps no state on the server (`store: false`): every call sends the whole conversation as
the log holds it, and for a reasoning model it asks for each reasoning item's encrypted
content (`include: ["reasoning.encrypted_content"]`), so that the reasoning survives the
round trip without `previous_response_id`.

A reasoning item becomes a `ReasoningPart` tagged "openai-responses" (its id, its summary
as `text`, its encrypted content as `data`), and only this adapter sends it back; a tool
call is a `function_call` item whose `call_id` is the `ToolCallPart.id`, and a result a
`function_call_output` item. System messages become `instructions`. SDK types stay in this
module, as in `hookline.models.openai`, whose client, error table and key rules it shares.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, cast

import httpx
import httpx2

from hookline.errors import ModelError
from hookline.messages import FilePart, ImagePart, Message, ReasoningPart, ToolCallPart, ToolResultPart
from hookline.models._errors import converted, garbled, malformed, missing_sdk
from hookline.models._openai_shared import (
    ERRORS,
    clients,
    find_api_key,
    result_content,
    schema_name,
    strict_ok,
)
from hookline.models._render import (
    arguments_json,
    file_name,
    loaded,
    media_errors,
    new_call_id,
    parse_arguments,
    text_blocks,
    user_content,
)
from hookline.models._settings import TOOL_ONLY, left_out, usable
from hookline.models._streaming import ReasoningJoin, streamed
from hookline.models.base import Model, ModelRequest, ModelResponse, ModelStreamEvent, ToolSpec
from hookline.retry import RetryPolicy, with_retries
from hookline.types import JSONObject
from hookline.usage import Usage

try:
    import openai
    from openai.types.responses import Response, ResponseStreamEvent
except ImportError as exc:  # a dependency of hookline, so only a broken install lacks it
    raise missing_sdk("OpenAIResponsesModel", "pip install openai", exc) from exc

__all__ = ["REASONING_PROVIDER", "OpenAIResponsesModel", "from_spec"]

REASONING_PROVIDER = "openai-responses"
"""The `provider` of the reasoning parts this adapter makes, and the only ones it sends back."""

_REASONING_MODELS = re.compile(r"(o\d|gpt-5|gpt-oss|codex)")
_ENCRYPTED = "reasoning.encrypted_content"


class OpenAIResponsesModel(Model):
    """A model behind OpenAI's Responses API (`POST /v1/responses`).

    Args:
        name: The model's name, e.g. `"gpt-5-mini"`.
        base_url: The server's base URL; default `OPENAI_BASE_URL`, else OpenAI's.
        api_key: The API key; default `OPENAI_API_KEY` (a server at another base URL may need none).
        settings: Request parameters sent with every call (`temperature`, `reasoning`, `store`,
            `include`, ...); those that only make sense with tools are left out of calls without
            tools. A call's `ModelSettings` are mapped over them (`max_tokens` is
            `max_output_tokens`, `reasoning_effort` is `reasoning.effort`; `stop` has no
            counterpart and is left out).
        reasoning: Whether the model reasons, so that its encrypted reasoning is asked for and
            `reasoning_effort` sent (other models refuse both); default: guessed from the name
            (o1, o3, o4, gpt-5, gpt-oss, codex).
        retry: How calls are retried and timed out; default `RetryPolicy()`.
        http_client: An `httpx2.AsyncClient` (or `httpx.AsyncClient`) to send requests with; you close it.
        timeout: Seconds one attempt may take; default `retry.timeout`.
        provider: The provider's name in status lines and errors.

    Raises:
        ConfigError: No API key was given or found for OpenAI's own API.

    """

    def __init__(
        self,
        name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        settings: JSONObject | None = None,
        *,
        reasoning: bool | None = None,
        retry: RetryPolicy | None = None,
        http_client: httpx2.AsyncClient | httpx.AsyncClient | None = None,
        timeout: float | None = None,
        provider: str = "openai",
    ) -> None:
        self.name = name
        self.provider = provider
        self.settings: JSONObject = dict(settings or {})
        self.reasoning = reasoning if reasoning is not None else bool(_REASONING_MODELS.match(name))
        self.retry = retry or RetryPolicy()
        if timeout is not None:
            self.retry = replace(self.retry, timeout=timeout)
        key = find_api_key(api_key, base_url or os.environ.get("OPENAI_BASE_URL"), "OpenAIResponsesModel")
        self._clients = clients(key, base_url, self.retry.timeout, http_client)
        self.base_url = str(self._clients.client.base_url)

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Call the model once and return its whole answer (retrying under `self.retry`)."""
        body, headers = self._body(request)

        async def attempt() -> ModelResponse:
            with converted(ERRORS, self.provider):
                response = await self._clients.get().responses.create(
                    model=self.name, stream=False, extra_body=body, extra_headers=headers
                )
            return _parse_response(response, self.name, self.provider)

        return await with_retries(attempt, self.retry, provider=self.provider)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Stream the answer: reasoning and text deltas as they come, then `ResponseDone` with every item assembled.

        A stream that fails or ends before `response.completed` (the connection dropped) is
        retried whole under `self.retry`; text already yielded is not yielded again.
        """
        body, headers = self._body(request)

        async def open_stream() -> openai.AsyncStream[ResponseStreamEvent]:
            return await self._clients.get().responses.create(
                model=self.name, stream=True, extra_body=body, extra_headers=headers
            )

        assembler = partial(_EventAssembler, self.name, self.provider)
        async for item in streamed(open_stream, assembler, ERRORS, self.provider, self.retry):
            yield item

    async def aclose(self) -> None:
        """Close the SDK client's connections (an `http_client` you passed stays open)."""
        await self._clients.aclose()

    def _body(self, request: ModelRequest) -> tuple[JSONObject, dict[str, str]]:
        """The request's parameters beside `model` and `stream`, and its extra HTTP headers."""
        with media_errors(self.provider):
            instructions, items = _input(request.messages)
        body: JSONObject = {"store": False}
        if self.reasoning:
            body["include"] = [_ENCRYPTED]
        body.update(self.settings)
        body.update(request.settings)
        headers, extra = self._map_settings(body, request)
        body["input"] = items
        if instructions:
            body["instructions"] = instructions
        if request.tools:
            body["tools"] = [_tool(spec) for spec in request.tools]
        else:
            for key in TOOL_ONLY:
                body.pop(key, None)
        if request.output_schema is not None:
            schema = request.output_schema
            output_format = {"type": "json_schema", "name": schema_name(schema), "schema": schema,
                             "strict": strict_ok(schema)}
            body["text"] = {**body.get("text", {}), "format": output_format}
        body.update(extra)
        return body, headers

    def _map_settings(self, body: JSONObject, request: ModelRequest) -> tuple[dict[str, str], JSONObject]:
        wanted = usable(request.model_settings, self.provider, tools=bool(request.tools))
        headers: dict[str, str] = wanted.pop("extra_headers", {})
        extra: JSONObject = wanted.pop("extra_body", {})
        if wanted.pop("stop", None) is not None:
            left_out(self.provider, ["stop"], "the Responses API has no stop sequences")
        if "max_tokens" in wanted:
            body["max_output_tokens"] = wanted.pop("max_tokens")
        effort = wanted.pop("reasoning_effort", None)
        if effort is not None and not self.reasoning:
            left_out(self.provider, ["reasoning_effort"], f"{self.name} is not a reasoning model")
        elif effort is not None:
            body["reasoning"] = {**body.get("reasoning", {}), "effort": effort}
        if "tool_choice" in wanted:
            wanted["tool_choice"] = _tool_choice(wanted["tool_choice"])
        body.update(wanted)  # temperature, parallel_tool_calls: the same names
        return headers, extra


def from_spec(name: str) -> OpenAIResponsesModel:
    """Build the model `"openai-responses:<name>"` names, from `OPENAI_API_KEY` and `OPENAI_BASE_URL`."""
    return OpenAIResponsesModel(name)


def _tool_choice(choice: str) -> JSONObject | str:
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "name": choice}


def _tool(spec: ToolSpec) -> JSONObject:
    # The Responses API makes function tools strict unless told otherwise; not every schema allows it.
    tool: JSONObject = {"type": "function", "name": spec.name, "parameters": spec.parameters,
                        "strict": strict_ok(spec.parameters)}
    if spec.description:
        tool["description"] = spec.description
    return tool


# --- the conversation as input items -------------------------------------------------------


def _input(messages: Sequence[Message]) -> tuple[str, list[JSONObject]]:
    """The system messages as instructions, and every other message as input items, in order."""
    system: list[str] = []
    items: list[JSONObject] = []
    for message in messages:
        if message.role == "system":
            system.extend(text_blocks(message.parts))
        else:
            items.extend(_ITEMS[message.role](message))
    return "\n\n".join(system), items


def _user_items(message: Message) -> list[JSONObject]:
    content = user_content(message.parts, _input_part)
    return [{"type": "message", "role": "user", "content": content}] if content else []


def _input_part(block: str | ImagePart | FilePart) -> JSONObject:
    if isinstance(block, str):
        return {"type": "input_text", "text": block}
    part = loaded(block)
    if isinstance(part, ImagePart):
        return {"type": "input_image", "image_url": part.data_url(), "detail": "auto"}
    if part.data is None and part.url is not None and not part.url.startswith("data:"):
        return {"type": "input_file", "file_url": part.url}
    return {"type": "input_file", "filename": file_name(part), "file_data": part.data_url()}


def _assistant_items(message: Message) -> list[JSONObject]:
    """Reasoning, text and calls in the order the model gave them (a reasoning item precedes what it led to)."""
    items: list[JSONObject] = []
    said: list[Any] = []
    for part in message.parts:
        if isinstance(part, ReasoningPart | ToolCallPart):
            items.extend(_said(said))
            said = []
        if isinstance(part, ToolCallPart):
            items.append({"type": "function_call", "call_id": part.id, "name": part.name,
                          "arguments": arguments_json(part.arguments)})
        elif isinstance(part, ReasoningPart):
            items.extend(_reasoning_item(part))
        else:
            said.append(part)
    return items + _said(said)


def _said(parts: list[Any]) -> list[JSONObject]:
    text = "\n\n".join(text_blocks(parts))
    return [{"type": "message", "role": "assistant", "content": text}] if text else []


def _reasoning_item(part: ReasoningPart) -> list[JSONObject]:
    if part.provider != REASONING_PROVIDER or not part.id:
        return []
    summary = [{"type": "summary_text", "text": part.text}] if part.text else []
    item: JSONObject = {"type": "reasoning", "id": part.id, "summary": summary}
    if part.data is not None:
        item["encrypted_content"] = part.data
    return [item]


def _tool_items(message: Message) -> list[JSONObject]:
    items: list[JSONObject] = [
        {"type": "function_call_output", "call_id": result.call_id, "output": _output(result)}
        for result in message.tool_results
    ]
    rest = [part for part in message.parts if not isinstance(part, ToolResultPart)]
    content = user_content(rest, _input_part) if rest else ""
    if content:
        items.append({"type": "message", "role": "user", "content": content})
    return items


def _output(result: ToolResultPart) -> str | list[JSONObject]:
    """A result's output: its text, or with attachments, its text and its images and files as input parts."""
    text = result_content(result)
    if not result.attachments:
        return text
    parts = [_input_part(text)] if text else []
    return parts + [_input_part(part) for part in result.attachments]


_ITEMS: dict[str, Callable[[Message], list[JSONObject]]] = {
    "user": _user_items,
    "assistant": _assistant_items,
    "tool": _tool_items,
}


# --- output items as a response --------------------------------------------------------------


@dataclass
class _Output:
    """What a response's output items say: text, reasoning and tool calls, in order."""

    text: list[str] = field(default_factory=list)
    reasoning: list[ReasoningPart] = field(default_factory=list)
    calls: list[ToolCallPart] = field(default_factory=list)

    def add(self, item: Any) -> None:
        kind = getattr(item, "type", None)
        if kind == "message":
            self.text.extend(content.text for content in item.content if content.type == "output_text")
        elif kind == "function_call":
            self.calls.append(_call(item.call_id, item.name, item.arguments))
        elif kind == "reasoning":
            self.reasoning.append(_reasoning(item))

    def response(self, usage: Usage, model_name: str, metadata: JSONObject, incomplete: str | None) -> ModelResponse:
        # Chat Completions' finish reasons, which status lines and traces read.
        metadata["finish_reason"] = incomplete or ("tool_calls" if self.calls else "stop")
        return ModelResponse(text="".join(self.text), reasoning=self.reasoning, tool_calls=self.calls, usage=usage,
                             model_name=model_name, metadata=metadata)


def _call(call_id: str | None, name: str | None, arguments: str | None) -> ToolCallPart:
    return ToolCallPart(id=call_id or new_call_id(), name=name or "", arguments=parse_arguments(arguments))


def _reasoning(item: Any) -> ReasoningPart:
    # A summary is what OpenAI's models show; open-weight models give the reasoning text itself.
    pieces = [summary.text for summary in item.summary or []] or [part.text for part in item.content or []]
    return ReasoningPart(text="\n\n".join(pieces), data=item.encrypted_content, id=item.id,
                         provider=REASONING_PROVIDER)


def _usage(usage: Any) -> Usage:
    tokens = (getattr(usage, "input_tokens", 0) or 0, getattr(usage, "output_tokens", 0) or 0)
    return Usage(input_tokens=tokens[0], output_tokens=tokens[1])


def _incomplete(response: Any) -> str | None:
    """Why the response stopped short (e.g. "max_output_tokens"), or None."""
    return getattr(getattr(response, "incomplete_details", None), "reason", None)


def _parse_response(response: object, name: str, provider: str) -> ModelResponse:
    if isinstance(response, str | bytes):  # the SDK hands back a body it could not read as JSON
        raise garbled(provider, f"expected a response as JSON, got {str(response)[:200]!r}")
    if not isinstance(response, Response) or not isinstance(response.output, list):
        raise malformed(provider, f"expected a response, got {str(response)[:200]!r}")
    try:
        output = _Output()
        for item in response.output:
            output.add(item)
        metadata: JSONObject = {"id": response.id, "status": response.status}
        return output.response(_usage(response.usage), response.model or name, metadata, _incomplete(response))
    except (AttributeError, TypeError, ValueError) as exc:
        raise malformed(provider, f"unexpected response shape ({exc})") from exc


@dataclass
class _Slot:
    """One output item while it streams: the item as announced (then as finished), and its fragments."""

    item: Any
    pieces: list[str] = field(default_factory=list)
    done: bool = False


class _EventAssembler:
    """Builds the whole response from stream events: output items, text, reasoning and argument deltas, usage."""

    def __init__(self, name: str, provider: str) -> None:
        self.slots: dict[int, _Slot] = {}
        self.usage = Usage()
        self.model_name = name
        self.provider = provider
        self.metadata: JSONObject = {}
        self.incomplete: str | None = None
        self.new_reasoning = ""
        self.thinking = ReasoningJoin()

    def missing(self) -> str | None:
        """`"response.completed"` until it (or `response.incomplete`) came: before that, the answer may be cut short."""
        return None if "status" in self.metadata else "response.completed"

    def feed(self, event: ResponseStreamEvent) -> str:
        """Take one event in; return the text it adds."""
        found: Any = event  # one of many event types, told apart by `type`
        kind = found.type
        if kind in ("response.output_text.delta", "response.function_call_arguments.delta"):
            self.slots[found.output_index].pieces.append(found.delta)
            return str(found.delta) if kind == "response.output_text.delta" else ""
        if kind in ("response.output_item.added", "response.output_item.done"):
            slot = self.slots.setdefault(found.output_index, _Slot(found.item))
            slot.item, slot.done = found.item, kind.endswith("done")
        elif kind in ("response.created", "response.in_progress", "response.completed", "response.incomplete"):
            self._take(found.response, ended=kind in ("response.completed", "response.incomplete"))
        elif kind == "response.reasoning_summary_text.delta":
            self.new_reasoning = self.thinking.piece((found.output_index, "summary", found.summary_index), found.delta)
        elif kind == "response.reasoning_text.delta":  # open-weight models: the reasoning itself, no summary
            self.new_reasoning = self.thinking.piece((found.output_index, "text", found.content_index), found.delta)
        elif kind in ("response.failed", "error"):
            raise self._failure(found)
        return ""

    def _take(self, response: Any, *, ended: bool) -> None:
        self.model_name = response.model or self.model_name
        self.metadata["id"] = response.id
        if ended:
            self.metadata["status"] = response.status
            self.incomplete = _incomplete(response)
            self.usage = _usage(response.usage)

    def _failure(self, event: Any) -> ModelError:
        error = event.response.error if event.type == "response.failed" else event
        message = getattr(error, "message", None) or "the response failed"
        # No status: a failure inside a stream is retried like a dropped connection.
        return ModelError(f"{self.provider} API error: {message}", provider=self.provider,
                          body=cast(Any, error).to_dict() if hasattr(error, "to_dict") else None)

    def response(self) -> ModelResponse:
        """Return the assembled response."""
        output = _Output()
        for index in sorted(self.slots):
            slot = self.slots[index]
            kind = getattr(slot.item, "type", None)
            if slot.done or kind == "reasoning":
                output.add(slot.item)
            elif kind == "message":
                output.text.append("".join(slot.pieces))
            elif kind == "function_call":
                output.calls.append(_call(slot.item.call_id, slot.item.name, "".join(slot.pieces)))
        return output.response(self.usage, self.model_name, dict(self.metadata), self.incomplete)
