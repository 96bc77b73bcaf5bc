"""Events: the entries of a session's log, and the views a reader takes of it.

A message event records one `Message` of the conversation. A status event records what the
loop is doing ("turn 2: calling model", "running add(a=1, b=2)") for front ends; status
events never reach a model. While a model streams, `.stream()` also yields `delta` events
holding text fragments; those are never stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from hookline._hot_path import trusted_factory
from hookline.messages import Message, Part, TextPart
from hookline.types import EventKind, Role, StatusSource, View

__all__ = ["EVENTS_ADAPTER", "TITLE_EVENTS", "Event", "StatusOptions", "run_end", "select_view", "title_of"]


class Event(BaseModel):
    """One entry of a session's log.

    Build one with what the writer knows, e.g.
    `Event(author="user", kind="message", role="user", parts=[TextPart(text="hi")])`;
    the store fills in `id`, `session_id`, `seq` and `created_at`.
    """

    model_config = ConfigDict(extra="forbid")
    id: str | None = None
    """Unique id, set by the store (or by the run, before it is stored; a delta holds the id of its answer)."""
    session_id: str | None = None
    """The session this event belongs to, set by the store."""
    seq: int | None = None
    """Position in the session's log (monotonic, gap-free), set by the store."""
    author: str
    """"user", an agent's name, or a tool's name."""
    kind: EventKind = "message"
    """"message", "status", "marker" (bookkeeping, in the `all` view only), or (only while
    streaming, never stored) "delta"."""
    role: Role | None = None
    """For messages: user, assistant, tool or system."""
    source: StatusSource | None = None
    """For status events: agent, llm or tool."""
    parts: list[Part] = Field(default_factory=list)
    """The content: message parts, a status line as a `TextPart`, or a text delta."""
    partial: bool = False
    """True for parts prepared but not yet sent (see `SessionStore.prepare_event`)."""
    created_at: datetime | None = None
    """When the store recorded it (UTC)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Structured details: token counts, durations, call ids, provider data."""

    @classmethod
    def from_valid(
        cls,
        author: str,
        kind: EventKind,
        parts: list[Part],
        *,
        role: Role | None = None,
        source: StatusSource | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Event:
        """An event of values that are already valid, built without validating them (the loop's own events)."""
        return _trusted(author, kind, role, source, parts, {} if metadata is None else metadata)

    @classmethod
    def from_message(cls, message: Message, author: str) -> Event:
        """A message event recording `message`, written by `author` (a message's parts are valid already)."""
        return _trusted(author, "message", message.role, None, list(message.parts), {})

    @classmethod
    def status(cls, author: str, source: StatusSource, text: str, **metadata: Any) -> Event:
        """A status event: one line of `text` from `source`."""
        return cls(author=author, kind="status", source=source, parts=[TextPart(text=text)], metadata=metadata)

    @classmethod
    def status_line(cls, author: str, source: StatusSource, text: str, metadata: dict[str, Any]) -> Event:
        """A status event of a line and metadata that are already valid (`text` a string), built without validating.

        A run streaming its status builds several a turn: built so, they cost a quarter of a
        validated one (docs/perf/README.md).
        """
        values = _STATUS.copy()
        values["author"], values["source"], values["metadata"] = author, source, metadata
        values["parts"] = [_new_text({"type": "text", "text": text})]
        return _new_event(values)

    @classmethod
    def text_delta(cls, author: str, text: str, answer_id: str | None = None) -> Event:
        """A streamed fragment of a model's answer (`kind="delta"`, never stored), built without validating.

        Its `id` is `answer_id`: the id the answer's message event keeps once stored, so that a
        reader can tell which message the fragments build.
        """
        return _trusted(author, "delta", None, None, [_text(text)], {}, event_id=answer_id)

    @classmethod
    def marker(cls, author: str, **metadata: Any) -> Event:
        """A marker: a fact the loop keeps for itself (in the `all` view only), e.g. a call's start."""
        return cls(author=author, kind="marker", metadata=metadata)

    @property
    def text(self) -> str:
        """The text parts joined together."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    def to_message(self) -> Message:
        """The message this event records; raises `ValueError` for non-message events."""
        if self.kind != "message" or self.role is None:
            raise ValueError(f"event {self.seq} is a {self.kind} event, not a message")
        return Message.from_valid_parts(self.role, self.parts)


class StatusOptions(BaseModel):
    """Which status events a run writes, and how much they say."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    agent: bool = True
    """Loop progress: "turn 2: calling model", "run completed"."""
    llm: bool = True
    """Model answers: "gpt-4o-mini answered: 2 tool calls, 412 tokens, 380 ms"."""
    tool: bool = True
    """Tool calls and their results, and log records emitted by tool code."""
    inputs: bool = True
    """Include tool arguments in status lines ("running add(a=1, b=2)")."""
    outputs: bool = True
    """Include tool results in status lines ("add returned 3")."""
    reasoning: bool = False
    """Also write the model's reasoning, where it shows any, as llm status lines ("thinking: ...")."""
    requests: bool = False
    """Also record each model request as the provider got it (after `before_llm` hooks, with the
    instructions, tools and settings of that call) in the model's status line, as
    `metadata["request"]`, for the web page's inspector. Each holds the whole conversation so far,
    so the log grows with the square of its length: a debugging switch."""
    state: bool = False
    """Also record `state.data` in a session's log: as the run finds it, and at each flush (before a
    model call, before tools run, at the end) where it changed, a copy in a marker
    (`metadata["state"]`), for the inspector's "state at this event" and for forks made there.
    Costs a JSON encoding of the state per flush, and the log a copy of it per change."""
    tool_logs: bool = True
    """Capture log records emitted by tool code during its call as tool status events (with `tool`)."""
    hook_logs: bool = False
    """Capture log records emitted by hooks as agent status events (with `agent`)."""
    model_logs: bool = False
    """Capture log records emitted during model calls (the adapter, its retries, the SDK) as llm
    status events (with `llm`)."""

    def wants(self, source: StatusSource) -> bool:
        """Whether status events from `source` are written."""
        return bool(getattr(self, source))


def _trusted(
    author: str, kind: EventKind, role: Role | None, source: StatusSource | None, parts: list[Part],
    metadata: dict[str, Any], *, event_id: str | None = None,
) -> Event:
    """An event of valid values, unvalidated (see `Event.status_line`)."""
    return _new_event({
        "id": event_id, "session_id": None, "seq": None, "author": author, "kind": kind, "role": role, "source": source,
        "parts": parts, "partial": False, "created_at": None, "metadata": metadata,
    })


_STATUS: dict[str, Any] = {
    "id": None, "session_id": None, "seq": None, "author": None, "kind": "status", "role": None, "source": None,
    "parts": None, "partial": False, "created_at": None, "metadata": None,
}
"""The values of a status event not yet stored, in field order, for `Event.status_line` to copy and fill in:
cheaper than a dict built anew, and a run streaming its status builds several a turn."""


def _text(text: str) -> TextPart:
    return _new_text({"type": "text", "text": text})


_new_event = trusted_factory(Event)
_new_text = trusted_factory(TextPart)


EVENTS_ADAPTER: TypeAdapter[list[Event]] = TypeAdapter(list[Event])
"""Encodes and decodes lists of events to and from JSON, losslessly."""


_LEGACY_ENDS = frozenset(f"run {reason}" for reason in
                         ("completed", "hook_exit", "interrupted", "max_turns", "cancelled", "failed"))
"""The last lines of runs recorded before the end was recorded as data (read only for those logs)."""


def run_end(event: Event) -> str | None:
    """How the run whose last event this is ended ("completed", "cancelled", "failed", ...); None for any other event.

    A run's last status line (or, with agent status off, marker) carries it as
    `metadata["run_end"]`: a stop reason, or "failed".
    """
    if event.kind not in ("status", "marker"):
        return None
    ended = event.metadata.get("run_end")
    if isinstance(ended, str):
        return ended
    if event.kind == "status" and event.source == "agent" and "run_end" not in event.metadata:
        text = event.text
        return text.removeprefix("run ") if text in _LEGACY_ENDS else None
    return None


TITLE_EVENTS = 20
"""The first events of a session's `prompt` view read for its title: its first user message is among them
(after a fork's or a compaction's lead)."""
_TITLE_CHARS = 200


def title_of(events: Iterable[Event]) -> str:
    """A session's title: the first line of the first user message among `events` (its log), shortened."""
    for event in events:
        if event.kind == "message" and event.role == "user" and not event.partial and event.text.strip():
            line = event.text.strip().splitlines()[0]
            return line if len(line) <= _TITLE_CHARS else line[: _TITLE_CHARS - 1] + "…"
    return ""


def select_view(events: Iterable[Event], view: View) -> list[Event]:
    """The events of `view`.

    `prompt`: complete messages only (what the model sees). `ui`: messages and status,
    with partial events last. `all`: everything (markers too), in log order.
    """
    if view == "prompt":
        return [e for e in events if e.kind == "message" and not e.partial]
    if view == "ui":
        ordered = [e for e in events if e.kind != "marker"]
        return [e for e in ordered if not e.partial] + [e for e in ordered if e.partial]
    if view == "all":
        return list(events)
    raise ValueError(f"unknown view {view!r}; expected one of: prompt, ui, all")
