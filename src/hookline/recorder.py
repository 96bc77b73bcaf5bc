"""`Recorder`: the one sink through which a run writes its events.

It buffers events and, at the loop's flush points (before a model call, before tools
run, at the end), appends them to the session store in one transaction and hands the
stored events to a stream consumer. Without a store, events go straight to the stream.
Without either, the loop does not build status events at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Generator
from functools import partial
from typing import Any, Generic, TypeVar, cast

from hookline.events import Event
from hookline.messages import ReasoningPart, TextPart
from hookline.sessions import SessionStore

__all__ = ["Recorder"]

_T = TypeVar("_T")


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

    async def flush(self, *, state: dict[str, Any] | None = None) -> list[Event]:
        """Write buffered events in one transaction; return them as stored.

        With `state` (the run's last write), the session's saved state is replaced too, in
        the same transaction where the store can (`append_and_save_state`).

        A cancellation waits for the append to finish, so that what is on record is known
        (a transaction cut off by a cancel may or may not have committed). A failed append
        keeps the batch, so the run's last flush writes it with what came after, in order:
        a call's result is never stored without its call.
        """
        store, session_id = self.store, self.session_id
        if store is None or session_id is None or (not self._buffer and state is None):
            return []
        events, self._buffer = self._buffer, []
        if state is None:
            write = store.append_events(session_id, events)
        else:
            write = store.append_and_save_state(session_id, events, state)
        finishing = _Finishing(write)
        try:
            stored = await finishing
        except BaseException:
            self._buffer[:0] = events
            raise
        if self.queue is not None:
            for event in stored:
                if event.kind != "marker":
                    self.queue.put_nowait(event)
        if finishing.cancelled:
            raise asyncio.CancelledError
        return stored


class _Finishing(Generic[_T]):
    """Awaits a coroutine to its end even if the awaiting task is cancelled meanwhile.

    `asyncio.shield` would run it in a task of its own, and a flush is the hot path of a
    persisted run: here it runs in the awaiting task. The coroutine's own waits are left
    to it; the task waits on a stand-in for each, so a cancellation lands on the
    stand-in, never in the coroutine, and `cancelled` tells whether one came.
    """

    __slots__ = ("_coroutine", "cancelled")

    def __init__(self, coroutine: Coroutine[Any, Any, _T]) -> None:
        self._coroutine = coroutine
        self.cancelled = False

    def __await__(self) -> Generator[Any, None, _T]:
        while True:
            try:
                waited = self._coroutine.send(None)
            except StopIteration as done:
                return cast(_T, done.value)
            yield from self._until_done(waited)

    def _until_done(self, waited: asyncio.Future[Any] | None) -> Generator[Any, None, None]:
        """Wait until `waited` (what the coroutine awaits; None: one turn of the loop) is done."""
        if waited is None:  # a bare yield (`asyncio.sleep(0)`): the loop's next turn
            try:
                yield None
            except asyncio.CancelledError:
                self.cancelled = True
            return
        waited._asyncio_future_blocking = False  # as a task does with what it is given
        while not waited.done():
            stand_in: asyncio.Future[None] = waited.get_loop().create_future()
            waited.add_done_callback(partial(_settle, stand_in))
            try:
                yield from stand_in
            except asyncio.CancelledError:
                self.cancelled = True


def _settle(stand_in: asyncio.Future[None], _waited: object) -> None:
    if not stand_in.done():
        stand_in.set_result(None)
