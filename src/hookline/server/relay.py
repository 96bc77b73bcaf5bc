"""Runs of other server processes: following their events live, cancelling them.

Several processes may share one PostgreSQL store. A `Relay` (one per app) connects this
process to the others through the store's database (`hookline.sessions._notify`):

- **Following.** A reader of `/events/stream` on a session whose run goes on elsewhere
  gets a `Feed`: a `RunChannel` fed from the log, not from the run. One feed per session
  and process, whatever its readers: it reads the log after its cursor each time an
  append to the session is announced (NOTIFY at commit), and publishes what it read. A
  notification is only a wake-up, so one lost costs latency, never an event.
- **The end of a run.** A feed ends once the session's run lock is free (`run_active`,
  which reads `pg_locks`), then reads the log a last time. It asks at once when it
  starts (no run: the stream holds the stored events and ends), within milliseconds of
  the run's last line (`run completed`, `run cancelled`, ...) or of the running
  process's `end` message, and after `idle` seconds without any event (a run whose
  process died: PostgreSQL frees its lock when its connection drops). So a stream never
  outlives its run by more than `idle` seconds plus the time PostgreSQL takes to notice
  a dead connection (at once for a killed process; TCP keepalive for a lost host).
- **Cancel.** `cancel` cancels a run of this process directly. Otherwise, if a run lock is
  held, it sends `cancel <id>` on the control channel; the process running the session
  cancels it and answers `ack <id>`. No answer within `ack_timeout` seconds while the
  lock stays held means the holder takes no requests (a library or CLI run, or a process
  cut off from the database): that is `SessionBusy` (409), not a false 202.

Without PostgreSQL (SQLite, memory) there is no bus: streams follow only this process's
runs, and a cancel reaches only them; a session a run holds in another process (SQLite
leases are shared by the processes of one host) answers 409, saying so.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from contextlib import suppress
from typing import Any

from hookline.errors import HooklineError, SessionBusy, SessionNotFound
from hookline.events import Event
from hookline.server.runs import RunChannel, RunManager, Subscription
from hookline.sessions import SessionStore

__all__ = ["Feed", "Relay", "ends_run"]

logger = logging.getLogger("hookline.server")

_FIRST_PROBE = 0.005  # s: the first ask after a run's last line; it doubles up to `idle`
_RUN_ENDS = frozenset(f"run {reason}" for reason in
                      ("completed", "hook_exit", "interrupted", "max_turns", "cancelled", "failed"))
_ELSEWHERE = ("a run holds it in another process, which this store cannot reach (only PostgreSQL relays cancel "
              "requests between processes); cancel it through the process running it")
_NO_ANSWER = ("a run holds it, and no server process took the cancel request: the run belongs to a process that "
              "takes none (a library or CLI run), or one cut off from the database; stop it there")


def ends_run(event: Event) -> bool:
    """Whether `event` is the last line a run records ("run completed", "run cancelled", ...)."""
    return event.kind == "status" and event.source == "agent" and event.text in _RUN_ENDS


def _postgres(store: SessionStore) -> Any:
    """The store if it is a `PostgresSessionStore` (without importing asyncpg for other stores), else None."""
    module = sys.modules.get("hookline.sessions.postgres")
    return store if module is not None and isinstance(store, module.PostgresSessionStore) else None


class Feed(RunChannel):
    """The events of a session's run in another process, read from the log, for this process's readers.

    It starts once a first reader `arm`s it with the last seq that reader read from the log
    (readers subscribe before they read, so each event after that seq reaches them from
    here, and the overlap is dropped by seq). It ends when the run has, or when its last
    reader leaves.
    """

    def __init__(self, session_id: str, relay: Relay, *, limit: int, idle: float) -> None:
        super().__init__(session_id, limit=limit)
        self.cursor = -1
        """The last seq read from the log (-1: not armed yet)."""
        self._relay = relay
        self._idle = idle
        self._wake = asyncio.Event()
        self._armed = asyncio.Event()
        self._announced = 0
        self._end_heard = False
        self._task = asyncio.create_task(self._watch(), name=f"hookline-feed-{session_id}")

    def arm(self, seq: int) -> None:
        """Start reading the log after `seq` (only the first call counts)."""
        if not self._armed.is_set():
            self.cursor = seq
            self._armed.set()

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
        self._wake.set()

    def unsubscribe(self, subscription: Subscription) -> None:
        """Stop handing events to `subscription`; with no reader left, stop."""
        super().unsubscribe(subscription)
        if not self._subscribers and not self.finished:
            self.stop()

    def stop(self) -> None:
        """End the feed and its readers' streams now."""
        self._task.cancel()
        self._relay.forget(self)
        self.finish()

    async def _watch(self) -> None:
        try:
            await self._armed.wait()
            await self._follow()
        except SessionNotFound:
            pass  # deleted while followed: the stream simply ends
        except HooklineError as exc:
            logger.warning("stopped following session %s: %s", self.session_id, exc)
        finally:
            self._relay.forget(self)
            self.finish()

    async def _follow(self) -> None:
        loop = asyncio.get_running_loop()
        ask_at, step = loop.time(), 0.0  # ask at once: with no run going on, the stream ends here
        while True:
            fresh = await self._read()
            if self._end_heard or any(map(ends_run, fresh)):
                # The lock goes a moment after the last line: ask now, then after 5, 10, 20 ms ...
                self._end_heard, ask_at, step = False, loop.time(), _FIRST_PROBE
            elif fresh:
                ask_at, step = loop.time() + self._idle, 0.0  # the run is alive: no need to ask
            if loop.time() >= ask_at:
                if not await self._relay.run_active(self.session_id):
                    await self._read()
                    return
                step = min(step * 2, self._idle) if step else self._idle
                ask_at = loop.time() + step
            await self._sleep(ask_at - loop.time())

    async def _sleep(self, timeout: float) -> None:
        """Wait for a wake-up, or `timeout` s."""
        if self._announced > self.cursor:  # announced, yet not read: read once more, soon
            self._announced = self.cursor
            timeout = min(timeout, _FIRST_PROBE)
        if timeout > 0 and not self._wake.is_set():
            # Not `asyncio.wait_for`: on Python 3.11 it swallows a `stop` that lands as an
            # append is announced, and the stopped feed would go on reading the log.
            with suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._wake.wait()
        self._wake.clear()

    async def _read(self) -> list[Event]:
        events = await self._relay.read(self.session_id, self.cursor)
        fresh = [e for e in events if e.seq is not None and e.seq > self.cursor and not e.partial]
        for event in fresh:
            self.cursor = event.seq  # type: ignore[assignment]  # not None: filtered above
            self.publish(event)
        return fresh


class Relay:
    """This process's link to the other server processes of a shared store.

    Args:
        store: The session store; only a `PostgresSessionStore` links processes.
        runs: This process's runs.
        idle: Seconds without events after which a feed asks whether its run still holds
            the session (the bound on how long a stream outlives a dead process's run).
        ack_timeout: Seconds a cancel request waits for the running process's answer.

    """

    def __init__(self, store: SessionStore, runs: RunManager, *, idle: float = 1.0, ack_timeout: float = 1.0) -> None:
        self.store = store
        """The session store."""
        self._runs = runs
        self._idle = idle
        self._ack_timeout = ack_timeout
        self._feeds: dict[str, Feed] = {}
        self._acks: dict[str, set[asyncio.Future[None]]] = {}
        self._sends: set[asyncio.Task[None]] = set()
        self._notifier: Any = None
        self._postgres = _postgres(store)
        runs.when_finished(self._run_ended)
        runs.when_closing(self.close_feeds)

    def start(self) -> None:
        """Start listening to the other processes (PostgreSQL only; it connects in the background)."""
        if self._postgres is None or self._notifier is not None:
            return
        from hookline.sessions._notify import Notifier

        self._notifier = notifier = Notifier(self._postgres.dsn, where=self._postgres.where)
        notifier.on_event, notifier.on_control, notifier.on_reconnect = self._heard_event, self._heard, self._wake_all
        notifier.start()

    async def aclose(self) -> None:
        """End every feed, stop listening, and let the last messages go out."""
        self.close_feeds()
        if self._sends:
            await asyncio.wait(set(self._sends), timeout=1.0)
        if self._notifier is not None:
            await self._notifier.aclose()

    # -- following ------------------------------------------------------------------------------

    def follow(self, session_id: str) -> Feed | None:
        """Return the feed of `session_id` for one more reader (None without a shared store)."""
        if self._postgres is None:
            return None
        feed = self._feeds.get(session_id)
        if feed is None or feed.finished:
            feed = self._feeds[session_id] = Feed(session_id, self, limit=self._runs.subscriber_limit,
                                                 idle=self._idle)
        return feed

    def forget(self, feed: Feed) -> None:
        """Drop `feed` from the feeds (it has ended)."""
        if self._feeds.get(feed.session_id) is feed:
            del self._feeds[feed.session_id]

    def close_feeds(self) -> None:
        """End every feed (the server is stopping): their readers' streams end; clients reconnect elsewhere."""
        for feed in list(self._feeds.values()):
            feed.stop()

    async def read(self, session_id: str, after_seq: int) -> list[Event]:
        """The stored events of `session_id` above `after_seq` (PostgreSQL: in one statement)."""
        if self._postgres is not None:
            return list(await self._postgres.events_after(session_id, after_seq))
        return await self.store.events(session_id, view="all", after_seq=after_seq)

    async def run_active(self, session_id: str) -> bool:
        """Whether a run holds `session_id`, in this process or any other."""
        if self._runs.get(session_id) is not None:
            return True
        if self._postgres is not None:
            return bool(await self._postgres.run_active(session_id))
        return await _lock_held(self.store, session_id)

    # -- cancelling -----------------------------------------------------------------------------

    async def cancel(self, session_id: str) -> bool:
        """Cancel the run going on in `session_id`, wherever it runs; return False when none runs.

        Raises:
            SessionBusy: A run holds the session, but nothing took the request.
            StoreError: The database failed.

        """
        if self._runs.cancel(session_id):
            return True
        if self._postgres is None:
            if await _lock_held(self.store, session_id):
                raise SessionBusy(session_id, _ELSEWHERE)
            return False
        if not await self._postgres.run_active(session_id):
            return False
        if self._notifier is not None and await self._ask_cancel(session_id):
            return True
        if not await self._postgres.run_active(session_id):
            return False  # it ended meanwhile
        raise SessionBusy(session_id, _NO_ANSWER)

    async def _ask_cancel(self, session_id: str) -> bool:
        answered: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiting = self._acks.setdefault(session_id, set())
        waiting.add(answered)
        try:
            await self._notifier.send("cancel", session_id, timeout=self._ack_timeout)
            await asyncio.wait_for(answered, self._ack_timeout)
        except TimeoutError:
            return False
        finally:
            waiting.discard(answered)
            if not waiting:
                self._acks.pop(session_id, None)
        return True

    # -- what the other processes say ------------------------------------------------------------

    def _heard_event(self, session_id: str, seq: int) -> None:
        feed = self._feeds.get(session_id)
        if feed is not None:
            feed.announced(seq)

    def _heard(self, verb: str, session_id: str) -> None:
        if verb == "cancel" and self._runs.cancel(session_id):
            self._send("ack", session_id)
        elif verb == "ack":
            for answered in self._acks.get(session_id, ()):
                if not answered.done():
                    answered.set_result(None)
        elif verb == "end" and session_id in self._feeds:
            self._feeds[session_id].end_heard()

    def _wake_all(self) -> None:
        for feed in self._feeds.values():
            feed.wake()

    def _run_ended(self, session_id: str) -> None:
        if self._notifier is not None:
            self._send("end", session_id)

    def _send(self, verb: str, session_id: str) -> None:
        task = asyncio.create_task(self._send_now(verb, session_id))
        self._sends.add(task)
        task.add_done_callback(self._sends.discard)

    async def _send_now(self, verb: str, session_id: str) -> None:
        try:
            await self._notifier.send(verb, session_id)
        except (HooklineError, ValueError) as exc:
            logger.warning("could not tell the other processes %r about session %s: %s", verb, session_id, exc)


async def _lock_held(store: SessionStore, session_id: str) -> bool:
    """Whether a run holds `session_id` in the store, asked by taking its run lock for an instant."""
    try:
        async with store.run_lock(session_id, timeout=0.0):
            return False
    except SessionBusy:
        return True

