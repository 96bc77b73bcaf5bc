"""`SessionHub`: one session's live events in this process, handed to every reader.

A session has one hub per server process while anything reads it or a run goes on in it.
What a run makes reaches the hub in the log's order, in two forms:

- **live**, before it is stored (`seq` None): text deltas (never stored), and what user
  code reports while it runs (a tool's progress, log records, hooks' and sub-agents'
  lines), with the `id` the store will keep;
- **stored**, with its `seq`: every event once it is on record, including the copies of
  those that came live.

The hub keeps the **tail**: the live events that no stored event covers yet (a line not
stored yet; the deltas of an answer whose message is not stored yet). A reader that joins
mid-answer starts from the tail, so it can rebuild the answer so far from deltas it never
saw. Deltas are covered by the next assistant message (live or stored) after them.

Readers (`Subscription`) are bounded: one that falls `limit` events behind is cut off; its
client reconnects with `Last-Event-ID` and catches up from the log. A reader bound to a run
ends with the run; a follower stays across runs until it leaves, the session is deleted or
the server stops.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
from itertools import count

from hookline.events import Event
from hookline.server.live_bus import LiveItem

__all__ = ["SessionHub", "Subscription", "covers_deltas"]

_serials = count(1)


def covers_deltas(event: Event) -> bool:
    """Whether `event` is an answer, which holds the text of the deltas before it."""
    return event.kind == "message" and event.role == "assistant"


class Subscription:
    """One reader of a session's events, in order; ends with the run (or for good, following), or when it lags.

    Args:
        hub: The hub it reads.
        limit: Events it may fall behind before it is cut off.
        follow: Stay across runs (else end when the current run does).
        tail: The live events it starts from (the hub's tail when it subscribed).
    """

    def __init__(self, hub: SessionHub, limit: int, *, follow: bool, tail: Iterable[LiveItem] = ()) -> None:
        self.hub = hub
        self.follow = follow
        self.tail = [item.event for item in tail]
        """The live events not yet stored when it subscribed (a late reader's start)."""
        self.tail_after = hub.committed
        """The last stored seq the hub had published when it subscribed."""
        self._limit = limit
        self._items: deque[Event] = deque()
        self._wake = asyncio.Event()
        self._closed = False
        self.lagged = False
        """True when this reader fell `limit` events behind and was cut off."""

    @property
    def closed(self) -> bool:
        """Whether it ended (its queued events may still be read)."""
        return self._closed

    def push(self, event: Event) -> None:
        """Queue `event` for this reader (cut it off if it is too far behind)."""
        if self._closed:
            return
        if len(self._items) >= self._limit:
            self.lagged = True
            self.close()
            return
        self._items.append(event)
        self._wake.set()

    def close(self) -> None:
        """End this subscription: `get` answers what is queued, then None."""
        self._closed = True
        self.hub.unsubscribe(self)
        self._wake.set()

    def take_queued(self) -> list[Event]:
        """Every event queued now, without waiting (the rest of a flush, to be written at once)."""
        items = list(self._items)
        self._items.clear()
        return items

    async def get(self, timeout: float | None = None) -> Event | None:
        """Return the next event, or None at the end; `TimeoutError` if none came within `timeout` s."""
        while not self._items:
            if self._closed:
                return None
            self._wake.clear()
            # Not `asyncio.wait_for`: on Python 3.11 it swallows a cancellation that lands as
            # an event comes, and a stream whose client left would write it and go on.
            async with asyncio.timeout(timeout):
                await self._wake.wait()
        return self._items.popleft()


class SessionHub:
    """The events of one session in this process: the tail, and every reader.

    Args:
        session_id: The session.
        limit: Events a reader may fall behind before it is cut off.
        on_idle: Called once no run goes on and nobody reads (the owner forgets the hub).
    """

    def __init__(self, session_id: str, *, limit: int, on_idle: Callable[[SessionHub], None]) -> None:
        self.session_id = session_id
        self.serial = next(_serials)
        """Tells this hub from the session's earlier hubs in this process (its live count starts anew)."""
        self.committed = 0
        """The highest seq published as stored."""
        self.running = False
        """Whether a run is going on (here, or elsewhere as its watcher sees it)."""
        self.on_live: Callable[[LiveItem], None] | None = None
        """Called with each live event (the bus to other processes, while one follows this session)."""
        self._limit = limit
        self._on_idle = on_idle
        self._live_count = 0
        self._tail: list[LiveItem] = []
        self._subscribers: set[Subscription] = set()

    @property
    def tail(self) -> list[LiveItem]:
        """The live events no stored event covers yet, in order."""
        return list(self._tail)

    @property
    def readers(self) -> int:
        """How many subscriptions read it."""
        return len(self._subscribers)

    @property
    def followed(self) -> bool:
        """Whether a reader follows it across runs."""
        return any(s.follow for s in self._subscribers)

    def subscribe(self, *, follow: bool = False) -> Subscription:
        """A reader of every event from now on, starting from the tail; one bound to a run that is over ends at once."""
        subscription = Subscription(self, self._limit, follow=follow, tail=self._tail)
        if follow or self.running:
            self._subscribers.add(subscription)
        else:
            subscription.close()
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        """Stop handing events to `subscription`."""
        self._subscribers.discard(subscription)
        self._check_idle()

    def publish(self, event: Event) -> None:
        """Hand `event` (live or stored) to every reader, and keep the tail."""
        if event.seq is None:
            self._live_count += 1
            item = LiveItem(self._live_count, self.committed, event)
            self._keep_live(item)
            if self.on_live is not None:
                self.on_live(item)
        else:
            self._settle(event)
        for subscription in list(self._subscribers):
            subscription.push(event)

    def _keep_live(self, item: LiveItem) -> None:
        if covers_deltas(item.event):
            self._drop_deltas()
        self._tail.append(item)

    def _settle(self, event: Event) -> None:
        self.committed = max(self.committed, event.seq or 0)
        if self._tail:
            if covers_deltas(event):
                self._drop_deltas()
            if event.id is not None:
                self._tail = [item for item in self._tail if item.event.id != event.id]

    def _drop_deltas(self) -> None:
        self._tail = [item for item in self._tail if item.event.kind != "delta"]

    def run_started(self) -> None:
        """A run began: readers bound to a run may subscribe."""
        self.running = True

    def run_ended(self) -> None:
        """The run is over: its readers' streams end (followers stay); what it left live is dropped."""
        self.running = False
        self._tail = []
        for subscription in [s for s in self._subscribers if not s.follow]:
            subscription.close()
        self._check_idle()

    def close_followers(self) -> None:
        """End the streams that follow the session across runs (the server stops)."""
        for subscription in [s for s in self._subscribers if s.follow]:
            subscription.close()

    def close(self) -> None:
        """End every reader's stream (the session is gone, or the server stops)."""
        self.running = False
        for subscription in list(self._subscribers):
            subscription.close()
        self._check_idle()

    def _check_idle(self) -> None:
        if not self.running and not self._subscribers:
            self._on_idle(self)
