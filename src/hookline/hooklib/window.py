"""Keeping the prompt short: `SlidingWindow` drops old messages, `Compaction` summarises them.

Both cut the conversation at one index and change only what comes before it, so the rule
that keeps them valid is about that index alone: a cut never lands on a tool message.
Tool results come right after their call, so a cut before a non-tool message takes each
call with all of its results or leaves both. Both change only what the model sees (the
live `state.messages`); the session log keeps every message.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from hookline.errors import ConfigError
from hookline.messages import Message

if TYPE_CHECKING:
    from hookline.state import State

__all__ = ["Compaction", "SlidingWindow", "Summarizer", "safe_cut"]

Summarizer = Callable[[list[Message]], str | Awaitable[str]]
"""A plain or async function turning the older messages into a summary."""

SUMMARY_PREFIX = "Summary of earlier conversation: "


def safe_cut(messages: Sequence[Message], index: int) -> int:
    """Return the first index at or after `index` where the conversation can be cut.

    A cut never lands on a tool message. When only tool messages follow `index`, the cut
    moves back instead, to the assistant message that made those calls, so that something
    is always kept.
    """
    cut = index
    while cut < len(messages) and messages[cut].role == "tool":
        cut += 1
    if cut < len(messages):
        return cut
    cut = min(index, len(messages) - 1)
    while cut > 0 and messages[cut].role == "tool":
        cut -= 1
    return max(cut, 0)


def _positive(owner: str, key: str, value: object, minimum: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError(f"{owner}({key}=...) takes an integer >= {minimum}, not {value!r}")
    return value


class SlidingWindow:
    """A hook that keeps only the last `max_messages` messages in front of the model.

    Register it at `before_llm`. The window never starts at a tool message, so a tool call
    always keeps its results and no result loses its call; the window may therefore hold a
    few messages fewer than `max_messages` (or, when the newest messages are all results
    of one turn, their call too). With `keep_first_user`, the first user message (usually
    the task) stays in front of the window and counts towards `max_messages`.

    Only the live conversation is trimmed; the session log keeps every message.

    Example:
        ```python
        agent = Agent(model=..., tools=[search], hooks={"before_llm": [SlidingWindow(max_messages=20)]})
        ```

    Args:
        max_messages: The most messages the model sees (at least 2 with `keep_first_user`).
        keep_first_user: Whether to keep the first user message in front of the window.

    """

    def __init__(self, max_messages: int = 40, keep_first_user: bool = True) -> None:
        self.max_messages = _positive("SlidingWindow", "max_messages", max_messages, 2 if keep_first_user else 1)
        self.keep_first_user = keep_first_user

    def __repr__(self) -> str:
        return f"SlidingWindow(max_messages={self.max_messages}, keep_first_user={self.keep_first_user})"

    def run(self, state: State) -> None:
        """Replace the conversation by its window when it is too long."""
        window = self.window(state.messages)
        if window is not None:
            state.messages = window

    def window(self, messages: Sequence[Message]) -> list[Message] | None:
        """Return the messages the model should see, or None when `messages` already fit."""
        if len(messages) <= self.max_messages:
            return None
        cut = safe_cut(messages, len(messages) - self.max_messages)
        first = self._first_user(messages)
        window = list(messages[cut:])
        if first is not None and first < cut:
            cut = safe_cut(messages, len(messages) - self.max_messages + 1)
            window = [messages[first], *messages[cut:]] if first < cut else list(messages[cut:])
        return window if len(window) < len(messages) else None

    def _first_user(self, messages: Sequence[Message]) -> int | None:
        if not self.keep_first_user:
            return None
        return next((i for i, m in enumerate(messages) if m.role == "user"), None)


class Compaction:
    """A hook that replaces the older part of a long conversation with a summary.

    Register it at `before_llm`. When the conversation holds more than `trigger_messages`
    messages, everything but the last `keep_last` (or a few more, so as never to cut
    between a tool call and its results) is passed to `summarize`, and replaced by one
    user message `"Summary of earlier conversation: ..."`. A previous summary is part of
    the older messages, so summaries roll forward. `summarize` may be async, e.g. another
    agent: `lambda msgs: summarizer.prompt(render(msgs))` then reading `.output`.

    Only the live conversation is compacted; the session log keeps every message.

    Example:
        ```python
        def summarize(messages: list[Message]) -> str:
            return " / ".join(m.text for m in messages if m.text)[:500]

        agent = Agent(
            model=..., hooks={"before_llm": [Compaction(summarize, trigger_messages=30, keep_last=10)]}
        )
        ```

    Args:
        summarize: A plain or async function from the older messages to a summary text.
        trigger_messages: Compact when the conversation holds more messages than this.
        keep_last: How many of the newest messages to keep as they are (at least 1).

    """

    def __init__(self, summarize: Summarizer, trigger_messages: int = 40, keep_last: int = 10) -> None:
        if not callable(summarize):
            raise ConfigError(f"Compaction needs a summarize function, not {type(summarize).__name__}")
        self.summarize = summarize
        self.keep_last = _positive("Compaction", "keep_last", keep_last)
        self.trigger_messages = _positive("Compaction", "trigger_messages", trigger_messages, keep_last + 1)

    def __repr__(self) -> str:
        return f"Compaction(trigger_messages={self.trigger_messages}, keep_last={self.keep_last})"

    def cut(self, messages: Sequence[Message]) -> int | None:
        """How many leading messages to summarise, or None when it is not time to compact."""
        if len(messages) <= self.trigger_messages:
            return None
        cut = safe_cut(messages, len(messages) - self.keep_last)
        return cut if cut >= 2 else None

    def run(self, state: State) -> None:
        """Compact with a plain `summarize` (the loop calls `run_async`, which takes both kinds)."""
        cut = self.cut(state.messages)
        if cut is None:
            return
        summary = self.summarize(list(state.messages[:cut]))
        if inspect.iscoroutine(summary):
            summary.close()
        if not isinstance(summary, str):
            raise TypeError("summarize returned an awaitable; call Compaction.run_async (the loop does)")
        self._replace(state, cut, summary)

    async def run_async(self, state: State) -> None:
        """Compact, awaiting `summarize` if it is async."""
        cut = self.cut(state.messages)
        if cut is None:
            return
        summary = self.summarize(list(state.messages[:cut]))
        if inspect.isawaitable(summary):
            summary = await summary
        self._replace(state, cut, str(summary))

    @staticmethod
    def _replace(state: State, cut: int, summary: str) -> None:
        state.messages[:cut] = [Message.user(SUMMARY_PREFIX + summary)]
