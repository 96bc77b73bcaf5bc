"""The stream loop both SDK adapters share: deltas as they come, then the whole response."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, TypeVar

from hookline.models import ModelResponse, ModelStreamEvent, ResponseDone, TextDelta
from hookline.models._errors import ErrorTable, converted

__all__ = ["Assembler", "assembled"]

ItemT = TypeVar("ItemT", contravariant=True)


class Assembler(Protocol[ItemT]):
    """Builds a response from a provider's stream items."""

    def feed(self, item: ItemT) -> str:
        """Take one item; return the text it adds (empty if none)."""

    def response(self) -> ModelResponse:
        """The whole response, once the stream has ended."""


class _SDKStream(AbstractAsyncContextManager[Any], Protocol):
    def __aiter__(self) -> AsyncIterator[Any]: ...


async def assembled(
    stream: _SDKStream, assembler: Assembler[Any], table: ErrorTable, provider: str
) -> AsyncIterator[ModelStreamEvent]:
    """Yield an SDK stream's text as `TextDelta`s, then `ResponseDone`; errors go through `table`."""
    async with stream:
        with converted(table, provider):
            async for item in stream:
                text = assembler.feed(item)
                if text:
                    yield TextDelta(text)
    yield ResponseDone(assembler.response())
