"""The embedded default store: one SQLite file, shared safely by several processes.

The file runs in WAL mode with `synchronous=NORMAL` (durable against a killed process).
Writes start with `BEGIN IMMEDIATE`, so a writer takes SQLite's write lock before it
reads what it will change; other processes wait up to `busy_timeout` seconds for it.
The driver issues that `BEGIN IMMEDIATE` itself before a transaction's first statement
(which always writes), and each read is a single statement: every statement is a round
trip to aiosqlite's thread, so an append costs three (bump, insert, commit), a read one.
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
import itertools
import json
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
from hookline.sessions import _sqlite_sql as sql
from hookline.sessions._codec import (
    accumulate,
    check_event,
    decode_events,
    decode_session,
    encode_event,
    encode_state,
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
        """Use the connection alone; for a write, commit at the end (roll back on error).

        A write's first statement must change something: the driver opens the
        transaction with `BEGIN IMMEDIATE` just before it, in the same round trip. A read
        is one statement, which SQLite runs in one snapshot of its own.
        """
        async with self._guard():
            with self._errors():
                if self._db is None:
                    self._db = await self._open()
                if not write:
                    yield self._db
                    return
                async with _committed(self._db):
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
        # "IMMEDIATE": the driver starts a transaction with `BEGIN IMMEDIATE` before the
        # first INSERT, UPDATE or DELETE outside one, with no round trip of its own.
        db = await aiosqlite.connect(self.path, isolation_level="IMMEDIATE")
        try:
            await db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            await db.execute("PRAGMA journal_mode = WAL")
            await db.execute("PRAGMA synchronous = NORMAL")
            await db.execute("PRAGMA foreign_keys = ON")
            await db.create_function("hookline_lapsed", 4, _lease_lapsed)
            await self._migrate(db)
        except BaseException:
            await db.close()
            raise
        return db

    async def _migrate(self, db: aiosqlite.Connection) -> None:
        if not plan(await _applied(db), where=self.path):
            return
        await db.execute("BEGIN IMMEDIATE")
        async with _committed(db):
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
                await db.execute(sql.INSERT_SESSION, row)
            except sqlite3.IntegrityError as exc:
                raise SessionExists(session.id) from exc
        return session

    async def get(self, session_id: str, *, user: str | None = None, with_events: bool = True) -> Session:
        """Return the session with its events in the `ui` view (none when `with_events` is false)."""
        if not with_events:
            async with self._transaction(write=False) as db:
                rows = list(await db.execute_fetchall(sql.READ_SESSION, (session_id, user, user)))
            if not rows:
                raise SessionNotFound(session_id)
            return decode_session(*rows[0])
        rows = await self._read_log(session_id, user, "ui", 0, session=True)
        session = decode_session(*rows[0][2:])
        session.events = _decode_log(rows)
        return session

    async def delete(self, session_id: str, *, user: str | None = None) -> None:
        """Delete a session and its whole log."""
        async with self._transaction(write=True) as db:
            if not await db.execute_fetchall(sql.DELETE_SESSION, (session_id, user, user)):
                raise SessionNotFound(session_id)

    async def append_events(self, session_id: str, events: Sequence[Event]) -> list[Event]:
        """Append events in one transaction; return them as stored."""
        checked = [check_event(e) for e in events]
        now = utcnow()
        authors = json.dumps(sorted({e.author for e in checked}))
        async with self._transaction(write=True) as db:
            bumped = list(
                await db.execute_fetchall(sql.BUMP, (len(checked), iso(now), session_id, session_id, authors))
            )
            if not bumped:
                raise SessionNotFound(session_id)
            last_seq, pending_json = bumped[0]
            pending = {e.author: e for e in decode_events(pending_json or "[]")}
            if pending:
                await db.execute(sql.TAKE_PENDING, (session_id, authors))
            stored = [
                stamp(merge_pending(pending.pop(e.author, None), e), session_id=session_id, seq=seq, now=now)
                for seq, e in enumerate(checked, start=last_seq - len(checked) + 1)
            ]
            try:
                await db.executemany(sql.INSERT_EVENT, [_sqlite_row(e) for e in stored])
            except sqlite3.IntegrityError as exc:
                raise SessionBusy(session_id, "another writer took the same seq") from exc
        return stored

    async def prepare_event(self, session_id: str, event: Event) -> Event:
        """Add `event`'s parts to its author's pending parts; return the partial event."""
        event = check_event(event)
        now = utcnow()
        async with self._transaction(write=True) as db:
            touched = list(await db.execute_fetchall(sql.TOUCH, (iso(now), session_id, session_id, event.author)))
            if not touched:
                raise SessionNotFound(session_id)
            before = decode_events(f"[{touched[0][0]}]") if touched[0][0] is not None else []
            partial = accumulate(before[0] if before else None, event, session_id=session_id, now=now)
            r = encode_event(partial)
            row = (r.session_id, r.author, r.id, r.kind, r.role, r.source, iso(r.created_at), r.parts, r.metadata)
            await db.execute(sql.SAVE_PENDING, row)
        return partial

    async def events(self, session_id: str, *, view: View = "all", after_seq: int = 0) -> list[Event]:
        """Return the events of `view` above `after_seq`; partial events come last (not in `prompt`)."""
        return _decode_log(await self._read_log(session_id, None, view, after_seq, session=False))

    async def _read_log(
        self, session_id: str, user: str | None, view: View, after_seq: int, *, session: bool
    ) -> list[Any]:
        """The rows of `sql.read_log` (its session row first); `SessionNotFound` if there is none."""
        query = sql.read_log(view, session=session)
        params = (session_id, user, user, session_id, after_seq) + ((session_id,) if view != "prompt" else ())
        async with self._transaction(write=False) as db:
            rows = list(await db.execute_fetchall(query, params))
        if not rows or rows[0][0] != 0:
            raise SessionNotFound(session_id)
        return rows

    async def update_state(self, session_id: str, state: dict[str, Any]) -> None:
        """Replace the session's saved state."""
        encoded = encode_state(state)
        async with self._transaction(write=True) as db:
            if not await db.execute_fetchall(sql.UPDATE_STATE, (encoded, iso(utcnow()), session_id)):
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
                await db.execute(sql.RELEASE_LEASE, (session_id, owner))

    async def _take_lease(self, session_id: str, owner: str) -> bool:
        now = time.time()
        lease = (session_id, owner, _HOST, os.getpid(), now + self.lock_ttl, now)
        async with self._transaction(write=True) as db:
            return bool(await db.execute_fetchall(sql.TAKE_LEASE, lease))

    async def _renew_lease(self, session_id: str, owner: str) -> None:
        while True:
            await asyncio.sleep(self.lock_ttl / 3)
            # A write that fails now (the file briefly locked) is retried next period.
            with suppress(StoreError):
                async with self._transaction(write=True) as db:
                    await db.execute(sql.RENEW_LEASE, (time.time() + self.lock_ttl, session_id, owner))

    async def list(self, *, app: str | None = None, user: str | None = None) -> list[Session]:
        """Return the sessions of `app` and `user` (None: any), newest first, without their events."""
        async with self._transaction(write=False) as db:
            rows = await db.execute_fetchall(sql.LIST_SESSIONS, (app, app, user, user))
        return [decode_session(*row) for row in rows]


@asynccontextmanager
async def _committed(db: aiosqlite.Connection) -> AsyncIterator[None]:
    """Commit the transaction the block opened, or roll it back if the block or the commit fails.

    Both are no-ops when no transaction is open (the block failed before writing).
    """
    try:
        yield
        await db.commit()
    except BaseException:
        await db.rollback()
        raise


async def _applied(db: aiosqlite.Connection) -> list[str]:
    tables = await db.execute_fetchall(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (MIGRATIONS_TABLE,)
    )
    if not list(tables):
        return []
    return [row[0] for row in await db.execute_fetchall(f"SELECT name FROM {MIGRATIONS_TABLE}")]


def _decode_log(rows: Sequence[Sequence[Any]]) -> list[Event]:
    """Decode the event and pending rows of `sql.read_log` (all but its first, the session's)."""
    return decode_events(f"[{','.join(row[2] for row in itertools.islice(rows, 1, None))}]")


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
