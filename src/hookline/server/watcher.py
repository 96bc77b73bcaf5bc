"""`LogWatcher`: a session's log followed for this process's readers, while its runs go on elsewhere.

A session's hub gets the events of a run in this process from the run itself. Runs of other
processes sharing the store reach it through a watcher, one per hub that has readers:

- **Stored events**, read from the log after its cursor: each time an append to the session
  is announced (PostgreSQL's NOTIFY at commit; a notification is only a wake-up, so one lost
  costs latency, never an event), or every `poll` seconds with a store that announces
  nothing (SQLite files that several processes share).
- **Live events** (deltas, tools' progress), from the process running the session over the
  bus (`live_bus.py`, PostgreSQL only), while this process asks for them.
- **The end of a run.** The log's last line of a run carries `metadata["run_end"]`; then,
  and after `idle` seconds without events, the watcher asks whether a run still holds the
  session's lock (PostgreSQL frees the lock of a process that died when its connection
  drops). Once none does, the readers bound to the run end (`SessionHub.run_ended`);
  followers stay, and the watcher waits for the next run.

It stands aside while a run of this process holds the session (that run feeds the hub), and
stops once the hub has no reader, or the session is deleted (its readers' streams end).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from contextlib import suppress

from hookline.errors import HooklineError, SessionNotFound
from hookline.events import Event, run_end
from hookline.server.hub import SessionHub, covers_deltas
from hookline.server.live_bus import LiveItem

__all__ = ["LogWatcher"]

logger = logging.getLogger("hookline.server")

_FIRST_PROBE = 0.005  # s: the first ask after a run's last line; it doubles up to `idle`
_IDS_KEPT = 2_000  # ids of stored events remembered, to drop live copies that come late


class LogWatcher:
    """Feeds a hub from the log (and the bus) while the session's runs go on in other processes.

    Args:
        hub: The hub it feeds.
        read: Reads the session's stored events after a seq.
        run_active: Asks whether a run holds the session, here or elsewhere.
        running_here: Whether a run of this process holds it now.
        idle: Seconds without events after which it asks whether the run still holds the session.
        poll: Seconds between reads of the log when nothing announces appends (None: wait for announcements).
        on_stop: Called once it stopped.
    """

    def __init__(
        self,
        hub: SessionHub,
        *,
        read: Callable[[str, int], Awaitable[list[Event]]],
        run_active: Callable[[str], Awaitable[bool]],
        running_here: Callable[[str], bool],
        idle: float,
        poll: float | None,
        on_stop: Callable[[LogWatcher], None],
    ) -> None:
        self.hub = hub
        self.cursor = hub.committed
        """The last seq read from the log (or published by a run of this process)."""
        self._read_log, self._run_active, self._running_here = read, run_active, running_here
        self._idle, self._poll, self._on_stop = idle, poll, on_stop
        self._wake = asyncio.Event()
        self._announced = 0
        self._end_heard = False
        self._stored_ids: set[str] = set()
        self._stored_order: deque[str] = deque()
        self._misses = 0
        self._last_answer = 0
        self._live_origin, self._live_n = "", 0
        self._task = asyncio.create_task(self._watch(), name=f"hookline-watch-{hub.session_id}")

    @property
    def session_id(self) -> str:
        """The session watched."""
        return self.hub.session_id

    def arm(self, stored: Iterable[Event]) -> None:
        """A reader read these stored events from the log: go on after them."""
        for event in stored:
            self._note_stored(event)

    def announced(self, seq: int) -> None:
        """An append up to `seq` committed: read the log."""
        if seq > self.cursor:
            self._announced = max(self._announced, seq)
            self._wake.set()

    def end_heard(self) -> None:
        """The process running the session said the run ended: ask whether the lock is free."""
        self._end_heard = True
        self._wake.set()

    def wake(self) -> None:
        """Read the log again (e.g. notifications may have been lost)."""
        self._announced = max(self._announced, self.cursor + 1)
        self._wake.set()

    def live(self, items: Iterable[tuple[str, LiveItem]]) -> None:
        """Publish the live events the running process sent (each with its hub), but those seen or read already.

        Seen: the hub's count is not past what came before. Read: the log gave it (by id), or
        the answer a delta belongs to.
        """
        if self._running_here(self.session_id):
            return
        for origin, item in items:
            if origin != self._live_origin:  # another hub (a new run, another process): its count starts anew
                self._live_origin, self._live_n = origin, 0
            if item.n <= self._live_n:
                continue
            self._live_n = item.n
            event = item.event
            if event.kind == "delta":
                if item.after < self._last_answer:
                    continue
            elif event.id in self._stored_ids:
                continue
            if not self.hub.running:
                self.hub.run_started()
            self.hub.publish(event)

    def stop(self) -> None:
        """Stop watching."""
        self._task.cancel()

    async def _watch(self) -> None:
        try:
            await self._follow()
        except SessionNotFound:
            self.hub.close()  # deleted while followed: the streams simply end
        except HooklineError as exc:
            logger.warning("stopped following session %s: %s", self.session_id, exc)
            self.hub.close()
        finally:
            if not self._running_here(self.session_id):
                self.hub.run_ended()  # as far as this process can tell: a reader bound to the run ends
            self._on_stop(self)

    async def _follow(self) -> None:
        loop = asyncio.get_running_loop()
        ask_at, step = loop.time(), 0.0  # ask at once: with no run going on, a reader bound to one ends here
        while self.hub.readers:
            if self._running_here(self.session_id):
                self.cursor = max(self.cursor, self.hub.committed)
                await self._sleep(self._idle)
                continue
            fresh = await self._read() if self._due() else []
            if fresh and not self.hub.running:
                self.hub.run_started()
                ask_at, step = loop.time() + self._idle, 0.0
            if self.hub.running:
                ask_at, step = await self._check_end(fresh, ask_at, step)
            pause = ask_at - loop.time() if self.hub.running else self._idle
            await self._sleep(min(pause, self._poll) if self._poll is not None else pause)

    async def _check_end(self, fresh: list[Event], ask_at: float, step: float) -> tuple[float, float]:
        """Ask whether the run still holds the session when it is time to; end its readers if not."""
        now = asyncio.get_running_loop().time()
        if self._end_heard or any(run_end(e) is not None for e in fresh):
            # The lock goes a moment after the last line: ask now, then after 5, 10, 20 ms ...
            self._end_heard, ask_at, step = False, now, _FIRST_PROBE
        elif fresh:
            return now + self._idle, 0.0  # the run is alive: no need to ask
        if now < ask_at:
            return ask_at, step
        if not await self._run_active(self.session_id):
            await self._read()
            self.hub.run_ended()
            return now + self._idle, 0.0
        step = min(step * 2, self._idle) if step else self._idle
        return asyncio.get_running_loop().time() + step, step

    def _due(self) -> bool:
        """Whether to read the log now: an append was announced, or nothing announces them."""
        return self._poll is not None or self._announced > self.cursor

    async def _sleep(self, timeout: float) -> None:
        """Wait for a wake-up, or `timeout` s."""
        if self._announced > self.cursor:  # announced, yet not read: read again soon
            timeout = min(timeout, _FIRST_PROBE)
        if timeout > 0 and not self._wake.is_set():
            # Not `asyncio.wait_for`: on Python 3.11 it swallows a `stop` that lands as an
            # append is announced, and the stopped watcher would go on reading the log.
            with suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._wake.wait()
        self._wake.clear()

    async def _read(self) -> list[Event]:
        events = await self._read_log(self.session_id, self.cursor)
        fresh = [e for e in events if e.seq is not None and e.seq > self.cursor and not e.partial]
        for event in fresh:
            self._note_stored(event)
            self.hub.publish(event)
        if self._announced > self.cursor:  # not there yet: read once more, then let it go
            self._misses += 1
            if self._misses > 1:
                self._announced, self._misses = self.cursor, 0
        return fresh

    def _note_stored(self, event: Event) -> None:
        if event.seq is None or event.partial:
            return
        self.cursor = max(self.cursor, event.seq)
        if event.id is not None and event.id not in self._stored_ids:
            self._stored_ids.add(event.id)
            self._stored_order.append(event.id)
            if len(self._stored_order) > _IDS_KEPT:
                self._stored_ids.discard(self._stored_order.popleft())
        if covers_deltas(event):
            self._last_answer = max(self._last_answer, event.seq)
