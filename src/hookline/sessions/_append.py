"""The steps of an append that every store takes alike, written once.

1. `checked`: each event is checked (`check_event`) and the bytes of its images and files
   are taken out of it (`take_media`), before any transaction begins.
2. In its transaction the store moves the session's `last_seq` on by the number of events,
   and takes the prepared parts of their authors (`prepare_event`).
3. `with_prepared`: each author's first event of the batch takes its prepared parts, first;
   `stamped` does that and gives each event its `seq`, `id`, session and time.
4. The store inserts the rows; a `seq` another writer took first is `seq_taken`.

SQLite stamps its events before its transaction (its worker thread only binds rows), so it
takes steps 1, 3 (`with_prepared`) and 4; PostgreSQL and the in-memory store take them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from hookline.errors import SessionBusy
from hookline.events import Event
from hookline.sessions._blobs import Taken, take_media
from hookline.sessions._codec import check_event, merge_pending, stamp

__all__ = ["checked", "seq_taken", "stamped", "with_prepared"]


def checked(events: Sequence[Event]) -> Taken:
    """Return `events` fit to be stored, the bytes of their media by digest, and the digests they name without bytes."""
    return take_media([check_event(e) for e in events])


def with_prepared(events: Sequence[Event], pending: dict[str, Event]) -> list[Event]:
    """`events`, each author's first one merged with its prepared parts, which `pending` gives up."""
    if not pending:
        return list(events)
    return [merge_pending(pending.pop(e.author, None), e) for e in events]


def stamped(
    events: Sequence[Event], pending: dict[str, Event], *, session_id: str, first: int, now: datetime
) -> list[Event]:
    """`events` as stored from `seq` `first` on, with their authors' prepared parts (`with_prepared`)."""
    merged = with_prepared(events, pending)
    return [stamp(e, session_id=session_id, seq=seq, now=now) for seq, e in enumerate(merged, first)]


def seq_taken(session_id: str) -> SessionBusy:
    """The error of an insert whose `seq` another writer took first (the unique key refused it)."""
    return SessionBusy(session_id, "another writer took the same seq")
