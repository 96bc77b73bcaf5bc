"""Compactions in the log: the summary a run starts from, instead of the older messages it replaced.

A hook compacts the live conversation with `State.compact(cut, summary)` (the `Compaction`
hook of `hookline.hooklib` does). The loop records the summary as a message event authored
`"compaction"`, whose `metadata["compaction"]` holds:

- `id`: the compaction's own id (copies in a fork keep it);
- `replaced`: how many messages of the conversation it stands for;
- `kept`: how many messages came after the cut: the `kept` messages of the log right before
  the summary, which stay as they are;
- what the hook adds (`trigger`: "messages" or "tokens", ...).

Nothing is deleted: the log keeps every message, and the inspector shows them. A run that
loads the session (`compacted`) starts from the latest compaction not undone: its summary,
the messages it kept, and every message after it; other summaries are left out (an older one
is part of what the newer one replaced). So a resumed run, another process and a fork use
the summary without calling the summariser again.

`undo_compaction` undoes one: it records a status line by the user with
`metadata["compaction_undone"]` naming the compaction's `id`, and from then on runs load the
messages it had replaced (or the compaction before it, if one is not undone).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hookline.errors import ConfigError
from hookline.events import Event
from hookline.sessions.base import SessionStore

__all__ = [
    "COMPACTION_AUTHOR", "COMPACTION_KEY", "UNDONE_KEY", "compacted", "compacted_log", "compaction_of",
    "undo_compaction",
]

COMPACTION_KEY = "compaction"
"""The metadata key of a compaction's summary event: `{"id", "replaced", "kept", ...}`."""
UNDONE_KEY = "compaction_undone"
"""The metadata key of the line that undoes a compaction: the compaction's `id`."""
COMPACTION_AUTHOR = "compaction"
"""The author of a compaction's summary event."""


def compaction_of(event: Event) -> dict[str, Any] | None:
    """The compaction record `event` holds, if it is a compaction's summary."""
    record = event.metadata.get(COMPACTION_KEY) if event.kind == "message" else None
    return record if isinstance(record, dict) and isinstance(record.get("id"), str) else None


async def compacted(store: SessionStore, session_id: str, events: list[Event]) -> list[Event]:
    """The messages a run on `session_id` starts from: `events` (its `prompt` view) from the latest compaction.

    Events without a compaction are given back as they are, at the cost of a look at each
    one's metadata; with one, the store is read once more (the lines after the latest
    summary, to learn whether it was undone; further back while they were).
    """
    summaries = _summaries(events)
    if not summaries:
        return events
    active = None
    for index in reversed(summaries):
        after = await store.events(session_id, view="all", after_seq=events[index].seq or 0)
        if events[index].metadata[COMPACTION_KEY]["id"] not in _undone(after):
            active = index
            break
    return _from(events, summaries, active)


def compacted_log(events: Sequence[Event]) -> list[Event]:
    """The messages of `events` (a log in the `all` view, or its start) as a run then started from them."""
    messages = [e for e in events if e.kind == "message" and not e.partial]
    summaries = _summaries(messages)
    if not summaries:
        return messages
    undone = _undone(events)
    active = next((i for i in reversed(summaries) if messages[i].metadata[COMPACTION_KEY]["id"] not in undone), None)
    return _from(messages, summaries, active)


def _summaries(events: Sequence[Event]) -> list[int]:
    return [i for i, e in enumerate(events) if COMPACTION_KEY in e.metadata and compaction_of(e) is not None]


def _undone(events: Sequence[Event]) -> set[str]:
    return {e.metadata[UNDONE_KEY] for e in events if e.kind != "message" and UNDONE_KEY in e.metadata}


def _from(events: Sequence[Event], summaries: list[int], active: int | None) -> list[Event]:
    """The messages from summary `active` (None: from the start): it, the messages it kept, and those after it."""
    left_out = set(summaries)
    real = [e for i, e in enumerate(events) if i not in left_out]
    if active is None:
        return real
    before = sum(1 for i in range(active) if i not in left_out)
    kept = int(events[active].metadata[COMPACTION_KEY]["kept"])
    return [events[active], *real[max(before - kept, 0):]]


async def undo_compaction(
    store: SessionStore, session_id: str, compaction_id: str | None = None, *, user: str | None = None,
    wait: float = 5.0,
) -> Event:
    """Undo a compaction of session `session_id` (the latest in effect, or `compaction_id`); answer the line recorded.

    The line is a status event authored by the user, "alice undid the compaction of 12
    messages", with `metadata["compaction_undone"]` the compaction's id. It is written under
    the session's run lock, so never in the middle of a run.

    Raises:
        SessionNotFound: No such session (of `user`, when given).
        SessionBusy: A run held the session for `wait` seconds.
        ConfigError: No compaction is in effect, or none has that id.
    """
    owner = (await store.get(session_id, user=user, with_events=False)).user
    async with store.run_lock(session_id, timeout=wait):
        events = await store.events(session_id, view="prompt")
        in_effect = [e for e in await compacted(store, session_id, events) if compaction_of(e) is not None]
        target = _target(session_id, events, in_effect, compaction_id)
        record = target.metadata[COMPACTION_KEY]
        line = Event.status(owner, "agent", f"{owner} undid the compaction of {record['replaced']} messages",
                            **{UNDONE_KEY: record["id"]})
        return await store.append_event(session_id, line)


def _target(session_id: str, events: Sequence[Event], in_effect: Sequence[Event], compaction_id: str | None) -> Event:
    if compaction_id is None:
        if not in_effect:
            raise ConfigError(f"session {session_id!r} has no compaction in effect to undo")
        return in_effect[0]
    for event in events:
        record = compaction_of(event)
        if record is not None and record["id"] == compaction_id:
            return event
    known = [r["id"] for r in (compaction_of(e) for e in events) if r is not None]
    raise ConfigError(f"session {session_id!r} has no compaction {compaction_id!r}; "
                      f"its compactions: {', '.join(known) or 'none'}")
