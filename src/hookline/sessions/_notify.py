"""The bus between processes sharing a PostgreSQL store: one LISTEN connection per process.

`PostgresSessionStore.append_events` announces every append on `hookline_events` at its
commit (payload `"<last seq>:<session id>"`). A `Notifier` listens to that channel, to
`hookline_control`, where processes tell each other `"<verb> <session id>"` (a cancel
request, its acknowledgement, a run's end, a wish to follow a session), and to
`hookline_live`, where a process running a session sends what it streams before it is
stored (the session's id, a newline, then the text: see `hookline.server.live_bus`); it
hands what it hears to callbacks.

It is a hint, never the data: a reader woken by a notification reads the log, so a lost
notification (a dropped connection, a process starting) costs latency, never an event.
The connection is its own, outside the store's pools, and comes back by itself: the
supervisor reconnects with a growing pause (0.1 s to 5 s) and, once back, calls
`on_reconnect` so that readers read the log again for what they may have missed. A ping
every `ping_every` seconds notices a connection that died silently.

PostgreSQL delivers notifications in commit order to every listening connection of the
database, and drops repeats of the same payload within one transaction. Messages name the
database as `host:port/db`, never with its credentials.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type information

from hookline.errors import StoreError
from hookline.sessions.postgres import EVENTS_CHANNEL

__all__ = ["CONTROL_CHANNEL", "EVENTS_CHANNEL", "LIVE_CHANNEL", "MAX_PAYLOAD", "Notifier"]

CONTROL_CHANNEL = "hookline_control"
"""The NOTIFY channel of requests between processes: `"<verb> <session id>"`."""

LIVE_CHANNEL = "hookline_live"
"""The NOTIFY channel of live events between processes: the session's id, a newline, the text."""

MAX_PAYLOAD = 7_900
"""The longest payload sent, in bytes: PostgreSQL refuses one of 8000 or more."""
_SETTINGS = {"application_name": "hookline-listen"}
_FIRST_PAUSE, _LONGEST_PAUSE = 0.1, 5.0
_TIMEOUT = 5.0

logger = logging.getLogger("hookline.server")


def _ignore_event(session_id: str, seq: int) -> None:
    """The default `on_event`: nothing listens."""


def _ignore_control(verb: str, session_id: str) -> None:
    """The default `on_control`: nothing listens."""


def _ignore() -> None:
    """The default `on_reconnect`: nothing to redo."""


def _ignore_live(session_id: str, text: str) -> None:
    """The default `on_live`: nothing listens."""


class Notifier:
    """One process's LISTEN connection to a PostgreSQL store's database, and its NOTIFY sender.

    Args:
        dsn: The store's DSN (never put in a message).
        where: The database as `host:port/db`, for messages.
        ping_every: Seconds between checks that the idle connection still lives.

    Callbacks run on the event loop, one at a time, and must not block:
    `on_event(session_id, seq)` for an append, `on_control(verb, session_id)` for a
    request of another process (or of this one), `on_live(session_id, text)` for live
    events, `on_reconnect()` once the connection is back after a loss.
    """

    def __init__(self, dsn: str, *, where: str, ping_every: float = 10.0) -> None:
        self.where = where
        self.on_event: Callable[[str, int], None] = _ignore_event
        self.on_control: Callable[[str, str], None] = _ignore_control
        self.on_reconnect: Callable[[], None] = _ignore
        self.on_live: Callable[[str, str], None] = _ignore_live
        self._dsn = dsn
        self._ping_every = ping_every
        self._conn: Any = None
        self._ready = asyncio.Event()
        self._sending = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None

    @property
    def connected(self) -> bool:
        """Whether the listening connection is up now."""
        return self._ready.is_set()

    def start(self) -> None:
        """Start listening in a task of its own (it connects, and reconnects, by itself)."""
        if self._task is None:
            self._task = asyncio.create_task(self._supervise(), name="hookline-listen")

    async def wait_connected(self, timeout: float) -> bool:
        """Wait up to `timeout` s for the connection; return whether it is up."""
        # Not `asyncio.wait_for`: on Python 3.11 it swallows a cancellation that lands as
        # the connection comes up, and a cancelled caller would go on and send.
        with suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._ready.wait()
        return self.connected

    async def send(self, verb: str, session_id: str, *, timeout: float = 1.0) -> None:
        """Tell every listening process `"<verb> <session id>"` on the control channel.

        Raises:
            StoreError: The connection is not up within `timeout` s, or the NOTIFY failed.
            ValueError: The payload is too long for a notification (a session id of ~8 kB).

        """
        payload = f"{verb} {session_id}"
        if len(payload.encode("utf-8", "replace")) > MAX_PAYLOAD:
            raise ValueError(f"a session id of {len(session_id)} characters is too long for a notification")
        if not await self.wait_connected(timeout):
            raise StoreError(f"not listening to PostgreSQL database {self.where}: the connection is down",
                             where=self.where)
        try:
            async with self._sending:
                await self._conn.execute("SELECT pg_notify($1, $2)", CONTROL_CHANNEL, payload, timeout=timeout)
        except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            raise StoreError(f"cannot notify PostgreSQL database {self.where} ({type(exc).__name__})",
                             where=self.where) from None

    async def send_live(self, payloads: list[tuple[str, str]], *, timeout: float = 1.0) -> None:
        """Send `(session id, text)` payloads on the live channel, in order, in one round trip.

        Raises:
            StoreError: The connection is not up within `timeout` s, or the NOTIFY failed.
            ValueError: A payload is too long for a notification.

        """
        texts = [f"{session_id}\n{text}" for session_id, text in payloads]
        if any(len(t.encode("utf-8", "replace")) > MAX_PAYLOAD for t in texts):
            raise ValueError(f"a live payload is longer than {MAX_PAYLOAD} bytes")
        if not await self.wait_connected(timeout):
            raise StoreError(f"not listening to PostgreSQL database {self.where}: the connection is down",
                             where=self.where)
        try:
            async with self._sending:
                await self._conn.executemany("SELECT pg_notify($1, $2)", [(LIVE_CHANNEL, t) for t in texts],
                                             timeout=timeout)
        except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            raise StoreError(f"cannot notify PostgreSQL database {self.where} ({type(exc).__name__})",
                             where=self.where) from None

    async def aclose(self) -> None:
        """Stop listening and close the connection."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    # -- the connection's life ----------------------------------------------------------------

    async def _supervise(self) -> None:
        pause, lost_once = _FIRST_PAUSE, False
        while True:
            conn = await self._connect()
            if conn is None:
                await asyncio.sleep(pause)
                pause = min(pause * 2, _LONGEST_PAUSE)
                continue
            pause = _FIRST_PAUSE
            try:
                if lost_once:
                    logger.warning("listening to PostgreSQL database %s again", self.where)
                    self.on_reconnect()
                await self._hold(conn)
            except asyncio.CancelledError:
                await _close(conn)
                raise
            finally:
                self._ready.clear()
                self._conn = None
                conn.terminate()  # a no-op once closed
            lost_once = True
            logger.warning("lost the LISTEN connection to PostgreSQL database %s; reconnecting", self.where)

    async def _connect(self) -> Any:
        """Open the connection and LISTEN; None (logged) when that failed."""
        conn = None
        try:
            conn = await asyncpg.connect(self._dsn, server_settings=_SETTINGS, timeout=_TIMEOUT)
            await conn.add_listener(EVENTS_CHANNEL, self._heard_event)
            await conn.add_listener(CONTROL_CHANNEL, self._heard_control)
            await conn.add_listener(LIVE_CHANNEL, self._heard_live)
        except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError) as exc:
            logger.warning("cannot LISTEN on PostgreSQL database %s (%s); trying again", self.where,
                           type(exc).__name__)
            if conn is not None:
                conn.terminate()
            return None
        return conn

    async def _hold(self, conn: Any) -> None:
        """Serve `conn` until it is lost (a ping failing, or the server closing it)."""
        lost = asyncio.Event()
        conn.add_termination_listener(lambda _conn: lost.set())
        self._conn = conn
        self._ready.set()
        while not conn.is_closed():
            # Not `asyncio.wait_for`: on Python 3.11 it swallows an `aclose` that lands as
            # the connection drops, and the supervisor would connect again, for ever.
            with suppress(TimeoutError):
                async with asyncio.timeout(self._ping_every):
                    await lost.wait()
                return
            try:
                async with self._sending:
                    await conn.fetchval("SELECT 1", timeout=_TIMEOUT)
            except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError):
                return

    def _heard_event(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        seq, _, session_id = payload.partition(":")
        if seq.isdigit():
            self._call(self.on_event, session_id, int(seq))

    def _heard_control(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        verb, _, session_id = payload.partition(" ")
        if session_id:
            self._call(self.on_control, verb, session_id)

    def _heard_live(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        session_id, _, text = payload.partition("\n")
        if text:
            self._call(self.on_live, session_id, text)

    @staticmethod
    def _call(callback: Callable[[str, Any], None], first: str, second: Any) -> None:
        try:
            callback(first, second)
        except Exception:  # one failing callback must not stop the connection's dispatch
            logger.exception("a notification callback failed")


async def _close(conn: Any) -> None:
    """Close `conn` politely, or cut it if that takes more than a moment."""
    try:
        await asyncio.wait_for(conn.close(), 1.0)
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError):
        conn.terminate()
