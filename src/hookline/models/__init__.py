"""The model-provider seam: one request object in, one response out.

`Model` is the whole interface an adapter implements (as httpx's `BaseTransport` is for
transports): `request()`, and optionally `stream()`, which by default wraps `request()`.
`"provider:model"` strings are resolved through a registry (`hookline.models._registry`)
that the built-in adapters and third-party packages fill through the `hookline.models`
entry-point group.

The adapters (`OpenAIModel`, `AnthropicModel`, `LocalModel`) are importable from here but
loaded on first use (PEP 562 `__getattr__`), so that importing hookline loads no provider
SDK: a program that only uses Anthropic needs no `openai` import, and one without the
`anthropic` extra installed can still import everything else.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from hookline.messages import Message, TextPart, ToolCallPart
from hookline.types import JSONObject
from hookline.usage import Usage

if TYPE_CHECKING:
    from hookline.models.anthropic import AnthropicModel
    from hookline.models.local import LocalModel
    from hookline.models.openai import OpenAIModel

__all__ = [
    "AnthropicModel",
    "FunctionModel",
    "LocalModel",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelStreamEvent",
    "OpenAIModel",
    "ResponseDone",
    "TextDelta",
    "ToolSpec",
    "register_provider",
    "resolve_model",
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


from hookline.models._registry import register_provider, resolve_model  # noqa: E402
from hookline.models.function import FunctionModel  # noqa: E402

_ADAPTERS = {
    "OpenAIModel": "hookline.models.openai",
    "AnthropicModel": "hookline.models.anthropic",
    "LocalModel": "hookline.models.local",
}
"""The provider adapters importable from here, each with the module that defines it."""


def __getattr__(name: str) -> Any:
    """Load a provider adapter on first use (PEP 562), so that importing this package loads no SDK.

    Raises:
        ImportError: The adapter's SDK is not installed; the message says how to install it.
        AttributeError: `name` is no name of this module.

    """
    module = _ADAPTERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    adapter = getattr(importlib.import_module(module), name)
    globals()[name] = adapter
    return adapter


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ADAPTERS))
