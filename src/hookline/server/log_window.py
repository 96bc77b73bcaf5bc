"""The server's reads of a session's log for its inspector and its links, each bounded: never whole at once.

The timeline, the traces and a model call read the latest `WINDOW` events (or those before
an event), a page at a time, and say when the log holds more before: a timeline or a trace
then starts at the first run that begins in the window, and a model call is rebuilt from the
messages the window holds. A case reads the log from its start, up to a limit; a walk of
the whole log (a session's links to its children) goes a page at a time; the last run's
bounds are read back from the log's end.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from hookline.events import Event, run_end
from hookline.sessions import SessionStore, pages_back
from hookline.types import View

__all__ = ["AFTER", "WINDOW", "events_before", "events_within", "last_run_bounds", "pages_of", "whole_runs"]

WINDOW = 5_000
"""How many events the inspector reads back at most for one answer."""
AFTER = 500
"""How many events after a model call's are read to find its answer and how its run went on."""
_PAGE = 1_000
"""Events read at a time: each page is decoded on the event loop, so none is long."""


async def events_before(
    store: SessionStore, session_id: str, before_seq: int | None = None
) -> tuple[list[Event], bool]:
    """The last `WINDOW` events of the `all` view before `before_seq` (None: to the log's end), in log order.

    Also whether they reach the log's start. When they do not, the event before them comes
    first, one more: `whole_runs` tells by it whether the window starts a run.
    """
    pages: list[list[Event]] = []
    held = 0
    while held < WINDOW + 1:
        asked = min(_PAGE, WINDOW + 1 - held)
        page = await store.page(session_id, view="all", before_seq=before_seq, limit=asked, newest=True)
        stored = [e for e in page if not e.partial]
        pages.append(page)
        held += len(stored)
        if len(stored) < asked or not stored or stored[0].seq == 1:
            return [e for p in reversed(pages) for e in p], True
        before_seq = stored[0].seq
    return [e for p in reversed(pages) for e in p], False


def whole_runs(events: list[Event]) -> list[Event]:
    """`events` (a window, after the event before it) from the first run that begins among them.

    A window that starts mid-run drops that run's end; one whose first event follows a run's
    end starts with the next run.
    """
    first_end = next((i for i, e in enumerate(events) if run_end(e) is not None), None)
    if first_end is None or first_end == len(events) - 1:
        return events  # one run longer than the window (or its end only): kept as it is
    return events[first_end + 1 :]


async def events_within(store: SessionStore, session_id: str, view: View, most: int) -> list[Event] | None:
    """The stored events of the session's `view`, read a page at a time; None once there are more than `most`."""
    events: list[Event] = []
    after = 0
    while True:
        limit = min(_PAGE, most + 1 - len(events))
        page = [e for e in await store.page(session_id, view=view, after_seq=after, limit=limit) if not e.partial]
        events += page
        if len(events) > most:
            return None
        if len(page) < limit:
            return events
        after = page[-1].seq or after


async def pages_of(store: SessionStore, session_id: str, view: View) -> AsyncIterator[list[Event]]:
    """The stored events of the session's `view`, from its start, a page at a time."""
    after = 0
    while True:
        page = [e for e in await store.page(session_id, view=view, after_seq=after, limit=_PAGE) if not e.partial]
        if page:
            yield page
        if len(page) < _PAGE:
            return
        after = page[-1].seq or after


async def last_run_bounds(store: SessionStore, session_id: str) -> tuple[int, Event] | None:
    """The log's last run: the seq after which it begins (the end of the run before it, or 0) and its end.

    None when no run ended yet. Read back from the log's end a page at a time, as far as the end before it.
    """
    ends: list[Event] = []  # the runs' ends, newest first
    async for page in pages_back(store, session_id, size=_PAGE):
        ends += [e for e in reversed(page) if run_end(e) is not None]
        if len(ends) > 1:
            break
    if not ends:
        return None
    return (ends[1].seq or 0 if len(ends) > 1 else 0), ends[0]
