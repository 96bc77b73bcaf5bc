"""The model-provider seam: one request object in, one response out.

`Model` is the whole interface an adapter implements, as httpx's `BaseTransport` is for
transports: `request()`, and optionally `stream()`, which by default wraps `request()`. This
module holds it with the values that cross it (`ModelRequest`, `ModelResponse`, `ToolSpec`,
`ModelSettings` and the stream events). Of hookline it imports only value modules (messages,
types, usage, errors): the adapters, the registry and the loop import from here, and this
module from none of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

from hookline.errors import ConfigError
from hookline.messages import Message, ReasoningPart, TextPart, ToolCallPart, share_fields_sets
from hookline.types import JSONObject
from hookline.usage import Prices, Usage

__all__ = [
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "ModelStreamEvent",
    "ReasoningDelta",
    "ReasoningEffort",
    "ResponseDone",
    "TextDelta",
    "ToolSpec",
    "whole_answer_deltas",
]

ReasoningEffort = Literal["minimal", "low", "medium", "high"]
"""How hard a reasoning model thinks before it answers."""


class ToolSpec(BaseModel):
    """A tool as a model sees it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    """The tool's name."""
    description: str = ""
    """What the tool does, for the model."""
    parameters: JSONObject = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """The JSON schema of the tool's arguments (an object schema)."""


def _non_empty(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty: give 'auto', 'none', 'required' or a tool's name")
    return value


def _stop_words(value: list[str]) -> list[str]:
    if any(not word for word in value):
        raise ValueError("a stop sequence must not be empty")
    return value


_MERGED_KEYWISE = ("extra_body", "extra_headers")


class ModelSettings(BaseModel):
    """Request settings every adapter understands, each mapped to its provider's own parameter.

    Give them on the agent (`Agent(model_settings=...)`), for one run
    (`agent.prompt(...).model_settings(...)`), or for one model call from a `before_llm` hook
    (`state.model_settings = ...`). Later ones win field by field (agent < run < hook): a
    field left None keeps the earlier value, and `extra_body` and `extra_headers` merge key by
    key. An adapter leaves out what its provider does not support, with a debug log on the
    `hookline.models` logger, never an error. Bad values raise `ConfigError` naming the field.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    temperature: Annotated[float, Field(strict=True, ge=0, le=2)] | None = None
    """Sampling temperature, 0 to 2 (Anthropic takes 0 to 1)."""
    max_tokens: Annotated[StrictInt, Field(ge=1)] | None = None
    """The most tokens the answer may take (reasoning included, where the provider counts it so)."""
    tool_choice: Annotated[str, AfterValidator(_non_empty)] | None = None
    """"auto", "none" (no tool), "required" (some tool), or a tool's name (that tool); only sent with tools."""
    parallel_tool_calls: StrictBool | None = None
    """Whether the model may call several tools in one turn; only sent with tools."""
    reasoning_effort: ReasoningEffort | None = None
    """How hard a reasoning model thinks: "minimal", "low", "medium" or "high" (Anthropic: a thinking budget)."""
    stop: Annotated[list[str], Field(max_length=4), AfterValidator(_stop_words)] | None = None
    """Up to 4 sequences that end the answer where they appear."""
    extra_body: dict[str, Any] | None = None
    """More request parameters, sent as they are, over the mapped ones (a provider's own extensions)."""
    extra_headers: dict[str, str] | None = None
    """More HTTP headers for the request."""

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise ConfigError(f"invalid model settings: {_problems(exc)}") from exc

    @classmethod
    def parse(cls, value: ModelSettings | Mapping[str, Any] | None) -> ModelSettings:
        """The settings `value` holds: a `ModelSettings`, a dict of its fields, or None (no settings).

        Raises:
            ConfigError: A field is unknown or its value is invalid, or `value` is of another type.
        """
        if isinstance(value, ModelSettings):
            return value
        if value is None:
            return cls()
        if not isinstance(value, Mapping):
            raise ConfigError(f"model settings must be a ModelSettings or a dict, not {type(value).__name__}")
        return cls(**value)

    def given(self) -> dict[str, Any]:
        """The fields that are set (not None), by name."""
        return {name: value for name, value in self._items() if value is not None}

    def merged(self, *others: ModelSettings | None) -> ModelSettings:
        """These settings with `others` laid over them in order: their set fields win."""
        layers = [given for other in others if other is not None and (given := other.given())]
        if not layers:  # the commonest case, once per run: nothing to lay over (a frozen value can be shared)
            return self
        values = self.given()
        for layer in layers:
            for name, value in layer.items():
                if name in _MERGED_KEYWISE and name in values:
                    value = {**values[name], **value}
                values[name] = value
        return ModelSettings.model_construct(**values)

    def _items(self) -> Iterator[tuple[str, Any]]:
        for name in type(self).model_fields:
            yield name, getattr(self, name)

    def __repr_args__(self) -> Iterator[tuple[str, Any]]:
        return ((name, value) for name, value in self._items() if value is not None)


def _problems(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(item) for item in error["loc"]) or "settings"
        problems.append(f"{where}: {error['msg']} (got {error.get('input')!r})")
    return "; ".join(problems)


@dataclass(slots=True)
class ModelRequest:
    """Everything one model call needs.

    A plain dataclass rather than a pydantic model: it is built on every turn from
    messages that are already valid, and re-validating the history would make each turn
    cost more as the conversation grows.
    """

    messages: list[Message]
    """The conversation, instructions first (role "system"): exactly what a provider gets."""
    tools: list[ToolSpec] = field(default_factory=list)
    """The tools offered on this call (empty: the model must answer in text)."""
    output_schema: JSONObject | None = None
    """A JSON schema the final answer must follow, if the agent has an `output_type`."""
    settings: JSONObject = field(default_factory=dict)
    """Per-run request parameters in the provider's own terms, merged over the model's own `settings`."""
    model_settings: ModelSettings = field(default_factory=ModelSettings)
    """The settings of this call (agent < run < `before_llm` hook), mapped by each adapter over both."""


class ModelResponse(BaseModel):
    """What a model answered: text, tool calls, or both, and the reasoning before them."""

    model_config = ConfigDict(extra="forbid")
    text: str = ""
    """The answer's text."""
    reasoning: list[ReasoningPart] = Field(default_factory=list)
    """The model's reasoning before it answered, in order (kept in the message, ahead of the text)."""
    tool_calls: list[ToolCallPart] = Field(default_factory=list)
    """Tools the model asks to call, in order."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens this call used (model_calls is counted by the loop)."""
    model_name: str = ""
    """The model that answered, as the provider names it."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Provider-specific details (finish reason, response id, ...)."""

    def to_message(self) -> Message:
        """The assistant message this response becomes in the conversation."""
        parts: list[Any] = list(self.reasoning)
        if self.text:
            parts.append(TextPart(text=self.text))
        parts.extend(self.tool_calls)
        share_fields_sets(parts)  # the message lives as long as the conversation: keep it small
        return Message.from_valid_parts("assistant", parts)


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A fragment of answer text, as a streaming model produces it."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A fragment of the model's reasoning (its thinking), as a streaming model produces it, before its answer.

    The fragments of one reasoning part join to its `text`; where a new part (or a new summary
    of one) starts after another, its first fragment begins with a blank line. The parts
    themselves come whole in `ResponseDone`.
    """

    text: str


@dataclass(frozen=True, slots=True)
class ResponseDone:
    """The end of a stream: the whole response, tool calls assembled."""

    response: ModelResponse


ModelStreamEvent = TextDelta | ReasoningDelta | ResponseDone
"""What `Model.stream()` yields: text and reasoning deltas, then exactly one `ResponseDone`."""


def whole_answer_deltas(response: ModelResponse) -> list[TextDelta | ReasoningDelta]:
    """The deltas of an answer that came whole: one per reasoning part that shows text, then one holding the text.

    What the default `Model.stream()` yields before its `ResponseDone`.
    """
    if not response.reasoning:  # nearly always: no comprehension to run, once a model call
        return [TextDelta(response.text)] if response.text else []
    shown = [part.text for part in response.reasoning if part.text]
    deltas: list[TextDelta | ReasoningDelta] = [
        ReasoningDelta(f"\n\n{text}" if number else text) for number, text in enumerate(shown)
    ]
    if response.text:
        deltas.append(TextDelta(response.text))
    return deltas


class Model(ABC):
    """A language model behind some provider. Subclass it to add a provider."""

    name: str = "model"
    """The model's name, as shown in status lines."""
    provider: str = ""
    """The provider's name, e.g. "openai"."""
    base_url: str | None = None
    """Where the provider's API listens (tracing's `server.address` and `server.port`); None for a model in process."""
    prices: Prices | None = None
    """What the provider charges for this model's tokens, when you set it (`model.prices = Prices(...)`): each
    call's cost is then on record with its status line and in the inspector's traces. None: no cost is shown."""

    @abstractmethod
    async def request(self, request: ModelRequest) -> ModelResponse:
        """Call the model once and return its whole answer."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Call the model and yield reasoning and text deltas as they come, then `ResponseDone`.

        The default wraps `request()`: a delta per reasoning part that shows text, then one
        holding the whole text.
        """
        response = await self.request(request)
        for delta in whole_answer_deltas(response):
            yield delta
        yield ResponseDone(response)

    async def aclose(self) -> None:  # noqa: B027 - optional to override: the default is a no-op
        """Release connections; the default does nothing."""

    async def __aenter__(self) -> Model:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self.aclose()
