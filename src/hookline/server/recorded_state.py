"""The state at an event: read back from the markers a run writes with `StatusOptions(state=True)`.

A run that records its state leaves a marker (`metadata["state"]`) as it starts and where
a flush finds the state changed; the state at an event is that of the last marker at or
before it. The log is read backwards from the event a page at a time, and no further than
`SCAN` events: a run that did not record its state would otherwise have the whole log read
for nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hookline.events import Event
from hookline.sessions import SessionStore

__all__ = ["SCAN", "recorded_states", "state_before"]

SCAN = 2000
"""How many events before an event are read to find the state recorded at it."""
_PAGE = 500


def _state_of(event: Event) -> dict[str, Any] | None:
    state = event.metadata.get("state") if event.kind == "marker" else None
    return state if isinstance(state, dict) else None


async def recorded_states(store: SessionStore, session_id: str, seq: int, *,
                          count: int = 2) -> list[tuple[int, dict[str, Any]]]:
    """Up to `count` states recorded at or before event `seq`, newest first, as (marker seq, state).

    Reads at most `SCAN` events; fewer states than asked when no more are on record within them.
    """
    found: list[tuple[int, dict[str, Any]]] = []
    before, read = seq + 1, 0
    while read < SCAN and len(found) < count:
        page = await store.page(session_id, view="all", before_seq=before, limit=_PAGE, newest=True)
        stored = [e for e in page if not e.partial and e.seq is not None]
        if not stored:
            break
        for event in reversed(stored):
            state = _state_of(event)
            if state is not None:
                found.append((event.seq or 0, state))
                if len(found) == count:
                    break
        read += len(stored)
        before = stored[0].seq or 0
    return found


def state_before(events: Iterable[Event], seq: int) -> dict[str, Any] | None:
    """The state recorded last before event `seq` in `events` (a log in order); None: none is."""
    state = None
    for event in events:
        if (event.seq or 0) >= seq:
            break
        recorded = _state_of(event)
        if recorded is not None:
            state = recorded
    return state
