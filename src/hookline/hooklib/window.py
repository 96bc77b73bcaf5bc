"""Keeping the prompt short: `SlidingWindow` drops old messages, `Compaction` summarises them.

Both cut the conversation at one index and change only what comes before it, so the rule
that keeps them valid is about that index alone: a cut never lands on a tool message.
Tool results come right after their call, so a cut before a non-tool message takes each
call with all of its results or leaves both. Both change what the model sees (the live
`state.messages`), and the session log keeps every message; a compaction is recorded in the
log too (its summary), so the next runs on the session start from it.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from hookline.errors import ConfigError
from hookline.hook_points import HookPoint
from hookline.messages import Message

if TYPE_CHECKING:
    from hookline.state import State

__all__ = ["TOKENS_KEY", "Compaction", "SlidingWindow", "Summarizer", "safe_cut"]

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
    """A hook that replaces the older part of a long conversation with a summary, kept in the log.

    Register it at `before_llm`. When the conversation holds more than `trigger_messages`
    messages, or (with `trigger_tokens`) the last model call's prompt and answer came to more
    tokens than that, as the model reported them, everything but the last `keep_last`
    messages (or a few more, so as never to cut between a tool call and its results) is
    passed to `summarize`, and replaced by one user message `"Summary of earlier
    conversation: ..."`. A previous summary is part of the older messages, so summaries roll
    forward. `summarize` may be async, e.g. another agent: `lambda msgs:
    summarizer.prompt(render(msgs))` then reading `.output`.

    The summary is recorded in the session's log (`State.compact`): the next run on the
    session, in any process or a fork, starts from it without summarising again, until a
    user undoes it (`hookline.compaction.undo_compaction`). The log keeps every message.

    The token trigger needs the hook at `after_llm` too, where it notes each call's tokens as
    the model reported them in `state.data[TOKENS_KEY]` (saved with the session, so the next
    run's first call knows the last one's size); registered without it, a run fails at once
    (`HookError` from a `ConfigError` that says so).

    Example:
        ```python
        def summarize(messages: list[Message]) -> str:
            return " / ".join(m.text for m in messages if m.text)[:500]

        agent = Agent(
            model=..., hooks={"before_llm": [Compaction(summarize, trigger_messages=30, keep_last=10)]}
        )
        by_tokens = Compaction(summarize, trigger_tokens=50_000)
        agent = Agent(model=..., hooks={"before_llm": [by_tokens], "after_llm": [by_tokens]})
        ```

    Args:
        summarize: A plain or async function from the older messages to a summary text.
        trigger_messages: Compact when the conversation holds more messages than this.
        keep_last: How many of the newest messages to keep as they are (at least 1).
        trigger_tokens: Also compact when the last model call's input and output tokens,
            as the model reported them, came to more than this (None: no token trigger).

    """

    def __init__(
        self, summarize: Summarizer, trigger_messages: int = 40, keep_last: int = 10, *,
        trigger_tokens: int | None = None,
    ) -> None:
        if not callable(summarize):
            raise ConfigError(f"Compaction needs a summarize function, not {type(summarize).__name__}")
        self.summarize = summarize
        self.keep_last = _positive("Compaction", "keep_last", keep_last)
        self.trigger_messages = _positive("Compaction", "trigger_messages", trigger_messages, keep_last + 1)
        self.trigger_tokens = None if trigger_tokens is None else _positive("Compaction", "trigger_tokens",
                                                                             trigger_tokens)

    def __repr__(self) -> str:
        tokens = f", trigger_tokens={self.trigger_tokens}" if self.trigger_tokens is not None else ""
        return f"Compaction(trigger_messages={self.trigger_messages}, keep_last={self.keep_last}{tokens})"

    def cut(self, messages: Sequence[Message], tokens: int = 0) -> int | None:
        """How many leading messages to summarise, or None when it is not time to compact.

        `tokens`: the last model call's tokens, for the token trigger.
        """
        over_tokens = self.trigger_tokens is not None and tokens > self.trigger_tokens
        if len(messages) <= self.trigger_messages and not over_tokens:
            return None
        cut = safe_cut(messages, len(messages) - self.keep_last)
        return cut if cut >= 2 else None

    def run(self, state: State) -> None:
        """Compact with a plain `summarize` (the loop calls `run_async`, which takes both kinds)."""
        if state.point is HookPoint.AFTER_LLM:
            _note_usage(state)
            return
        cut, trigger = self._due(state)
        if cut is None:
            return
        summary = self.summarize(list(state.messages[:cut]))
        if inspect.iscoroutine(summary):
            summary.close()
        if not isinstance(summary, str):
            raise TypeError("summarize returned an awaitable; call Compaction.run_async (the loop does)")
        state.compact(cut, Message.user(SUMMARY_PREFIX + summary), trigger=trigger)

    async def run_async(self, state: State) -> None:
        """Compact, awaiting `summarize` if it is async (at `after_llm`: note the call's tokens)."""
        if state.point is HookPoint.AFTER_LLM:
            _note_usage(state)
            return
        cut, trigger = self._due(state)
        if cut is None:
            return
        summary = self.summarize(list(state.messages[:cut]))
        if inspect.isawaitable(summary):
            summary = await summary
        state.compact(cut, Message.user(SUMMARY_PREFIX + str(summary)), trigger=trigger)

    def _due(self, state: State) -> tuple[int | None, str]:
        tokens = 0
        if self.trigger_tokens is not None:
            if state.usage.model_calls == 0 and not self._noted_by(state.agent):
                raise ConfigError("Compaction(trigger_tokens=...) learns each call's tokens at after_llm: register "
                                  'it there too, e.g. hooks={"before_llm": [compaction], "after_llm": [compaction]}')
            seen = state.data.get(TOKENS_KEY)
            tokens = int(seen.get("last", 0)) if isinstance(seen, dict) else 0
        cut = self.cut(state.messages, tokens)
        return cut, "messages" if len(state.messages) > self.trigger_messages else "tokens"

    def _noted_by(self, agent: Any) -> bool:
        """Whether `agent` runs this hook at `after_llm` too (checked once a run)."""
        return any(bound.hook is self for bound in agent.hooks.get(HookPoint.AFTER_LLM, ()))


TOKENS_KEY = "hookline.compaction"
"""`state.data` key: `{"tokens", "last"}`: the run's tokens so far, and the last model call's (input and output)."""


def _note_usage(state: State) -> None:
    """After a model call: its tokens (input and output, as reported), from the run's usage so far."""
    usage = state.usage
    seen = state.data.get(TOKENS_KEY)
    before = int(seen.get("tokens", 0)) if isinstance(seen, dict) and usage.model_calls > 1 else 0
    total = usage.input_tokens + usage.output_tokens
    state.data[TOKENS_KEY] = {"tokens": total, "last": total - before}
