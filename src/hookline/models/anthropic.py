"""`AnthropicModel`: Claude through the official `anthropic` SDK (Messages API).

The `anthropic` package is an optional extra (`hookline[anthropic]`), imported here
only. The Messages API wants what Chat Completions does not: the system prompt apart
(`system`), strictly alternating roles (so consecutive messages of one role are
merged, and every tool result following one assistant turn lands in one user message),
and `max_tokens` on every call (`DEFAULT_MAX_TOKENS` unless the settings say otherwise).
`output_schema` uses the API's native structured output (`output_config.format`).

Extended thinking comes back as `thinking` blocks (with a `signature`) and `redacted_thinking`
blocks (opaque `data`); they become `ReasoningPart`s tagged "anthropic" and go back to the API
unchanged, first in their assistant message, as it requires once the model called tools.
Reasoning tagged by another provider is left out.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, cast

import httpx2

from hookline.errors import ConfigError, ModelError
from hookline.messages import Message, Part, ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from hookline.models._anthropic_media import media_block
from hookline.models._anthropic_settings import DEFAULT_MAX_TOKENS, REASONING_PROVIDER, THINKING_BUDGETS, map_settings
from hookline.models._clients import LoopClients
from hookline.models._errors import (
    ErrorTable,
    api_error,
    connection_error,
    converted,
    garbled,
    garbled_error,
    malformed,
    malformed_error,
    missing_sdk,
    status_error,
    timeout_error,
)
from hookline.models._render import content_blocks, media_errors, new_call_id, parse_arguments, text_blocks
from hookline.models._settings import TOOL_ONLY
from hookline.models._streaming import ReasoningJoin, streamed
from hookline.models.base import Model, ModelRequest, ModelResponse, ModelStreamEvent, ToolSpec
from hookline.retry import RetryPolicy, with_retries
from hookline.types import JSONObject
from hookline.usage import Usage

try:
    import anthropic
    from anthropic.types import (
        InputJSONDelta,
        MessageParam,
        RawMessageStreamEvent,
        RedactedThinkingBlock,
        SignatureDelta,
        TextBlock,
        ThinkingBlock,
        ThinkingDelta,
        ToolUseBlock,
    )
    from anthropic.types import Message as AnthropicMessage
    from anthropic.types import TextDelta as AnthropicTextDelta
except ImportError as exc:
    raise missing_sdk("AnthropicModel", "pip install 'hookline[anthropic]'", exc) from exc

__all__ = ["DEFAULT_MAX_TOKENS", "THINKING_BUDGETS", "AnthropicModel", "from_spec"]

_REASONING = REASONING_PROVIDER


class AnthropicModel(Model):
    """A Claude model behind Anthropic's Messages API.

    Args:
        name: The model's name, e.g. `"claude-sonnet-4-6"`.
        base_url: The API's base URL; default `ANTHROPIC_BASE_URL`, else Anthropic's.
        api_key: The API key; default `ANTHROPIC_API_KEY` (or `ANTHROPIC_AUTH_TOKEN` as a bearer token).
        settings: Request parameters sent with every call (`max_tokens`, `temperature`, `tool_choice`,
            `thinking`, ...); `tool_choice` is left out of calls without tools. A call's
            `ModelSettings` are mapped over them (`reasoning_effort` turns thinking on, with a
            budget from `THINKING_BUDGETS`).
        retry: How calls are retried and timed out; default `RetryPolicy()`.
        http_client: An `httpx2.AsyncClient` to send requests with; you close it.
        timeout: Seconds one attempt may take; default `retry.timeout`.

    Raises:
        ConfigError: No API key was given or found.

    """

    provider = "anthropic"

    def __init__(
        self,
        name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        settings: JSONObject | None = None,
        *,
        retry: RetryPolicy | None = None,
        http_client: httpx2.AsyncClient | None = None,
        timeout: float | None = None,
    ) -> None:
        self.name = name
        self.settings: JSONObject = dict(settings or {})
        self.retry = retry or RetryPolicy()
        if timeout is not None:
            self.retry = replace(self.retry, timeout=timeout)
        key, token = _credentials(api_key)
        self._clients = LoopClients(
            lambda: anthropic.AsyncAnthropic(
                api_key=key,
                auth_token=token,
                base_url=base_url,
                max_retries=0,
                timeout=self.retry.timeout,
                http_client=http_client,
            ),
            close_client=http_client is None,
        )
        self.base_url = str(self._clients.client.base_url)

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Call the model once and return its whole answer (retrying under `self.retry`)."""
        max_tokens, messages, body, headers = self._call(request)

        async def attempt() -> ModelResponse:
            with converted(_ERRORS, self.provider):
                message = await self._clients.get().messages.create(
                    model=self.name, max_tokens=max_tokens, messages=messages, stream=False, extra_body=body,
                    extra_headers=headers,
                )
            return _parse_message(message, self.name, self.provider)

        return await with_retries(attempt, self.retry, provider=self.provider)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Stream the answer: thinking and text deltas as they come, then `ResponseDone` with tool inputs assembled.

        A stream that fails or ends before its `stop_reason` (the connection dropped) is
        retried whole under `self.retry`; text already yielded is not yielded again.
        """
        max_tokens, messages, body, headers = self._call(request)

        async def open_stream() -> anthropic.AsyncStream[RawMessageStreamEvent]:
            return await self._clients.get().messages.create(
                model=self.name, max_tokens=max_tokens, messages=messages, stream=True, extra_body=body,
                extra_headers=headers,
            )

        assembler = partial(_EventAssembler, self.name)
        async for item in streamed(open_stream, assembler, _ERRORS, self.provider, self.retry):
            yield item

    async def aclose(self) -> None:
        """Close the SDK client's connections (an `http_client` you passed stays open)."""
        await self._clients.aclose()

    def _call(self, request: ModelRequest) -> tuple[int, list[MessageParam], JSONObject, dict[str, str]]:
        """The call's `max_tokens`, messages, other parameters and extra HTTP headers."""
        body: JSONObject = {**self.settings, **request.settings}
        headers, extra = map_settings(body, request.model_settings, bool(request.tools))
        max_tokens = int(body.pop("max_tokens", DEFAULT_MAX_TOKENS))
        with media_errors(self.provider):
            system, messages = _convert(request.messages)
        if system:
            body["system"] = system
        if request.tools:
            body["tools"] = [_tool(spec) for spec in request.tools]
        else:
            for key in TOOL_ONLY:
                body.pop(key, None)
        if request.output_schema is not None:
            output_format = {"type": "json_schema", "schema": request.output_schema}
            body["output_config"] = {**body.get("output_config", {}), "format": output_format}
        body.update(extra)
        return max_tokens, cast("list[MessageParam]", messages), body, headers


def from_spec(name: str) -> AnthropicModel:
    """Build the model `"anthropic:<name>"` names, from `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`."""
    return AnthropicModel(name)


def _credentials(api_key: str | None) -> tuple[str | None, str | None]:
    key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    if key:
        return key, None
    token = os.environ.get("ANTHROPIC_AUTH_TOKEN")
    if token:
        return None, token
    raise ConfigError("AnthropicModel needs an API key: pass api_key=... or set ANTHROPIC_API_KEY")


def _convert(messages: Sequence[Message]) -> tuple[str, list[JSONObject]]:
    """Split out the system prompt and merge consecutive same-role turns, as the API requires."""
    system: list[str] = []
    turns: list[JSONObject] = []
    for message in messages:
        if message.role == "system":
            system.extend(text_blocks(message.parts))
            continue
        role, blocks = _BLOCKS[message.role](message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return "\n\n".join(system), turns


def _tool(spec: ToolSpec) -> JSONObject:
    tool: JSONObject = {"name": spec.name, "input_schema": spec.parameters}
    if spec.description:
        tool["description"] = spec.description
    return tool


def _text(blocks: list[str]) -> list[JSONObject]:
    return [{"type": "text", "text": block} for block in blocks]


def _user_blocks(message: Message) -> tuple[str, list[JSONObject]]:
    return "user", _content(message.parts)


def _content(parts: Sequence[Part]) -> list[JSONObject]:
    """A user turn's blocks: text, and the images and files in their places."""
    if len(parts) == 1 and type(parts[0]) is TextPart:  # nearly every message: no scan
        text = parts[0].text
        return [{"type": "text", "text": text}] if text else []
    return [{"type": "text", "text": block} if isinstance(block, str) else media_block(block)
            for block in content_blocks(parts)]


def _assistant_blocks(message: Message) -> tuple[str, list[JSONObject]]:
    blocks = [_thinking(part) for part in message.parts if isinstance(part, ReasoningPart) and _ours(part)]
    blocks += _text(text_blocks([part for part in message.parts if not isinstance(part, ToolCallPart)]))
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": _input_of(call)} for call in message.tool_calls
    )
    return "assistant", blocks


def _ours(part: ReasoningPart) -> bool:
    # A thinking block goes back only with its signature (or as the redacted data it was).
    return part.provider == _REASONING and (part.data is not None or part.signature is not None)


def _thinking(part: ReasoningPart) -> JSONObject:
    if part.data is not None:
        return {"type": "redacted_thinking", "data": part.data}
    return {"type": "thinking", "thinking": part.text, "signature": part.signature}


def _reasoning(block: object) -> ReasoningPart | None:
    """The `ReasoningPart` a content block holds, if it is a thinking block."""
    if isinstance(block, ThinkingBlock):
        return ReasoningPart(text=block.thinking or "", signature=block.signature, provider=_REASONING)
    if isinstance(block, RedactedThinkingBlock):
        return ReasoningPart(data=block.data, provider=_REASONING)
    return None


def _input_of(call: ToolCallPart) -> JSONObject:
    # The API takes only objects as input; a malformed call is sent back as the text it was.
    return call.arguments if isinstance(call.arguments, dict) else {"_raw_arguments": call.arguments}


def _tool_blocks(message: Message) -> tuple[str, list[JSONObject]]:
    blocks: list[JSONObject] = [
        {"type": "tool_result", "tool_use_id": result.call_id, "content": _result_content(result),
         "is_error": result.is_error}
        for result in message.tool_results
    ]
    rest = [part for part in message.parts if not isinstance(part, ToolResultPart)]
    if rest:
        blocks.extend(_content(rest))
    return "user", blocks


def _result_content(result: ToolResultPart) -> str | list[JSONObject]:
    """A result's content: its text, or with attachments, a text block and its images and files."""
    if not result.attachments:
        return result.content
    text = [{"type": "text", "text": result.content}] if result.content else []
    return text + [media_block(part) for part in result.attachments]


_BLOCKS: dict[str, Callable[[Message], tuple[str, list[JSONObject]]]] = {
    "user": _user_blocks,
    "assistant": _assistant_blocks,
    "tool": _tool_blocks,
}


def _parse_message(message: object, name: str, provider: str) -> ModelResponse:
    if isinstance(message, str | bytes):  # the SDK hands back a body it could not read as JSON
        raise garbled(provider, f"expected a message as JSON, got {str(message)[:200]!r}")
    if not isinstance(message, AnthropicMessage) or not isinstance(message.content, list):
        raise malformed(provider, f"expected a message, got {str(message)[:200]!r}")
    try:
        calls = [
            ToolCallPart(id=block.id or new_call_id(), name=block.name or "", arguments=_arguments(block.input))
            for block in message.content
            if isinstance(block, ToolUseBlock)
        ]
        return ModelResponse(
            text="".join(block.text or "" for block in message.content if isinstance(block, TextBlock)),
            reasoning=[part for part in map(_reasoning, message.content) if part is not None],
            tool_calls=calls,
            usage=Usage(input_tokens=_input_tokens(message.usage), output_tokens=message.usage.output_tokens or 0),
            model_name=message.model or name,
            metadata={"id": message.id, "stop_reason": message.stop_reason},
        )
    except (AttributeError, TypeError, ValueError) as exc:
        raise malformed(provider, f"unexpected message shape ({exc})") from exc


def _arguments(value: object) -> JSONObject | str:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        return parse_arguments(value)
    return {} if value is None else json.dumps(value)


def _input_tokens(usage: Any) -> int:
    # Cached prompt tokens are counted apart; the prompt is all three.
    cached = (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0)
    return int(usage.input_tokens or 0) + cached


@dataclass
class _Block:
    kind: str
    """"text", "tool" or "thinking"."""
    id: str = ""
    name: str = ""
    pieces: list[str] = field(default_factory=list)
    start_input: object = None
    signature: str | None = None
    data: str | None = None

    def reasoning(self) -> ReasoningPart:
        return ReasoningPart(text="".join(self.pieces), signature=self.signature, data=self.data, provider=_REASONING)


_DELTA_KINDS: dict[type, str] = {InputJSONDelta: "tool", ThinkingDelta: "thinking", SignatureDelta: "thinking"}


class _EventAssembler:
    """Builds the whole response from stream events: text, thinking, tool input JSON deltas, usage."""

    def __init__(self, name: str) -> None:
        self.blocks: dict[int, _Block] = {}
        self.input_tokens = 0
        self.output_tokens = 0
        self.model_name = name
        self.metadata: JSONObject = {}
        self.new_reasoning = ""
        self.thinking = ReasoningJoin()

    def missing(self) -> str | None:
        """`"stop_reason"` until a `message_delta` gave one: before that, the answer may be cut short."""
        return None if self.metadata.get("stop_reason") else "stop_reason"

    def feed(self, event: RawMessageStreamEvent) -> str:
        """Take one event in; return the text it adds."""
        handler = _HANDLERS.get(event.type)
        return handler(self, event) if handler is not None else ""

    def _message_start(self, event: Any) -> str:
        message = event.message
        self.model_name = message.model or self.model_name
        self.metadata["id"] = message.id
        if message.usage is not None:
            self.input_tokens = _input_tokens(message.usage)
            self.output_tokens = message.usage.output_tokens or 0
        return ""

    def _block_start(self, event: Any) -> str:
        block = event.content_block
        if isinstance(block, ToolUseBlock):
            self.blocks[event.index] = _Block("tool", id=block.id or "", name=block.name, start_input=block.input)
            return ""
        thought = _reasoning(block)
        if thought is not None:  # a signature, if any, comes whole in a later delta
            self.blocks[event.index] = _Block("thinking", pieces=[thought.text], signature=thought.signature or None,
                                              data=thought.data)
            self.new_reasoning = self.thinking.piece(event.index, thought.text)
            return ""
        text = block.text or "" if isinstance(block, TextBlock) else ""
        self.blocks[event.index] = _Block("text", pieces=[text])
        return text

    def _block_delta(self, event: Any) -> str:
        delta = event.delta
        block = self.blocks.setdefault(event.index, _Block(_DELTA_KINDS.get(type(delta), "text")))
        if isinstance(delta, AnthropicTextDelta):
            block.pieces.append(delta.text)
            return str(delta.text)
        if isinstance(delta, InputJSONDelta):
            block.pieces.append(delta.partial_json)
        elif isinstance(delta, ThinkingDelta):
            block.pieces.append(delta.thinking)
            self.new_reasoning = self.thinking.piece(event.index, delta.thinking)
        elif isinstance(delta, SignatureDelta):
            block.signature = delta.signature
        return ""

    def _message_delta(self, event: Any) -> str:
        self.metadata["stop_reason"] = event.delta.stop_reason
        if event.usage is not None:
            self.output_tokens = event.usage.output_tokens or self.output_tokens
            if event.usage.input_tokens is not None:
                self.input_tokens = _input_tokens(event.usage)
        return ""

    def response(self) -> ModelResponse:
        """Return the assembled response."""
        ordered = [self.blocks[index] for index in sorted(self.blocks)]
        return ModelResponse(
            text="".join("".join(block.pieces) for block in ordered if block.kind == "text"),
            reasoning=[block.reasoning() for block in ordered if block.kind == "thinking"],
            tool_calls=[_assembled_call(block) for block in ordered if block.kind == "tool"],
            usage=Usage(input_tokens=self.input_tokens, output_tokens=self.output_tokens),
            model_name=self.model_name,
            metadata=self.metadata,
        )


def _assembled_call(block: _Block) -> ToolCallPart:
    # The input comes as JSON fragments; a server may instead give it whole at block start.
    arguments = parse_arguments("".join(block.pieces)) if block.pieces else _arguments(block.start_input)
    return ToolCallPart(id=block.id or new_call_id(), name=block.name, arguments=arguments)


_HANDLERS: dict[str, Callable[[_EventAssembler, Any], str]] = {
    "message_start": _EventAssembler._message_start,
    "content_block_start": _EventAssembler._block_start,
    "content_block_delta": _EventAssembler._block_delta,
    "message_delta": _EventAssembler._message_delta,
}


def _status_error(exc: anthropic.APIStatusError, provider: str) -> ModelError:
    detail = exc.api_message or (exc.body if isinstance(exc.body, str) else exc.message)
    # An `error` event inside a 200 stream carries no HTTP status of its own.
    status = exc.status_code if exc.status_code >= 400 else None
    return status_error(status, detail, provider, exc.body, exc.response.headers)


_ERRORS: ErrorTable = (
    (anthropic.RateLimitError, _status_error),  # retry_after from its headers
    (anthropic.APIStatusError, _status_error),
    (anthropic.APITimeoutError, timeout_error),
    (anthropic.APIConnectionError, connection_error),
    (anthropic.APIResponseValidationError, malformed_error),
    (json.JSONDecodeError, garbled_error),
    (httpx2.TimeoutException, timeout_error),  # raised as they are while a stream is read
    (httpx2.TransportError, connection_error),
    (anthropic.APIError, api_error),
)
