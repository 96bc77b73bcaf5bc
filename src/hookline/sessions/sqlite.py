"""The embedded default store: one SQLite file, shared safely by several processes.

The file runs in WAL mode with `synchronous=NORMAL` (durable against a killed process).
Writes start with `BEGIN IMMEDIATE`, so a writer takes SQLite's write lock before it
reads what it will change; other processes wait up to `busy_timeout` seconds for it.
`seq` comes from a per-session counter (`hookline_sessions.last_seq`) bumped in the same
transaction as the insert, so it stays gap-free and unique however many processes
append, and `UNIQUE(session_id, seq)` guards it in the schema.

`run_lock` is a lease in the `hookline_run_locks` table: taken in a write transaction,
renewed every `lock_ttl / 3` seconds while held, deleted on release. A lease frees itself
once it expires, and at once when its holder ran on this host and its pid is gone, so a
killed process never blocks a session for long.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any

import aiosqlite

from hookline.errors import SessionBusy, SessionExists, SessionNotFound, StoreError
from hookline.events import Event
from hookline.sessions import Session, SessionStore
from hookline.sessions._codec import (
    accumulate,
    check_event,
    check_view,
    decode_rows,
    decode_session,
    encode_event,
    encode_state,
    event_json_sql,
    iso,
    merge_pending,
    new_id,
    poll_lock,
    stamp,
    utcnow,
)
from hookline.sessions._migrations import MIGRATIONS_TABLE, SQLITE, create_migrations_table, plan
from hookline.types import View

__all__ = ["SQLiteSessionStore"]

_HOST = socket.gethostname()
_EVENT_JSON = event_json_sql(quote="json_quote({})", raw="{}", partial=False)
_PENDING_JSON = event_json_sql(quote="json_quote({})", raw="{}", partial=True)
_SESSION_COLUMNS = "id, app, user_id, state, created_at, updated_at"
_INSERT_EVENT = (
    "INSERT INTO hookline_events (session_id, seq, id, kind, author, role, source, created_at, parts, metadata)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_SAVE_PENDING = (
    "INSERT OR REPLACE INTO hookline_pending (session_id, author, id, kind, role, source, created_at, parts, metadata)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# The first matching fragment of a driver message decides how a failure is reported.
_FAILURES = (
    ("locked", "is locked: another connection held a write transaction longer than busy_timeout"),
    ("unable to open", "cannot be opened (check that its folder exists and is writable)"),
    ("not a database", "is not a SQLite database, or is corrupt"),
    ("malformed", "is corrupt"),
)


class SQLiteSessionStore(SessionStore):
    """Sessions in one SQLite file, through aiosqlite (nothing blocks the event loop).

    WAL mode with `synchronous=NORMAL`: a committed append survives the process being
    killed; an OS crash or power loss may lose the last commits, never the file.

    Args:
        path: The database file; created, with its schema, on first use.
        busy_timeout: Seconds a write waits for another process's write transaction
            before failing with `StoreError`.
        lock_ttl: Seconds a `run_lock` lease lasts unless renewed (it is renewed while held).

    The connection opens lazily on first use and is reused; `aclose()` closes it.

    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 5.0, lock_ttl: float = 30.0) -> None:
        self.path = os.fspath(path)
        self.busy_timeout = busy_timeout
        self.lock_ttl = lock_ttl
        self._db: aiosqlite.Connection | None = None
        self._guard_lock = asyncio.Lock()
        self._guard_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"SQLiteSessionStore({self.path!r})"

    def _guard(self) -> asyncio.Lock:
        # One connection serves every coroutine of the process, and transactions on it
        # must not interleave. A lock is tied to its event loop: make one per loop.
        loop = asyncio.get_running_loop()
        if self._guard_loop is not loop:
            self._guard_lock, self._guard_loop = asyncio.Lock(), loop
        return self._guard_lock

    @asynccontextmanager
    async def _transaction(self, *, write: bool) -> AsyncIterator[aiosqlite.Connection]:
        async with self._guard():
            with self._errors():
                if self._db is None:
                    self._db = await self._open()
                async with _atomic(self._db, "BEGIN IMMEDIATE" if write else "BEGIN"):
                    yield self._db

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            text = str(exc).lower()
            problem = next((p for fragment, p in _FAILURES if fragment in text), f"failed: {exc}")
            if problem.startswith("is locked"):
                problem += f" ({self.busy_timeout:g} s)"
            raise StoreError(f"SQLite database {self.path} {problem}", where=self.path) from exc

    async def _open(self) -> aiosqlite.Connection:
        if sqlite3.sqlite_version_info < (3, 35):
            needed = "hookline needs 3.35 or newer"
            raise StoreError(f"SQLite {sqlite3.sqlite_version} is too old; {needed}", where=self.path)
        # aiosqlite leaves its thread to report a failed connect to a loop that may be gone
        # by then; a plain connect first turns an unopenable path into an ordinary error.
        await asyncio.to_thread(_probe, self.path)
        db = await aiosqlite.connect(self.path, isolation_level=None)
        try:
            await db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            await db.execute("PRAGMA journal_mode = WAL")
            await db.execute("PRAGMA synchronous = NORMAL")
            await db.execute("PRAGMA foreign_keys = ON")
            await self._migrate(db)
        except BaseException:
            await db.close()
            raise
        return db

    async def _migrate(self, db: aiosqlite.Connection) -> None:
        if not plan(await _applied(db), where=self.path):
            return
        async with _atomic(db, "BEGIN IMMEDIATE"):
            await db.execute(create_migrations_table(SQLITE))
            for step in plan(await _applied(db), where=self.path):
                for statement in step.statements(SQLITE):
                    await db.execute(statement)
                await db.execute(f"INSERT INTO {MIGRATIONS_TABLE} VALUES (?, ?)", (step.name, iso(utcnow())))

    async def aclose(self) -> None:
        """Close the connection (the next use opens it again)."""
        if self._db is not None:
            db, self._db = self._db, None
            await db.close()

    async def create(
        self,
        *,
        app: str = "default",
        user: str = "default",
        session_id: str | None = None,
        state: dict[str, Any] | None = None,
    ) -> Session:
        """Create a session (a new uuid4 hex id when `session_id` is None)."""
        session = Session(id=session_id or new_id(), app=app, user=user, state=dict(state or {}))
        session.created_at = session.updated_at = utcnow()
        row = (session.id, app, user, encode_state(session.state), iso(session.created_at), iso(session.created_at))
        async with self._transaction(write=True) as db:
            try:
                await db.execute(f"INSERT INTO hookline_sessions ({_SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)", row)
            except sqlite3.IntegrityError as exc:
                raise SessionExists(session.id) from exc
        return session

    async def get(self, session_id: str, *, user: str | None = None, with_events: bool = True) -> Session:
        """Return the session with its events in the `ui` view (none when `with_events` is false)."""
        async with self._transaction(write=False) as db:
            rows = list(
                await db.execute_fetchall(
                    f"SELECT {_SESSION_COLUMNS} FROM hookline_sessions WHERE id = ? AND (? IS NULL OR user_id = ?)",
                    (session_id, user, user),
                )
            )
            if not rows:
                raise SessionNotFound(session_id)
            events = await _read_events(db, session_id, "ui", 0) if with_events else []
        session = decode_session(*rows[0])
        session.events = events
        return session

    async def delete(self, session_id: str, *, user: str | None = None) -> None:
        """Delete a session and its whole log."""
        async with self._transaction(write=True) as db:
            rows = await db.execute_fetchall(
                "DELETE FROM hookline_sessions WHERE id = ? AND (? IS NULL OR user_id = ?) RETURNING id",
                (session_id, user, user),
            )
            if not rows:
                raise SessionNotFound(session_id)

    async def append_events(self, session_id: str, events: Sequence[Event]) -> list[Event]:
        """Append events in one transaction; return them as stored."""
        checked = [check_event(e) for e in events]
        now = utcnow()
        async with self._transaction(write=True) as db:
            last_seq = await _bump(db, session_id, len(checked), iso(now))
            pending = await _take_pending(db, session_id, {e.author for e in checked})
            stored = [
                stamp(merge_pending(pending.pop(e.author, None), e), session_id=session_id, seq=seq, now=now)
                for seq, e in enumerate(checked, start=last_seq - len(checked) + 1)
            ]
            rows = [_sqlite_row(e) for e in stored]
            try:
                await db.executemany(_INSERT_EVENT, rows)
            except sqlite3.IntegrityError as exc:
                raise SessionBusy(session_id, "another writer took the same seq") from exc
        return stored

    async def prepare_event(self, session_id: str, event: Event) -> Event:
        """Add `event`'s parts to its author's pending parts; return the partial event."""
        event = check_event(event)
        now = utcnow()
        async with self._transaction(write=True) as db:
            await _bump(db, session_id, 0, iso(now))
            current = await db.execute_fetchall(
                f"SELECT {_PENDING_JSON} FROM hookline_pending WHERE session_id = ? AND author = ?",
                (session_id, event.author),
            )
            before = decode_rows(current)
            partial = accumulate(before[0] if before else None, event, session_id=session_id, now=now)
            r = encode_event(partial)
            row = (r.session_id, r.author, r.id, r.kind, r.role, r.source, iso(r.created_at), r.parts, r.metadata)
            await db.execute(_SAVE_PENDING, row)
        return partial

    async def events(self, session_id: str, *, view: View = "all", after_seq: int = 0) -> list[Event]:
        """Return the events of `view` above `after_seq`; partial events come last (not in `prompt`)."""
        async with self._transaction(write=False) as db:
            found = await db.execute_fetchall("SELECT 1 FROM hookline_sessions WHERE id = ?", (session_id,))
            if not list(found):
                raise SessionNotFound(session_id)
            return await _read_events(db, session_id, view, after_seq)

    async def update_state(self, session_id: str, state: dict[str, Any]) -> None:
        """Replace the session's saved state."""
        encoded = encode_state(state)
        async with self._transaction(write=True) as db:
            rows = await db.execute_fetchall(
                "UPDATE hookline_sessions SET state = ?, updated_at = ? WHERE id = ? RETURNING id",
                (encoded, iso(utcnow()), session_id),
            )
            if not rows:
                raise SessionNotFound(session_id)

    @asynccontextmanager
    async def run_lock(self, session_id: str, *, timeout: float = 0.0) -> AsyncIterator[None]:
        """Hold the session for one run, across processes; wait up to `timeout` s, then `SessionBusy`.

        The lease is on the id, so a run may take it before creating its session.
        """
        owner = new_id()
        await poll_lock(lambda: self._take_lease(session_id, owner), session_id=session_id, timeout=timeout)
        renewal = asyncio.create_task(self._renew_lease(session_id, owner))
        try:
            yield
        finally:
            renewal.cancel()
            await asyncio.wait([renewal])
            async with self._transaction(write=True) as db:
                await db.execute(
                    "DELETE FROM hookline_run_locks WHERE session_id = ? AND owner = ?", (session_id, owner)
                )

    async def _take_lease(self, session_id: str, owner: str) -> bool:
        now = time.time()
        async with self._transaction(write=True) as db:
            held = await db.execute_fetchall(
                "SELECT host, pid, expires_at FROM hookline_run_locks WHERE session_id = ?", (session_id,)
            )
            if any(not _lease_lapsed(host, pid, expires_at, now) for host, pid, expires_at in held):
                return False
            await db.execute(
                "INSERT OR REPLACE INTO hookline_run_locks VALUES (?, ?, ?, ?, ?)",
                (session_id, owner, _HOST, os.getpid(), now + self.lock_ttl),
            )
        return True

    async def _renew_lease(self, session_id: str, owner: str) -> None:
        while True:
            await asyncio.sleep(self.lock_ttl / 3)
            # A write that fails now (the file briefly locked) is retried next period.
            with suppress(StoreError):
                async with self._transaction(write=True) as db:
                    await db.execute(
                        "UPDATE hookline_run_locks SET expires_at = ? WHERE session_id = ? AND owner = ?",
                        (time.time() + self.lock_ttl, session_id, owner),
                    )

    async def list(self, *, app: str | None = None, user: str | None = None) -> list[Session]:
        """Return the sessions of `app` and `user` (None: any), newest first, without their events."""
        async with self._transaction(write=False) as db:
            rows = await db.execute_fetchall(
                f"SELECT {_SESSION_COLUMNS} FROM hookline_sessions WHERE (? IS NULL OR app = ?)"
                " AND (? IS NULL OR user_id = ?) ORDER BY created_at DESC, id DESC",
                (app, app, user, user),
            )
        return [decode_session(*row) for row in rows]


@asynccontextmanager
async def _atomic(db: aiosqlite.Connection, begin: str) -> AsyncIterator[None]:
    await db.execute(begin)
    try:
        yield
    except BaseException:
        await db.execute("ROLLBACK")
        raise
    await db.execute("COMMIT")


async def _applied(db: aiosqlite.Connection) -> list[str]:
    tables = await db.execute_fetchall(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (MIGRATIONS_TABLE,)
    )
    if not list(tables):
        return []
    return [row[0] for row in await db.execute_fetchall(f"SELECT name FROM {MIGRATIONS_TABLE}")]


async def _bump(db: aiosqlite.Connection, session_id: str, count: int, now: str) -> int:
    """Reserve `count` seqs of a session (and mark it updated); return its new last seq."""
    rows = list(
        await db.execute_fetchall(
            "UPDATE hookline_sessions SET last_seq = last_seq + ?, updated_at = ? WHERE id = ? RETURNING last_seq",
            (count, now, session_id),
        )
    )
    if not rows:
        raise SessionNotFound(session_id)
    return int(rows[0][0])


async def _take_pending(db: aiosqlite.Connection, session_id: str, authors: set[str]) -> dict[str, Event]:
    """Remove and return the pending parts of `authors` (they are merged into their events)."""
    if not authors:
        return {}
    marks = ", ".join("?" * len(authors))
    rows = await db.execute_fetchall(
        f"DELETE FROM hookline_pending WHERE session_id = ? AND author IN ({marks}) RETURNING {_PENDING_JSON}",
        (session_id, *sorted(authors)),
    )
    return {e.author: e for e in decode_rows(rows)}


async def _read_events(db: aiosqlite.Connection, session_id: str, view: View, after_seq: int) -> list[Event]:
    only_messages = "AND kind = 'message'" if check_view(view) == "prompt" else ""
    rows = list(
        await db.execute_fetchall(
            f"SELECT {_EVENT_JSON} FROM hookline_events WHERE session_id = ? {only_messages} AND seq > ? ORDER BY seq",
            (session_id, after_seq),
        )
    )
    if view != "prompt":
        rows += await db.execute_fetchall(
            f"SELECT {_PENDING_JSON} FROM hookline_pending WHERE session_id = ? ORDER BY author", (session_id,)
        )
    return decode_rows(rows)


def _probe(path: str) -> None:
    sqlite3.connect(path).close()


def _lease_lapsed(host: str, pid: int, expires_at: float, now: float) -> bool:
    """Whether a run-lock lease is free to take: expired, or its holder's process is gone."""
    return expires_at < now or (host == _HOST and os.name == "posix" and not _alive(pid))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError as exc:  # EPERM: it runs, as another user
        return not isinstance(exc, ProcessLookupError)
    return True


def _sqlite_row(event: Event) -> tuple[Any, ...]:
    row = encode_event(event)
    return (*row[:7], iso(row.created_at), row.parts, row.metadata)
