"""`FunctionModel`: a model whose answers come from a Python function, for tests and examples."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from hookline.models.base import Model, ModelRequest, ModelResponse

__all__ = ["FunctionModel", "ModelFunction"]

ModelFunction = Callable[[ModelRequest], ModelResponse | Awaitable[ModelResponse]]
"""A script: takes the request a provider would get, returns (or awaits) the answer."""


class FunctionModel(Model):
    """A scripted model: `FunctionModel(script)` answers each call with `script(request)`.

    Args:
        function: A plain or async function from `ModelRequest` to `ModelResponse`.
        name: The name shown in status lines.
    """

    provider = "function"

    def __init__(self, function: ModelFunction, *, name: str = "function") -> None:
        if not callable(function):
            raise TypeError(f"FunctionModel needs a callable, not {type(function).__name__}")
        self.function = function
        self.name = name
        self._is_async = inspect.iscoroutinefunction(function)

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Answer the request with the script."""
        answer: Any = self.function(request)
        if self._is_async or inspect.isawaitable(answer):
            answer = await answer
        if not isinstance(answer, ModelResponse):
            raise TypeError(f"the FunctionModel script must return a ModelResponse, not {type(answer).__name__}")
        return answer
