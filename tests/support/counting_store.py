"""A real SQLite store that counts the events its reads answer: to test that a reader reads only what it needs."""

from __future__ import annotations

from typing import Any

from hookline.events import Event
from hookline.sessions import SQLiteSessionStore
from hookline.types import View


class CountingStore(SQLiteSessionStore):
    """A `SQLiteSessionStore` whose `read` counts the events `events` and `page` answered."""

    read = 0

    async def events(self, session_id: str, *, view: View = "all", after_seq: int = 0) -> list[Event]:
        """The store's answer, counted."""
        events = await super().events(session_id, view=view, after_seq=after_seq)
        self.read += len(events)
        return events

    async def page(self, session_id: str, **options: Any) -> list[Event]:
        """The store's answer, counted."""
        events = await super().page(session_id, **options)
        self.read += len(events)
        return events
