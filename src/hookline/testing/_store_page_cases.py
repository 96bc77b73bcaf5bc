"""A session's log read a page at a time (`SessionStore.page`): bounded reads of a long session.

Part of `SessionStoreContract` (`hookline.testing.store_contract`). Each case writes its own
session; a page is checked against the same slice of the whole log (`events`), so a store's
own reading of pages can never drift from its log.
"""

from __future__ import annotations

import pytest

from hookline.errors import SessionNotFound
from hookline.events import Event
from hookline.sessions import SessionStore
from hookline.testing._store_cases import status, user_edit, user_says

__all__ = ["PageCases"]

_EVENTS = 25  # stored events of the session the cases page through (a marker every fifth)


async def _long_session(store: SessionStore) -> str:
    session = await store.create()
    for i in range(1, _EVENTS + 1):
        event = Event.marker("agent", turn=i) if i % 5 == 0 else user_says(f"m{i}") if i % 2 else status(f"s{i}")
        await store.append_event(session.id, event)
    await store.prepare_event(session.id, user_edit("c9", "draft.txt"))
    return session.id


def _seqs(events: list[Event]) -> list[int | None]:
    return [e.seq for e in events]


class PageCases:
    """The cases of reading a session's log a page at a time."""

    @pytest.mark.parametrize("view", ["all", "ui", "prompt"])
    async def test_pages_are_slices_of_the_log_in_order(self, store: SessionStore, view: str) -> None:
        """The first and the newest `limit` events of a range, in log order; the log's tail ends with partials."""
        session_id = await _long_session(store)
        whole = await store.events(session_id, view=view)  # type: ignore[arg-type]
        stored = [e for e in whole if not e.partial]
        partials = [e for e in whole if e.partial]
        first = await store.page(session_id, view=view, limit=4)  # type: ignore[arg-type]
        assert _seqs(first) == _seqs(stored[:4]), "the first page, without the partials (the log goes on)"
        newest = await store.page(session_id, view=view, limit=4, newest=True)  # type: ignore[arg-type]
        assert newest == stored[-4:] + partials, "the last page, ending with the partials"
        middle = stored[6].seq
        assert middle is not None
        older = await store.page(session_id, view=view, before_seq=middle, limit=3, newest=True)  # type: ignore[arg-type]
        assert _seqs(older) == _seqs(stored[3:6])
        after = await store.page(session_id, view=view, after_seq=middle, limit=1000)  # type: ignore[arg-type]
        assert after == [e for e in stored if (e.seq or 0) > middle] + partials, "a page to the end: the partials too"

    async def test_paging_through_the_log_reads_every_event_once(self, store: SessionStore) -> None:
        """Following the pages forward (after the last seq read) and backward (before the first) reads the whole log."""
        session_id = await _long_session(store)
        stored = [e for e in await store.events(session_id, view="ui") if not e.partial]
        forward, after = [], 0
        while page := [e for e in await store.page(session_id, view="ui", after_seq=after, limit=7) if not e.partial]:
            forward += page
            after = page[-1].seq or 0
        assert forward == stored
        backward: list[Event] = []
        before = None
        while page := [e for e in await store.page(session_id, view="ui", before_seq=before, limit=7, newest=True)
                       if not e.partial]:
            backward = page + backward
            before = page[0].seq
        assert backward == stored

    async def test_a_page_of_a_missing_session_or_a_bad_limit_says_so(self, store: SessionStore) -> None:
        """`SessionNotFound` for an unknown id; `ValueError` for a limit that is not a positive integer."""
        with pytest.raises(SessionNotFound):
            await store.page("no-such-session")
        session = await store.create()
        for limit in (0, -1, True):
            with pytest.raises(ValueError, match="positive integer"):
                await store.page(session.id, limit=limit)
