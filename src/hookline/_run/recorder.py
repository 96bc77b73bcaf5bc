"""`Recorder`: the one sink through which a run writes its events.

It buffers events and, at the loop's flush points (before a model call, before tools
run, at the end), appends them to the session store in one transaction and hands the
stored events to the run's stream. Without a store, events go straight to the stream.
Without either, the loop does not build status events at all.

With a store, what user code reports while it runs (a tool's status lines and partial
results, log records, a hook's lines, a sub-agent's lines) cannot wait for the next flush:
a tool may run for minutes. `add_now` streams such an event at once, with the events
buffered before it, so the stream keeps the log's order. Those go out before they are
stored (`seq` None, and an `id` the store keeps); at the flush, the stream gets the stored
copies only when it asked for them (`StreamQueue(commits=True)`: a relay that serves
reconnecting clients needs to learn their `seq`).
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import Callable, Coroutine, Generator
from functools import partial
from itertools import count
from typing import Any, Generic, TypeVar, cast

from hookline._hot_path import set_field
from hookline.events import Event
from hookline.messages import ReasoningPart
from hookline.sessions import SessionStore
from hookline.sessions.base import LastWrite

__all__ = ["Recorder", "StreamQueue"]

_T = TypeVar("_T")


class StreamQueue:
    """Hands a run's events to the task reading its stream; `None` ends it.

    Lighter than `asyncio.Queue`: the run only appends, and the reader takes everything
    there is at each wake-up (`take`).

    Args:
        commits: Also hand over the stored copy of each event streamed before it was
            stored, at the flush that stores it (with its `seq`; same `id`).
    """

    __slots__ = ("_items", "_waiter", "commits")

    def __init__(self, *, commits: bool = False) -> None:
        self.commits = commits
        self._items: deque[Event | None] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put(self, item: Event | None) -> None:
        """Queue `item` (from the run's event loop)."""
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def take(self) -> list[Event | None]:
        """Wait for items; return all of them, in order."""
        while not self._items:
            self._waiter = waiter = asyncio.get_running_loop().create_future()
            await waiter
        items = list(self._items)
        self._items.clear()
        return items


class Recorder:
    """Collects a run's events and delivers them to a store and/or a stream.

    Args:
        store: The session store, or None.
        session_id: The session written to (with a store).
        queue: Where `.stream()` reads events from, or None.
    """

    __slots__ = ("_buffer", "_ids", "_live", "_sent", "active", "add", "last_write", "queue", "session_id", "store")

    def __init__(self, store: SessionStore | None, session_id: str | None, queue: StreamQueue | None) -> None:
        self.store = store
        self.session_id = session_id
        self.queue = queue
        self.active = store is not None or queue is not None
        self.add: Callable[[Event], None] = queue.put if store is None and queue is not None else self._buffered
        """Record an event at the next flush (at once when streaming without a store): the queue's
        own `put` then, since a streamed run records a few events a turn."""
        self._buffer: list[Event] = []
        self._sent = 0  # how many buffered events went out live (a prefix: the stream keeps the log's order)
        self._live: set[str] = set()  # the ids of events streamed before they were stored
        self._ids: Any = None  # this run's event ids, made on first use
        self.last_write: LastWrite | None = None
        """The run's last write, with its state (`RunHold.finish`); None: `store.append_and_save_state`."""

    def _buffered(self, event: Event) -> None:
        if self.store is not None:
            self._buffer.append(event)

    def add_now(self, event: Event) -> None:
        """Record `event` at the next flush, and stream it (with what is buffered before it) at once."""
        if self.store is None:
            if self.queue is not None:
                self.queue.put(event)
            return
        self._buffer.append(event)
        if self.queue is not None:
            self._stream_buffered()

    def delta(self, author: str, text: str, answer_id: str | None) -> None:
        """Stream a text fragment (never stored) of the answer whose message will keep `answer_id`."""
        if self.queue is not None:
            self.queue.put(Event.text_delta(author, text, answer_id))

    def reasoning_delta(self, author: str, text: str, answer_id: str | None) -> None:
        """Stream a fragment of the model's reasoning (never stored): a `ReasoningPart`, `metadata["reasoning"]`."""
        if self.queue is not None:
            part = ReasoningPart(text=text)
            self.queue.put(Event(id=answer_id, author=author, kind="delta", parts=[part], metadata={"reasoning": True}))

    def _stream_buffered(self) -> None:
        assert self.queue is not None
        buffer = self._buffer
        for event in buffer[self._sent:]:
            if event.kind == "marker":
                continue
            if event.id is None:
                set_field(event, "id", self.new_id())
            self._live.add(event.id)  # type: ignore[arg-type]  # set just above
            self.queue.put(event)
        self._sent = len(buffer)

    def new_id(self) -> str:
        """A fresh event id: this run's random prefix and a counter (unique as a uuid4, cheaper)."""
        if self._ids is None:
            self._ids = map(f"{os.urandom(12).hex()}{{:08x}}".format, count())
        return cast(str, next(self._ids))

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
        events, self._buffer, self._sent = self._buffer, [], 0
        if state is None:
            write = store.append_events(session_id, events)
        elif self.last_write is not None:
            write = self.last_write(events, state)
        else:
            write = store.append_and_save_state(session_id, events, state)
        finishing = _Finishing(write)
        try:
            stored = await finishing
        except BaseException:
            self._keep(events)
            raise
        if self.queue is not None:
            self._stream_stored(stored)
        if finishing.cancelled:
            raise asyncio.CancelledError
        return stored

    def _keep(self, events: list[Event]) -> None:
        """After a failed append: `events` go back before what came meanwhile, still marked as streamed or not."""
        buffer = self._buffer = events + self._buffer
        live = self._live
        self._sent = next((i + 1 for i in range(len(buffer) - 1, -1, -1) if buffer[i].id in live), 0)

    def _stream_stored(self, stored: list[Event]) -> None:
        queue, live = cast(StreamQueue, self.queue), self._live
        for event in stored:
            if event.kind == "marker":
                continue
            if live and event.id in live:
                live.discard(event.id)
                if not queue.commits:
                    continue
            queue.put(event)


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
