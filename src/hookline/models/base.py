"""The model-provider seam: one request object in, one response out.

`Model` is the whole interface an adapter implements, as httpx's `BaseTransport` is for
transports: `request()`, and optionally `stream()`, which by default wraps `request()`. This
module holds it with the values that cross it (`ModelRequest`, `ModelResponse`, `ToolSpec` and
the stream events). Of hookline it imports only value modules (messages, types, usage): the
adapters, the registry and the loop import from here, and this module from none of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from hookline.messages import Message, TextPart, ToolCallPart
from hookline.types import JSONObject
from hookline.usage import Usage

__all__ = [
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelStreamEvent",
    "ResponseDone",
    "TextDelta",
    "ToolSpec",
]


class ToolSpec(BaseModel):
    """A tool as a model sees it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    """The tool's name."""
    description: str = ""
    """What the tool does, for the model."""
    parameters: JSONObject = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """The JSON schema of the tool's arguments (an object schema)."""


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
    """Per-run request parameters, merged over the model's own `settings`."""


class ModelResponse(BaseModel):
    """What a model answered: text, tool calls, or both."""

    model_config = ConfigDict(extra="forbid")
    text: str = ""
    """The answer's text."""
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
        parts: list[Any] = [TextPart(text=self.text)] if self.text else []
        parts.extend(self.tool_calls)
        return Message.from_valid_parts("assistant", parts)


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A fragment of answer text, as a streaming model produces it."""

    text: str


@dataclass(frozen=True, slots=True)
class ResponseDone:
    """The end of a stream: the whole response, tool calls assembled."""

    response: ModelResponse


ModelStreamEvent = TextDelta | ResponseDone
"""What `Model.stream()` yields: text deltas, then exactly one `ResponseDone`."""


class Model(ABC):
    """A language model behind some provider. Subclass it to add a provider."""

    name: str = "model"
    """The model's name, as shown in status lines."""
    provider: str = ""
    """The provider's name, e.g. "openai"."""

    @abstractmethod
    async def request(self, request: ModelRequest) -> ModelResponse:
        """Call the model once and return its whole answer."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Call the model and yield text deltas as they come, then `ResponseDone`.

        The default wraps `request()`: one delta holding the whole text.
        """
        response = await self.request(request)
        if response.text:
            yield TextDelta(response.text)
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
