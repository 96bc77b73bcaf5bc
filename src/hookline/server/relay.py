"""Runs of other processes: following their events live, cancelling them.

Several processes may share one store. A `Relay` (one per app) links this process's hubs
to the runs of the others:

- **Following.** A hub with readers and no run of this process gets a `LogWatcher`
  (`watcher.py`): stored events from the log, and, with PostgreSQL, live events over the
  bus (`live_bus.py`). While its readers read, this process asks the others on the control
  channel to stream the session's live events to it (`follow:<its origin> <id>`, renewed
  every `renew` seconds); the process running the session sends its tail, then each live event, until
  the asks stop coming (three `renew`s). With SQLite the watcher polls the log (runs of the
  host's other processes, e.g. the CLI, show as their events are stored); the in-memory
  store has no other process.
- **Cancel.** `cancel` cancels a run of this process directly. Otherwise, if a run lock is
  held, it sends `cancel <id>` on the control channel; the process running the session
  cancels it and answers `ack <id>`. No answer within `ack_timeout` seconds while the lock
  stays held means the holder takes no requests (a library or CLI run, or a process cut off
  from the database): that is `SessionBusy` (409), not a false 202.
- **The end of a run and of a session.** A process tells the others `end <id>` when a run
  of its own ended (their watchers ask at once whether the lock is free) and `deleted <id>`
  when it deleted a session (their readers' streams end).

Without PostgreSQL there is no bus: a cancel reaches only this process's runs; a session a
run holds in another process (SQLite leases are shared by the processes of one host)
answers 409, saying so.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from functools import partial
from typing import Any

from hookline.errors import HooklineError, SessionBusy
from hookline.events import Event
from hookline.server.hub import SessionHub
from hookline.server.live_bus import LiveBus, LiveItem
from hookline.server.runs import RunManager
from hookline.server.watcher import LogWatcher
from hookline.sessions import SessionStore

__all__ = ["Relay"]

logger = logging.getLogger("hookline.server")

_ELSEWHERE = ("a run holds it in another process, which this store cannot reach (only PostgreSQL relays cancel "
              "requests between processes); cancel it through the process running it")
_NO_ANSWER = ("a run holds it, and no server process took the cancel request: the run belongs to a process that "
              "takes none (a library or CLI run), or one cut off from the database; stop it there")


def _store_of(store: SessionStore, module: str, name: str) -> Any:
    """`store` if it is `module.name` (without importing the module for other stores), else None."""
    loaded = sys.modules.get(f"hookline.sessions.{module}")
    return store if loaded is not None and isinstance(store, getattr(loaded, name)) else None


class Relay:
    """This process's link to the other processes of a shared store.

    Args:
        store: The session store; only a `PostgresSessionStore` carries messages between processes.
        runs: This process's runs and hubs.
        idle: Seconds without events after which a watcher asks whether its run still holds the
            session (the bound on how long a reader outlives a dead process's run).
        ack_timeout: Seconds a cancel request waits for the running process's answer.
        poll: Seconds between a watcher's reads of a log that nothing announces appends of (SQLite).
        renew: Seconds between the asks of a process whose readers follow a session.

    """

    def __init__(
        self, store: SessionStore, runs: RunManager, *, idle: float = 1.0, ack_timeout: float = 1.0,
        poll: float = 0.25, renew: float = 2.0,
    ) -> None:
        self.store = store
        """The session store."""
        self._runs = runs
        self._idle, self._ack_timeout, self._renew = idle, ack_timeout, renew
        self._watchers: dict[str, LogWatcher] = {}
        self._acks: dict[str, set[asyncio.Future[None]]] = {}
        self._sends: set[asyncio.Task[None]] = set()
        self._followed: dict[str, float] = {}  # session -> when other processes' asks lapse
        self._notifier: Any = None
        self._bus: LiveBus | None = None
        self._renewing: asyncio.Task[None] | None = None
        self._origin = f"{os.getpid():x}.{os.urandom(4).hex()}"
        self._follow_verb = f"follow:{self._origin}"
        self._postgres = _store_of(store, "postgres", "PostgresSessionStore")
        in_memory = _store_of(store, "memory", "InMemorySessionStore") is not None
        self._poll: float | None = None if self._postgres is not None or in_memory else poll
        self._watches = not in_memory
        runs.when_started(self._run_started)
        runs.when_finished(self._run_ended)
        runs.when_closing(self.stop_watching)
        runs.when_idle(self._hub_idle)

    def start(self) -> None:
        """Start listening to the other processes (PostgreSQL only; it connects in the background)."""
        if self._postgres is None or self._notifier is not None:
            return
        from hookline.sessions._notify import MAX_PAYLOAD, Notifier

        self._notifier = notifier = Notifier(self._postgres.dsn, where=self._postgres.where)
        notifier.on_event, notifier.on_control, notifier.on_reconnect = self._heard_event, self._heard, self._wake_all
        notifier.on_live = self._heard_live
        self._bus = LiveBus(notifier.send_live, max_payload=MAX_PAYLOAD)
        notifier.start()
        self._renewing = asyncio.create_task(self._renew_asks(), name="hookline-follow-asks")

    async def aclose(self) -> None:
        """Stop every watcher, stop listening, and let the last messages go out."""
        self.stop_watching()
        if self._renewing is not None:
            self._renewing.cancel()
        if self._bus is not None:
            await self._bus.aclose()
        if self._sends:
            await asyncio.wait(set(self._sends), timeout=1.0)
        if self._notifier is not None:
            await self._notifier.aclose()

    # -- following ------------------------------------------------------------------------------

    def watch(self, hub: SessionHub, stored: list[Event]) -> None:
        """Feed `hub` from the runs of other processes (a reader read `stored` from the log); no-op in memory."""
        if not self._watches:
            return
        watcher = self._watchers.get(hub.session_id)
        if watcher is None or watcher.hub is not hub:
            watcher = self._watchers[hub.session_id] = LogWatcher(
                hub, read=self.read, run_active=self.run_active, running_here=self._running_here, idle=self._idle,
                poll=self._poll, on_stop=self._forget)
            if self._notifier is not None:
                self._send(self._follow_verb, hub.session_id)
        watcher.arm(stored)

    def stop_watching(self) -> None:
        """Stop every watcher (the server is stopping)."""
        for watcher in list(self._watchers.values()):
            watcher.stop()

    def _hub_idle(self, hub: SessionHub) -> None:
        watcher = self._watchers.get(hub.session_id)
        if watcher is not None and watcher.hub is hub:
            watcher.stop()

    def _forget(self, watcher: LogWatcher) -> None:
        if self._watchers.get(watcher.session_id) is watcher:
            del self._watchers[watcher.session_id]

    def _running_here(self, session_id: str) -> bool:
        return self._runs.get(session_id) is not None

    async def read(self, session_id: str, after_seq: int) -> list[Event]:
        """The stored events of `session_id` above `after_seq` (PostgreSQL: in one statement)."""
        if self._postgres is not None:
            return list(await self._postgres.events_after(session_id, after_seq))
        return await self.store.events(session_id, view="all", after_seq=after_seq)

    async def run_active(self, session_id: str) -> bool:
        """Whether a run holds `session_id`, in this process or any other."""
        return self._runs.get(session_id) is not None or await self.store.run_active(session_id)

    def session_deleted(self, session_id: str) -> None:
        """`session_id` was deleted here: end its readers' streams, here and in the other processes."""
        self._runs.close_session(session_id)
        if self._notifier is not None:
            self._send("deleted", session_id)

    async def _renew_asks(self) -> None:
        while True:
            await asyncio.sleep(self._renew)
            for session_id in list(self._watchers):
                self._send(self._follow_verb, session_id)

    # -- live events to the others ----------------------------------------------------------

    def _run_started(self, session_id: str) -> None:
        if self._followed.get(session_id, 0.0) > asyncio.get_running_loop().time():
            self._stream_to_others(session_id)

    def _stream_to_others(self, session_id: str) -> None:
        """Send the live events of a run of this process to the other processes, from its tail on."""
        hub, bus = self._runs.known_hub(session_id), self._bus
        if hub is None or bus is None or self._runs.get(session_id) is None:
            return
        if hub.on_live is None:
            hub.on_live = partial(self._forward, hub)
        for item in hub.tail:
            bus.send(session_id, self._hub_origin(hub), item)

    def _forward(self, hub: SessionHub, item: LiveItem) -> None:
        session_id = hub.session_id
        if self._followed.get(session_id, 0.0) < asyncio.get_running_loop().time():
            hub.on_live = None  # nobody asks any more
            self._followed.pop(session_id, None)
        elif self._bus is not None:
            self._bus.send(session_id, self._hub_origin(hub), item)

    def _hub_origin(self, hub: SessionHub) -> str:
        return f"{self._origin}.{hub.serial}"

    # -- cancelling -----------------------------------------------------------------------------

    async def cancel(self, session_id: str) -> bool:
        """Cancel the run going on in `session_id`, wherever it runs; return False when none runs.

        Raises:
            SessionBusy: A run holds the session, but nothing took the request.
            StoreError: The database failed.

        """
        if self._runs.cancel(session_id):
            return True
        if not await self.store.run_active(session_id):
            return False
        if self._postgres is None:
            raise SessionBusy(session_id, _ELSEWHERE)
        if self._notifier is not None and await self._ask_cancel(session_id):
            return True
        if not await self.store.run_active(session_id):
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
        watcher = self._watchers.get(session_id)
        if watcher is not None:
            watcher.announced(seq)

    def _heard_live(self, session_id: str, text: str) -> None:
        watcher, bus = self._watchers.get(session_id), self._bus
        if watcher is None or bus is None:
            return
        try:
            items = bus.heard(text)
        except (ValueError, KeyError, TypeError) as exc:
            logger.warning("ignored a live message for session %s that could not be read: %s", session_id, exc)
            return
        watcher.live(items)

    def _heard(self, verb: str, session_id: str) -> None:
        if verb == "cancel" and self._runs.cancel(session_id):
            self._send("ack", session_id)
        elif verb == "ack":
            for answered in self._acks.get(session_id, ()):
                if not answered.done():
                    answered.set_result(None)
        elif verb == "end" and session_id in self._watchers:
            self._watchers[session_id].end_heard()
        elif verb.startswith("follow:") and verb != self._follow_verb:  # asked by another process
            self._followed[session_id] = asyncio.get_running_loop().time() + 3 * self._renew
            self._stream_to_others(session_id)
        elif verb == "deleted":
            self._runs.close_session(session_id)

    def _wake_all(self) -> None:
        for watcher in self._watchers.values():
            watcher.wake()

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

