"""`Recorder`: the one sink through which a run writes its events.

It buffers events and, at the loop's flush points (before a model call, before tools
run, at the end), appends them to the session store in one transaction and hands the
stored events to a stream consumer. Without a store, events go straight to the stream.
Without either, the loop does not build status events at all.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hookline.events import Event
from hookline.messages import ReasoningPart, TextPart
from hookline.sessions import SessionStore

__all__ = ["Recorder"]


class Recorder:
    """Collects a run's events and delivers them to a store and/or a stream queue.

    Args:
        store: The session store, or None.
        session_id: The session written to (with a store).
        queue: Where `.stream()` reads events from, or None.
    """

    __slots__ = ("_buffer", "active", "queue", "session_id", "store")

    def __init__(
        self, store: SessionStore | None, session_id: str | None, queue: asyncio.Queue[Event | None] | None
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.queue = queue
        self.active = store is not None or queue is not None
        self._buffer: list[Event] = []

    def add(self, event: Event) -> None:
        """Record `event` at the next flush (at once when streaming without a store)."""
        if self.store is not None:
            self._buffer.append(event)
        elif self.queue is not None:
            self.queue.put_nowait(event)

    def delta(self, author: str, text: str) -> None:
        """Stream a text fragment (never stored)."""
        if self.queue is not None:
            self.queue.put_nowait(Event(author=author, kind="delta", parts=[TextPart(text=text)]))

    def reasoning_delta(self, author: str, text: str) -> None:
        """Stream a fragment of the model's reasoning (never stored): a `ReasoningPart`, `metadata["reasoning"]`."""
        if self.queue is not None:
            part = ReasoningPart(text=text)
            self.queue.put_nowait(Event(author=author, kind="delta", parts=[part], metadata={"reasoning": True}))

    async def flush(self) -> list[Event]:
        """Write buffered events in one transaction; return them as stored.

        A cancellation waits for the append to finish, so that what is on record is known
        (a transaction cut off by a cancel may or may not have committed). A failed append
        keeps the batch, so the run's last flush writes it with what came after, in order:
        a call's result is never stored without its call.
        """
        if not self._buffer or self.store is None or self.session_id is None:
            return []
        events, self._buffer = self._buffer, []
        append = asyncio.ensure_future(self.store.append_events(self.session_id, events))
        cancelled = await _wait_through_cancellation(append)
        try:
            stored = append.result()
        except BaseException:
            self._buffer[:0] = events
            raise
        if self.queue is not None:
            for event in stored:
                if event.kind != "marker":
                    self.queue.put_nowait(event)
        if cancelled:
            raise asyncio.CancelledError
        return stored


async def _wait_through_cancellation(task: asyncio.Future[Any]) -> bool:
    """Wait for `task` to finish even if the caller is cancelled meanwhile; return whether it was."""
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait((task,))
        except asyncio.CancelledError:
            cancelled = True
    return cancelled
