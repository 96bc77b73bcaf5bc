"""The stream loop both SDK adapters share: deltas as they come, then the whole response.

A stream is only an answer once the provider said it ended (OpenAI's `finish_reason`,
Anthropic's `stop_reason`): a body that stops before, because the connection dropped,
raises a retryable `ModelError` and the stream starts again under the retry policy, never
yielding the part it had as a `ResponseDone`. Text deltas already yielded stay yielded;
a new attempt that says the same text again does not yield it twice. Reasoning deltas
(the model's thinking, where the provider streams it) follow the same rules apart.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Any, Protocol, TypeVar

from hookline.models._errors import ErrorTable, converted, cut_stream, malformed
from hookline.models.base import ModelResponse, ModelStreamEvent, ReasoningDelta, ResponseDone, TextDelta
from hookline.retry import RetryPolicy, retried_stream

__all__ = ["Assembler", "ReasoningJoin", "SDKStream", "streamed"]

ItemT = TypeVar("ItemT", contravariant=True)


class Assembler(Protocol[ItemT]):
    """Builds a response from a provider's stream items."""

    new_reasoning: str
    """The reasoning text the last item added, if any: `streamed` yields it and empties it."""

    def feed(self, item: ItemT) -> str:
        """Take one item; return the text it adds (empty if none)."""

    def missing(self) -> str | None:
        """What the stream still lacks to be a whole answer (e.g. "finish_reason"), or None once it ended."""

    def response(self) -> ModelResponse:
        """The whole response, once the stream has ended."""


class SDKStream(AbstractAsyncContextManager[Any], Protocol):
    """An SDK's stream of events: an async iterator closed as a context manager."""

    def __aiter__(self) -> AsyncIterator[Any]: ...


async def streamed(
    open_stream: Callable[[], Awaitable[SDKStream]],
    assembler: Callable[[], Assembler[Any]],
    table: ErrorTable,
    provider: str,
    policy: RetryPolicy,
) -> AsyncIterator[ModelStreamEvent]:
    """Yield a provider's stream as `ReasoningDelta`s and `TextDelta`s, then `ResponseDone`, retrying it under `policy`.

    Args:
        open_stream: Sends the request and returns the SDK's stream.
        assembler: Makes an empty assembler, one per attempt.
        table: The SDK's errors and the `ModelError`s they become.
        provider: The provider's name, for errors.
        policy: How a failed or cut stream is retried.

    """
    shown, thought = _ShownText(), _ShownText()

    async def attempt() -> AsyncIterator[ModelStreamEvent]:
        built, repeat, rethink = assembler(), shown.attempt(), thought.attempt()
        with converted(table, provider):
            stream = await open_stream()
        async with stream:
            with converted(table, provider), _shape_errors(provider):
                async for item in stream:
                    text = repeat.unseen(built.feed(item))
                    if built.new_reasoning:
                        reasoning, built.new_reasoning = rethink.unseen(built.new_reasoning), ""
                        if reasoning:
                            yield ReasoningDelta(reasoning)
                    if text:
                        yield TextDelta(text)
        missing = built.missing()
        if missing is not None:
            raise cut_stream(provider, missing)
        with _shape_errors(provider):
            response = built.response()
        yield ResponseDone(response)

    async for event in retried_stream(attempt, policy, provider=provider):
        yield event


@contextmanager
def _shape_errors(provider: str) -> Iterator[None]:
    """Raise an event of the wrong shape (a field missing, a wrong type) as a `ModelError`, never as it is."""
    try:
        yield
    except (AttributeError, IndexError, KeyError, TypeError) as exc:
        detail = f"a stream event of an unexpected shape ({type(exc).__name__}: {exc})"
        raise malformed(provider, detail) from exc


class ReasoningJoin:
    """Reasoning fragments as one text: a blank line where a new part (or summary) starts after another."""

    def __init__(self) -> None:
        self.key: object = None

    def piece(self, key: object, text: str) -> str:
        """`text`, a fragment of the part `key` names, as the joined text goes on."""
        if key == self.key or not text:
            return text
        first, self.key = self.key is None, key
        return text if first else "\n\n" + text


class _ShownText:
    """The text every attempt of one stream has yielded, so that a retry does not repeat it."""

    def __init__(self) -> None:
        self.text = ""

    def attempt(self) -> _Repeat:
        """Start following a new attempt."""
        return _Repeat(self)


class _Repeat:
    """One attempt's text: held back while it says again what was shown, then yielded."""

    def __init__(self, shown: _ShownText) -> None:
        self.shown = shown
        self.said = ""
        self.caught_up = not shown.text

    def unseen(self, text: str) -> str:
        """The part of `text` (this attempt's next piece) not yet shown."""
        if self.caught_up or not text:
            self.shown.text += text
            return text
        self.said += text
        if self.shown.text.startswith(self.said):
            return ""
        self.caught_up = True
        # Shown text cannot be taken back: a retry that says something else is shown whole.
        fresh = self.said[len(self.shown.text) :] if self.said.startswith(self.shown.text) else self.said
        self.shown.text += fresh
        return fresh
