"""The model-provider seam and its implementations, importable from one place.

The seam (`Model` and the values that cross it) lives in `hookline.models.base` and is
imported here at once. Everything else is loaded on first use (PEP 562 `__getattr__`): the
scripted `FunctionModel`, the `"provider:model"` registry (`hookline.models._registry`, which
the built-in adapters and third-party packages fill through the `hookline.models` entry-point
group) and the provider adapters (`OpenAIModel`, `OpenAIResponsesModel`, `AnthropicModel`,
`LocalModel`). So importing hookline loads no provider SDK: a program that only uses
Anthropic needs no `openai` import, and one without the `anthropic` extra installed can
still import everything else.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hookline.models.base import (
    Model,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ModelStreamEvent,
    ReasoningDelta,
    ReasoningEffort,
    ResponseDone,
    TextDelta,
    ToolSpec,
    whole_answer_deltas,
)

if TYPE_CHECKING:
    from hookline.models._registry import register_provider, resolve_model
    from hookline.models.anthropic import AnthropicModel
    from hookline.models.function import FunctionModel
    from hookline.models.local import LocalModel
    from hookline.models.openai import OpenAIModel
    from hookline.models.openai_responses import OpenAIResponsesModel

__all__ = [
    "AnthropicModel",
    "FunctionModel",
    "LocalModel",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "ModelStreamEvent",
    "OpenAIModel",
    "OpenAIResponsesModel",
    "ReasoningDelta",
    "ReasoningEffort",
    "ResponseDone",
    "TextDelta",
    "ToolSpec",
    "register_provider",
    "resolve_model",
    "whole_answer_deltas",
]

_LAZY = {
    "FunctionModel": "hookline.models.function",
    "register_provider": "hookline.models._registry",
    "resolve_model": "hookline.models._registry",
    "OpenAIModel": "hookline.models.openai",
    "OpenAIResponsesModel": "hookline.models.openai_responses",
    "AnthropicModel": "hookline.models.anthropic",
    "LocalModel": "hookline.models.local",
}
"""The names importable from here but loaded on first use, each with the module that defines it."""


def __getattr__(name: str) -> Any:
    """Load a name of `_LAZY` on first use (PEP 562), so that importing this package loads no SDK.

    Raises:
        ImportError: An adapter's SDK is not installed; the message says how to install it.
        AttributeError: `name` is no name of this module.

    """
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
