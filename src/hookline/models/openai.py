"""`OpenAIModel`: every OpenAI-compatible Chat Completions server, through the official SDK.

OpenAI itself, DeepSeek, Groq, OpenRouter, Together, and local servers (Ollama, vLLM,
llama.cpp's server, LM Studio) all speak Chat Completions; `PRESETS` holds their base
URLs. The SDK client is built with `max_retries=0`: retries live in `hookline.retry`, and
every SDK error is converted to `ModelError` through one table (`_openai_shared.ERRORS`,
shared with `OpenAIResponsesModel`). SDK types stay in this module; what crosses the seam
are hookline's own types.

Chat Completions has no field for reasoning, but servers of reasoning models add one beside
`content`: `reasoning_content` (DeepSeek, llama.cpp, older vLLM) or `reasoning` (vLLM, Ollama,
OpenRouter). Either becomes a `ReasoningPart` tagged with the model's `provider`. It goes
back, as `reasoning_content`, only to a provider that wants it (`send_reasoning`; DeepSeek's
thinking mode refuses a tool loop without it): strict servers such as Groq refuse the field.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, cast

import httpx
import httpx2

from hookline.errors import ConfigError
from hookline.messages import FilePart, ImagePart, Message, ReasoningPart, ToolCallPart, ToolResultPart
from hookline.models._errors import converted, garbled, malformed, missing_sdk
from hookline.models._openai_shared import (
    ERRORS,
    NO_KEY,
    OPENAI_BASE_URL,
    clients,
    find_api_key,
    is_openai,
    result_content,
    schema_name,
    strict_ok,
)
from hookline.models._render import (
    MediaRefused,
    arguments_json,
    attachments_intro,
    describe_media,
    file_name,
    file_text,
    loaded,
    media_errors,
    new_call_id,
    parse_arguments,
    text_blocks,
    user_content,
)
from hookline.models._settings import TOOL_ONLY, usable
from hookline.models._streaming import streamed
from hookline.models.base import Model, ModelRequest, ModelResponse, ModelStreamEvent, ToolSpec
from hookline.retry import RetryPolicy, with_retries
from hookline.types import JSONObject
from hookline.usage import Usage

try:
    import openai
    from openai.types.chat import (
        ChatCompletion,
        ChatCompletionChunk,
        ChatCompletionMessageFunctionToolCall,
        ChatCompletionMessageParam,
    )
except ImportError as exc:  # a dependency of hookline, so only a broken install lacks it
    raise missing_sdk("OpenAIModel", "pip install openai", exc) from exc

__all__ = ["PRESETS", "OpenAIModel", "Preset", "from_spec"]


@dataclass(frozen=True, slots=True)
class Preset:
    """Where an OpenAI-compatible provider listens, and where its API key is found."""

    base_url: str
    """The server's Chat Completions base URL (ending in `/v1` or the provider's equivalent)."""
    api_key_env: str | None = None
    """The environment variable holding the key; None for local servers that need none."""
    sends_reasoning: bool = False
    """Whether the provider wants its reasoning (`reasoning_content`) back in later calls."""


PRESETS: dict[str, Preset] = {
    "openai": Preset(OPENAI_BASE_URL, "OPENAI_API_KEY"),
    "deepseek": Preset("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", sends_reasoning=True),
    "groq": Preset("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "openrouter": Preset("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "together": Preset("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "ollama": Preset("http://localhost:11434/v1"),
    "vllm": Preset("http://localhost:8000/v1"),
    "llamacpp": Preset("http://localhost:8080/v1"),
    "lmstudio": Preset("http://localhost:1234/v1"),
}
"""Known OpenAI-compatible providers by name, for `OpenAIModel.preset()`."""


class OpenAIModel(Model):
    """A model behind an OpenAI-compatible Chat Completions API.

    Args:
        name: The model's name, e.g. `"gpt-4o-mini"`.
        base_url: The server's base URL; default `OPENAI_BASE_URL`, else OpenAI's.
        api_key: The API key; default `OPENAI_API_KEY` (a server at another base URL may need none).
        settings: Request parameters sent with every call (`temperature`, `seed`, `tool_choice`, ...);
            those that only make sense with tools are left out of calls without tools. A call's
            `ModelSettings` are mapped over them (`max_tokens` is sent as `max_completion_tokens`
            to OpenAI's own API, which wants it for reasoning models).
        retry: How calls are retried and timed out; default `RetryPolicy()`.
        http_client: An `httpx2.AsyncClient` (or `httpx.AsyncClient`) to send requests with; you close it.
        timeout: Seconds one attempt may take; default `retry.timeout`.
        provider: The provider's name in status lines and errors, and the tag of the reasoning it gives.
        send_reasoning: Whether the reasoning this provider gave goes back, as `reasoning_content`, in
            the assistant messages of later calls; default: the preset's rule (only DeepSeek's, whose
            thinking mode answers 400 to a tool loop without it).

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
        retry: RetryPolicy | None = None,
        http_client: httpx2.AsyncClient | httpx.AsyncClient | None = None,
        timeout: float | None = None,
        provider: str = "openai",
        send_reasoning: bool | None = None,
    ) -> None:
        self.name = name
        self.provider = provider
        if send_reasoning is None:
            send_reasoning = provider in PRESETS and PRESETS[provider].sends_reasoning
        self._reasoning_back = provider if send_reasoning else None
        self.settings: JSONObject = dict(settings or {})
        self.retry = retry or RetryPolicy()
        if timeout is not None:
            self.retry = replace(self.retry, timeout=timeout)
        key = find_api_key(api_key, base_url or os.environ.get("OPENAI_BASE_URL"), "OpenAIModel")
        self._max_tokens_key = "max_completion_tokens" if is_openai(base_url) else "max_tokens"
        self._clients = clients(key, base_url, self.retry.timeout, http_client)
        self.base_url = str(self._clients.client.base_url)

    @classmethod
    def preset(cls, provider: str, name: str, *, api_key: str | None = None, **options: Any) -> OpenAIModel:
        """Build a model of a known OpenAI-compatible provider, e.g. `preset("groq", "llama-3.3-70b-versatile")`.

        Args:
            provider: A key of `PRESETS`.
            name: The model's name on that provider.
            api_key: The key; default the preset's environment variable.
            **options: Any other `OpenAIModel` argument (`settings`, `retry`, `base_url`, ...).

        Raises:
            ConfigError: The provider is unknown, or its key is needed and missing.

        """
        preset = PRESETS.get(provider)
        if preset is None:
            raise ConfigError(f"unknown OpenAI-compatible provider {provider!r}; known: {', '.join(sorted(PRESETS))}")
        if api_key is None and preset.api_key_env is not None:
            api_key = os.environ.get(preset.api_key_env)
            if not api_key:
                raise ConfigError(f"{provider} needs an API key: pass api_key=... or set {preset.api_key_env}")
        options.setdefault("base_url", preset.base_url)
        return cls(name, api_key=api_key or NO_KEY, provider=provider, **options)

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Call the model once and return its whole answer (retrying under `self.retry`)."""
        with media_errors(self.provider):
            messages = _messages(request.messages, self._reasoning_back)
        body, headers = self._body(request, stream=False)

        async def attempt() -> ModelResponse:
            with converted(ERRORS, self.provider):
                completion = await self._clients.get().chat.completions.create(
                    model=self.name, messages=messages, stream=False, extra_body=body, extra_headers=headers
                )
            return _parse_completion(completion, self.name, self.provider)

        return await with_retries(attempt, self.retry, provider=self.provider)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Stream the answer: reasoning and text deltas as they come, then `ResponseDone` with tool calls assembled.

        A stream that fails or ends before its `finish_reason` (the connection dropped) is
        retried whole under `self.retry`; text already yielded is not yielded again.
        """
        with media_errors(self.provider):
            messages = _messages(request.messages, self._reasoning_back)
        body, headers = self._body(request, stream=True)

        async def open_stream() -> openai.AsyncStream[ChatCompletionChunk]:
            return await self._clients.get().chat.completions.create(
                model=self.name, messages=messages, stream=True, extra_body=body, extra_headers=headers
            )

        assembler = partial(_ChunkAssembler, self.name, self.provider)
        async for item in streamed(open_stream, assembler, ERRORS, self.provider, self.retry):
            yield item

    async def aclose(self) -> None:
        """Close the SDK client's connections (an `http_client` you passed stays open)."""
        await self._clients.aclose()

    def _body(self, request: ModelRequest, *, stream: bool) -> tuple[JSONObject, dict[str, str]]:
        """The request's parameters beside `model` and `messages`, and its extra HTTP headers."""
        body: JSONObject = {**self.settings, **request.settings}
        wanted = usable(request.model_settings, self.provider, tools=bool(request.tools))
        headers: dict[str, str] = wanted.pop("extra_headers", {})
        extra: JSONObject = wanted.pop("extra_body", {})
        if "max_tokens" in wanted:
            body.pop("max_tokens", None)
            body.pop("max_completion_tokens", None)
            body[self._max_tokens_key] = wanted.pop("max_tokens")
        if "tool_choice" in wanted:
            wanted["tool_choice"] = _tool_choice(wanted["tool_choice"])
        body.update(wanted)  # temperature, stop, parallel_tool_calls, reasoning_effort: the same names
        if request.tools:
            body["tools"] = [_tool(spec) for spec in request.tools]
        else:
            for key in TOOL_ONLY:
                body.pop(key, None)
        if request.output_schema is not None:
            body["response_format"] = _response_format(request.output_schema)
        if stream:
            body["stream_options"] = {**body.get("stream_options", {}), "include_usage": True}
        body.update(extra)
        return body, headers


def from_spec(name: str) -> OpenAIModel:
    """Build the model `"openai:<name>"` names, from `OPENAI_API_KEY` and `OPENAI_BASE_URL`."""
    return OpenAIModel(name)


def _tool_choice(choice: str) -> JSONObject | str:
    """`ModelSettings.tool_choice` as Chat Completions takes it: a mode, or the function to call."""
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def _messages(messages: Sequence[Message], reasoning_of: str | None) -> list[ChatCompletionMessageParam]:
    """The messages as sent; `reasoning_of`: the provider whose reasoning goes back (None: nobody's)."""
    entries: list[JSONObject] = []
    attached: list[JSONObject] = []  # tool results' images and files, sent once the tool messages end
    for message in messages:
        if message.role == "tool":
            entries.extend(_tool_message(message, attached))
            continue
        if attached:
            entries.append({"role": "user", "content": attached})
            attached = []
        entries.extend(_CONVERTERS[message.role](message))
        if reasoning_of is not None and message.role == "assistant":
            _add_reasoning(entries[-1], message, reasoning_of)
    if attached:
        entries.append({"role": "user", "content": attached})
    return cast("list[ChatCompletionMessageParam]", entries)


def _text_message(message: Message) -> list[JSONObject]:
    return [{"role": message.role, "content": "\n\n".join(text_blocks(message.parts))}]


def _user_message(message: Message) -> list[JSONObject]:
    return [{"role": "user", "content": user_content(message.parts, _content_part)}]


def _content_part(block: str | ImagePart | FilePart) -> JSONObject:
    if isinstance(block, str):
        return {"type": "text", "text": block}
    part = loaded(block)
    if isinstance(part, ImagePart):
        return {"type": "image_url", "image_url": {"url": part.data_url()}}
    text = file_text(part)
    if text is not None:  # Chat Completions reads PDFs only: a text file goes as its text
        name = json.dumps(file_name(part), ensure_ascii=False)
        return {"type": "text", "text": f"<file name={name}>\n{text}\n</file>"}
    if part.data is None and not (part.url or "").startswith("data:"):
        raise MediaRefused(
            f"Chat Completions cannot fetch a file by URL ({describe_media(part)}): give the file's bytes "
            "(FilePart(data=..., media_type=...)), or use OpenAIResponsesModel, which takes file URLs"
        )
    return {"type": "file", "file": {"filename": file_name(part), "file_data": part.data_url()}}


def _assistant_message(message: Message) -> list[JSONObject]:
    rest = [part for part in message.parts if not isinstance(part, ToolCallPart)]
    entry: JSONObject = {"role": "assistant", "content": "\n\n".join(text_blocks(rest))}
    if message.tool_calls:
        entry["tool_calls"] = [_call_json(call) for call in message.tool_calls]
    return [entry]


def _add_reasoning(entry: JSONObject, message: Message, provider: str) -> None:
    """Give an assistant entry the reasoning `provider` produced, as DeepSeek's thinking mode wants it back."""
    said = [part.text for part in message.parts if isinstance(part, ReasoningPart) and part.provider == provider]
    if any(said):
        entry["reasoning_content"] = "\n\n".join(text for text in said if text)


def _call_json(call: ToolCallPart) -> JSONObject:
    function = {"name": call.name, "arguments": arguments_json(call.arguments)}
    return {"id": call.id, "type": "function", "function": function}


def _tool_message(message: Message, attached: list[JSONObject]) -> list[JSONObject]:
    """The tool messages of `message`'s results; their attachments go to `attached` (tool messages carry text only)."""
    entries: list[JSONObject] = []
    for result in message.tool_results:
        entries.append({"role": "tool", "tool_call_id": result.call_id, "content": result_content(result)})
        if result.attachments:
            attached.append({"type": "text", "text": attachments_intro(result)})
            attached.extend(_content_part(part) for part in result.attachments)
    rest = [part for part in message.parts if not isinstance(part, ToolResultPart)]
    content = user_content(rest, _content_part) if rest else ""
    if content:
        entries.append({"role": "user", "content": content})
    return entries


_CONVERTERS: dict[str, Callable[[Message], list[JSONObject]]] = {
    "system": _text_message,
    "user": _user_message,
    "assistant": _assistant_message,
}


def _response_format(schema: JSONObject) -> JSONObject:
    return {"type": "json_schema", "json_schema": {"name": schema_name(schema), "schema": schema,
                                                   "strict": strict_ok(schema)}}


def _tool(spec: ToolSpec) -> JSONObject:
    function: JSONObject = {"name": spec.name, "parameters": spec.parameters}
    if spec.description:
        function["description"] = spec.description
    return {"type": "function", "function": function}


def _parse_completion(completion: object, name: str, provider: str) -> ModelResponse:
    if isinstance(completion, str | bytes):  # the SDK hands back a body it could not read as JSON
        raise garbled(provider, f"expected a chat completion as JSON, got {str(completion)[:200]!r}")
    if not isinstance(completion, ChatCompletion) or not completion.choices:
        raise malformed(provider, f"expected a chat completion, got {str(completion)[:200]!r}")
    try:
        choice = completion.choices[0]
        message = choice.message
        calls = [
            _tool_call(call.id, call.function.name, call.function.arguments)
            for call in message.tool_calls or []
            if isinstance(call, ChatCompletionMessageFunctionToolCall)
        ]
        thought = _reasoning_text(message.model_extra)
        return ModelResponse(
            text=message.content or "",
            reasoning=[ReasoningPart(text=thought, provider=provider)] if thought else [],
            tool_calls=calls,
            usage=_usage(completion.usage),
            model_name=completion.model or name,
            metadata={"id": completion.id, "finish_reason": choice.finish_reason},
        )
    except (AttributeError, TypeError, ValueError) as exc:
        raise malformed(provider, f"unexpected chat completion shape ({exc})") from exc


def _reasoning_text(extra: dict[str, Any] | None) -> str:
    """The reasoning in a message's or delta's fields the SDK does not declare, or "" (see the module's docstring)."""
    if not extra:
        return ""
    for key in ("reasoning_content", "reasoning"):
        value = extra.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _tool_call(call_id: str | None, name: str | None, arguments: str | None) -> ToolCallPart:
    return ToolCallPart(id=call_id or new_call_id(), name=name or "", arguments=parse_arguments(arguments))


def _usage(usage: Any) -> Usage:
    tokens = (getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0)
    return Usage(input_tokens=tokens[0], output_tokens=tokens[1])


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _ChunkAssembler:
    """Builds the whole response from stream chunks: reasoning, text, tool-call fragments by index, usage."""

    def __init__(self, name: str, provider: str) -> None:
        self.provider = provider
        self.new_reasoning = ""
        self.reasoning: list[str] = []
        self.text: list[str] = []
        self.calls: list[_PendingCall] = []
        self.slots: dict[int | None, int] = {}
        self.usage = Usage()
        self.model_name = name
        self.metadata: JSONObject = {}

    def missing(self) -> str | None:
        """`"finish_reason"` until a chunk gave one: before that, the answer may be cut short."""
        return None if "finish_reason" in self.metadata else "finish_reason"

    def feed(self, chunk: ChatCompletionChunk) -> str:
        """Take one chunk in; return the text it adds."""
        if chunk.usage is not None:
            self.usage = _usage(chunk.usage)
        self.model_name = chunk.model or self.model_name
        self.metadata["id"] = chunk.id
        text = ""
        for choice in chunk.choices or []:
            if choice.finish_reason:
                self.metadata["finish_reason"] = choice.finish_reason
            if choice.delta is None:
                continue
            if choice.delta.model_extra:  # the SDK declares no reasoning field: servers add theirs
                thought = _reasoning_text(choice.delta.model_extra)
                self.reasoning.append(thought)
                self.new_reasoning += thought
            text += choice.delta.content or ""
            for fragment in choice.delta.tool_calls or []:
                self._add(fragment.index, fragment.id, fragment.function)
        self.text.append(text)
        return text

    def _add(self, index: int | None, call_id: str | None, function: Any) -> None:
        position = self.slots.get(index)
        # A new id at a known index is a new call (some servers send every call at index 0).
        if position is None or (call_id and self.calls[position].id not in ("", call_id)):
            position = self.slots[index] = len(self.calls)
            self.calls.append(_PendingCall())
        pending = self.calls[position]
        pending.id = pending.id or call_id or ""
        if function is not None:
            pending.name = pending.name or function.name or ""
            pending.arguments.append(function.arguments or "")

    def response(self) -> ModelResponse:
        """Return the assembled response."""
        thought = "".join(self.reasoning)
        return ModelResponse(
            text="".join(self.text),
            reasoning=[ReasoningPart(text=thought, provider=self.provider)] if thought else [],
            tool_calls=[_tool_call(call.id, call.name, "".join(call.arguments)) for call in self.calls],
            usage=self.usage,
            model_name=self.model_name,
            metadata=self.metadata,
        )
