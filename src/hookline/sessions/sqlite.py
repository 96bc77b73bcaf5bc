"""The embedded default store: one SQLite file, shared safely by threads, event loops and processes.

The file runs in WAL mode with `synchronous=NORMAL` (durable against a killed process).
Writes start with `BEGIN IMMEDIATE`, so a writer takes SQLite's write lock before it
reads what it will change; other processes wait up to `busy_timeout` seconds for it.
`seq` comes from a per-session counter (`hookline_sessions.last_seq`) bumped in the same
transaction as the insert, so it stays gap-free and unique however many processes
append, and `UNIQUE(session_id, seq)` guards it in the schema.

The store's connection lives in one daemon thread of its own, which runs each whole
transaction as one job, one job after another. So any thread and any event loop may use
the store at once without transactions interleaving; a transaction costs one hop to
that thread and back; and a script that never calls `aclose()` still exits when its
work ends (every append is committed before it returns; the connection is closed at
interpreter exit). A cancelled caller's job is dropped if it has not started; one that
has started ends on its own, committed or rolled back, before the next job starts.
An append stamps and encodes its events before its hop, so the thread holds SQLite's
write lock for the statements alone; a run's first read and last write
(`open_for_run`, `append_and_save_state`) are one hop each.

`run_lock` is a lease in the `hookline_run_locks` table: taken in a write transaction,
renewed every `lock_ttl / 3` seconds while held, deleted on release. A lease frees itself
once it expires, and at once when its holder ran on this host and its pid is gone, so a
killed process never blocks a session for long. A run cancelled while its lease is being
written leaves none behind: the write rolls back, or, if it was already committing, the
cancelled run deletes the lease before its cancellation goes on.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import sqlite3
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from typing_extensions import override

from hookline.errors import ConfigError, SessionBusy, SessionExists, SessionNotFound, StoreError
from hookline.events import Event
from hookline.sessions import _sqlite_sql as sql
from hookline.sessions._append import checked, seq_taken, with_prepared
from hookline.sessions._blobs import unheld, wanted_digests
from hookline.sessions._codec import (
    accumulate,
    decode_events,
    decode_rows,
    decode_session,
    encode_event,
    encode_state,
    iso,
    new_id,
    poll_lock,
    stamp,
    stored_state,
    utcnow,
)
from hookline.sessions._migrations import MIGRATIONS_TABLE, SQLITE, create_migrations_table, plan
from hookline.sessions._sqlite_thread import Abandoned, Job, Worker, wait, wait_stopped
from hookline.sessions.base import Blob, Session, SessionStore, check_limit
from hookline.types import View

__all__ = ["SQLiteSessionStore"]

_T = TypeVar("_T")
_HOST = socket.gethostname()
# The first matching fragment of a driver message decides how a failure is reported.
_FAILURES = (
    ("locked", "is locked: another connection held a write transaction longer than busy_timeout"),
    ("unable to open", "cannot be opened (check that its folder exists and is writable)"),
    ("not a database", "is not a SQLite database, or is corrupt"),
    ("malformed", "is corrupt"),
    ("disk is full", "cannot be written: the disk is full"),
    ("disk i/o error", "cannot be written: disk I/O error (is the disk full or failing?)"),
)
_DISK_ADVICE = "free some space (or fix the disk), then retry"
_SYNCHRONOUS = ("NORMAL", "FULL")  # the settings of SQLite's `synchronous` the store offers
# Why `delete` refuses a session a run holds (the same words on every store).
_HELD = "a run holds it; cancel the run or wait for it to end, then delete the session"
_NO_END = 2**62  # a page's `before_seq` when it has none: past any seq


class SQLiteSessionStore(SessionStore):
    """Sessions in one SQLite file, through a thread of its own (nothing blocks the event loop).

    WAL mode with `synchronous=NORMAL` by default: a committed append survives the process
    being killed; an OS crash or power loss may lose the last commits, never the file. With
    `synchronous="FULL"` every commit also waits for the disk (an fsync of the WAL), so it
    survives those too, at the disk's fsync latency per append.

    Args:
        path: The database file; created, with its schema, on first use.
        busy_timeout: Seconds a write waits for another process's write transaction
            before failing with `StoreError`.
        lock_ttl: Seconds a `run_lock` lease lasts unless renewed (it is renewed while held).
        synchronous: `"NORMAL"` (the default) or `"FULL"`, SQLite's `synchronous` setting
            (any case); anything else raises `ConfigError`.

    The connection opens lazily on first use and is reused by every thread and event
    loop; `aclose()` closes it (the next use opens it again). A store left open is
    closed at interpreter exit, or when it is garbage collected.

    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 5.0, lock_ttl: float = 30.0,
                 synchronous: str = "NORMAL") -> None:
        if not isinstance(synchronous, str) or synchronous.upper() not in _SYNCHRONOUS:
            raise ConfigError(f"synchronous={synchronous!r} is not a setting of this store; "
                              f"use one of: {', '.join(map(repr, _SYNCHRONOUS))}")
        self.path = os.fspath(path)
        self.busy_timeout = busy_timeout
        self.lock_ttl = lock_ttl
        self.synchronous = synchronous.upper()
        self._worker: Worker | None = None
        self._worker_lock = threading.Lock()
        # Leases (session id, owner) whose release failed: the next lease write removes them.
        self._unreleased: set[tuple[str, str]] = set()

    def __repr__(self) -> str:
        return f"SQLiteSessionStore({self.path!r})"

    def _submit(self, job: Job) -> None:
        """Queue `job` for the store's thread, starting one if there is none."""
        # Under the lock, so a job is never queued behind the stop of a worker `aclose`
        # took away: every job queued to it comes before its stop.
        with self._worker_lock:
            # A forked child inherits the object but not the thread: it opens its own.
            if self._worker is None or self._worker.pid != os.getpid():
                self._worker = Worker(partial(_connect, self.path, self.busy_timeout, self.synchronous), self.path)
                # At exit `_stop_all` closes it (and waits); the finalizer is for a store
                # garbage collected while open.
                weakref.finalize(self, self._worker.stop).atexit = False
            self._worker.submit(job)

    async def _transaction(
        self,
        work: Callable[[sqlite3.Connection], _T],
        *,
        read_only: bool = False,
        finish: bool = False,
        undo: Callable[[], Awaitable[None]] | None = None,
    ) -> _T:
        """Run `work` on the connection, in the store's thread, as one transaction; return what it returns.

        A write (the default) runs between `BEGIN IMMEDIATE` and `COMMIT`: committed when
        `work` returns, rolled back if it raises, or if the caller is cancelled before the
        `COMMIT` begins. A caller cancelled once it has begun awaits `undo` (when given)
        before the cancellation goes on. `read_only` work is one `SELECT`, which SQLite runs
        in a snapshot of its own, with no `BEGIN` around it. With `finish`, the work runs to
        its end even if the caller is cancelled.
        """
        job = Job(asyncio.get_running_loop())
        job.work = work if read_only else partial(_in_transaction, work, job=None if finish else job)
        try:
            result: _T = await self._run(job, read_only=read_only, finish=finish)
        except asyncio.CancelledError:
            if undo is not None and job.committed:
                await undo()
            raise
        return result

    async def _run(self, job: Job, *, read_only: bool = False, finish: bool = False) -> Any:
        """Run `job` in the store's thread; return what its work returns (`StoreError` for a driver error)."""
        self._submit(job)
        try:
            return await wait(job, abandonable=not finish)
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite database {self.path} {self._problem(exc, read_only)}", where=self.path) from exc

    def _problem(self, exc: sqlite3.Error, read_only: bool) -> str:
        """What went wrong, in words, from the driver's message."""
        text = str(exc).lower()
        problem = next((p for fragment, p in _FAILURES if fragment in text), f"failed: {exc}")
        if problem.startswith("is locked"):
            problem += f" ({self.busy_timeout:g} s)"
        disk = problem.startswith("cannot be written")
        if disk:
            problem += f" (SQLite: {exc})"
        if not read_only:
            problem += "; nothing of this write was saved"
        return f"{problem}; {_DISK_ADVICE}" if disk else problem

    async def aclose(self) -> None:
        """Close the connection (the next use opens it again)."""
        with self._worker_lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            await wait_stopped(worker.stop_job())

    @override
    async def create(
        self,
        *,
        app: str = "default",
        user: str = "default",
        session_id: str | None = None,
        state: dict[str, Any] | None = None,
    ) -> Session:
        kept, encoded = stored_state(state or {})
        session = Session(id=session_id or new_id(), app=app, user=user, state=kept)
        session.created_at = session.updated_at = utcnow()
        row = _session_row(session.id, app, user, encoded, session.created_at)

        def insert(db: sqlite3.Connection) -> None:
            try:
                db.execute(sql.INSERT_SESSION, row)
            except sqlite3.IntegrityError as exc:
                raise SessionExists(session.id) from exc

        await self._transaction(insert)
        return session

    @override
    async def get(self, session_id: str, *, user: str | None = None, with_events: bool = True) -> Session:
        if not with_events:
            params = {"session_id": session_id, "user": user}
            rows = await self._transaction(partial(_fetch, sql.READ_SESSION, params), read_only=True)
            if not rows:
                raise SessionNotFound(session_id)
            return decode_session(*rows[0])
        rows = await self._read_log(session_id, user, "ui", 0, session=True)
        session = decode_session(*rows[0][2:])
        session.events = _decode_log(rows)
        return session

    @override
    async def open_for_run(
        self, session_id: str, *, user: str | None = "default", create: bool = True, app: str = "default"
    ) -> tuple[Session, list[Event]]:
        """The session a run starts on and its `prompt` view, in one trip to the store's thread.

        One `SELECT` reads both; a session created here (when it is missing and `create`
        is true) is read again by the same job.
        """
        params = {"session_id": session_id, "user": user, "after_seq": 0}
        new = _session_row(session_id, app, user or "default", "{}", utcnow()) if create else None
        job = Job(asyncio.get_running_loop())
        job.work = partial(_open, params, new, job)
        rows = await self._run(job)
        if not rows or rows[0][0] != 0:
            raise SessionNotFound(session_id)
        return decode_session(*rows[0][2:]), _decode_log(rows)

    async def delete(self, session_id: str, *, user: str | None = None) -> None:
        """Delete a session and its whole log.

        Raises:
            SessionNotFound: No such session (or it is another user's).
            SessionBusy: A run holds the session, in this process or another.

        """
        owned = {"session_id": session_id, "user": user}

        def delete(db: sqlite3.Connection) -> None:
            if not db.execute(sql.READ_SESSION, owned).fetchone():
                raise SessionNotFound(session_id)
            if db.execute(sql.LEASE_HELD, {"session_id": session_id, "now": time.time()}).fetchone():
                raise SessionBusy(session_id, _HELD)
            db.execute(sql.DELETE_SESSION, owned)

        await self._write_leases(delete)

    @override
    async def append_events(self, session_id: str, events: Sequence[Event]) -> list[Event]:
        return await self._append(session_id, events, None)

    @override
    async def append_and_save_state(
        self, session_id: str, events: Sequence[Event], state: dict[str, Any]
    ) -> list[Event]:
        return await self._append(session_id, events, encode_state(state))

    async def _append(self, session_id: str, events: Sequence[Event], state: str | None) -> list[Event]:
        """Append `events`, and replace the state with `state` (JSON) unless it is None."""
        events, blobs, named = checked(events)
        now = utcnow()
        # Stamped and encoded here, so the store's thread only binds the rows (and merges in
        # an author's prepared parts, when there are some).
        stored = [stamp(e, session_id=session_id, seq=0, now=now) for e in events]
        created = iso(now)
        rows = _event_rows(stored, created)
        bump = {"session_id": session_id, "count": len(events), "updated_at": created, "state": state}
        statement = sql.BUMP if state is None else sql.BUMP_AND_SAVE_STATE
        first, merged = await self._transaction(partial(_append, statement, bump, stored, rows, blobs, named))
        for index, event in merged.items():
            stored[index] = event
        for seq, event in enumerate(stored, first):
            event.seq = seq
        return stored

    @override
    async def prepare_event(self, session_id: str, event: Event) -> Event:
        (event,), blobs, named = checked([event])
        now = utcnow()

        def prepare(db: sqlite3.Connection) -> Event:
            touch = {"session_id": session_id, "updated_at": iso(now), "author": event.author}
            touched = db.execute(sql.TOUCH, touch).fetchone()
            if touched is None:
                raise SessionNotFound(session_id)
            _keep_blobs(db, session_id, blobs, named)
            before = decode_events(f"[{touched[0]}]")[0] if touched[0] is not None else None
            partial_event = accumulate(before, event, session_id=session_id, now=now)
            db.execute(sql.SAVE_PENDING, _sqlite_row(partial_event))
            return partial_event

        return await self._transaction(prepare)

    @override
    async def events(self, session_id: str, *, view: View = "all", after_seq: int = 0) -> list[Event]:
        return _decode_log(await self._read_log(session_id, None, view, after_seq, session=False))

    @override
    async def page(
        self, session_id: str, *, view: View = "all", after_seq: int = 0, before_seq: int | None = None,
        limit: int = 1000, newest: bool = False,
    ) -> list[Event]:
        check_limit(limit)
        params = {"session_id": session_id, "user": None, "after_seq": after_seq,
                  "before_seq": _NO_END if before_seq is None else before_seq, "limit": limit + 1}
        query = sql.read_page(view, newest=newest)

        def read(db: sqlite3.Connection) -> tuple[list[Any], list[Any]]:
            if db.execute(sql.READ_SESSION, params).fetchone() is None:
                raise SessionNotFound(session_id)
            rows = db.execute(query, params).fetchall()
            tail = before_seq is None and (newest or len(rows) <= limit) and view != "prompt"
            return rows[:limit], db.execute(sql.READ_PENDING, params).fetchall() if tail else []

        rows, pending = await self._transaction(read, read_only=True)
        if newest:
            rows.reverse()
        return decode_events(f"[{','.join(row[1] for row in [*rows, *pending])}]")

    async def _read_log(
        self, session_id: str, user: str | None, view: View, after_seq: int, *, session: bool
    ) -> list[Any]:
        """The rows of `sql.read_log` (its session row first); `SessionNotFound` if there is none."""
        query = sql.read_log(view, session=session)
        params = {"session_id": session_id, "user": user, "after_seq": after_seq}
        rows = await self._transaction(partial(_fetch, query, params), read_only=True)
        if not rows or rows[0][0] != 0:
            raise SessionNotFound(session_id)
        return rows

    @override
    async def load_blobs(self, session_id: str, digests: Iterable[str]) -> dict[str, Blob]:
        wanted = wanted_digests(digests)
        if not wanted:
            return {}
        params = {"session_id": session_id, "digests": json.dumps(wanted)}
        rows = await self._transaction(partial(_fetch, sql.READ_BLOBS, params), read_only=True)
        return {digest: Blob(media_type, data) for digest, media_type, data in rows}

    @override
    async def update_state(self, session_id: str, state: dict[str, Any]) -> None:
        params = {"session_id": session_id, "state": encode_state(state), "updated_at": iso(utcnow())}
        if not await self._transaction(partial(_fetch, sql.UPDATE_STATE, params)):
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
            await self._release_lease(session_id, owner)

    @override
    async def run_active(self, session_id: str) -> bool:
        """Whether a live lease holds `session_id` (read, not taken: a run starting now is not made busy)."""
        held = {"session_id": session_id, "now": time.time()}
        return bool(await self._transaction(partial(_fetch, sql.LEASE_HELD, held), read_only=True))

    async def _take_lease(self, session_id: str, owner: str) -> bool:
        now = time.time()
        lease = {"session_id": session_id, "owner": owner, "host": _HOST, "pid": os.getpid()}
        lease |= {"expires_at": now + self.lock_ttl, "now": now}
        # Cancelled once the lease is committing, the caller never learns it holds it
        # (`run_lock` raises before its `finally`): release it here, or it would hold the
        # session until it expires.
        undo = partial(self._release_lease, session_id, owner)
        return bool(await self._write_leases(partial(_fetch, sql.TAKE_LEASE, lease), undo=undo))

    async def _release_lease(self, session_id: str, owner: str) -> None:
        """Release a lease; if that fails (a full disk), leave it to the next lease write.

        The run is over either way, and its outcome, not the release's, is what its caller
        must see. Other processes see the lease until it expires (it is no longer renewed).
        """
        self._unreleased.add((session_id, owner))
        with suppress(StoreError):
            # Finished even if the caller is cancelled: the session must not stay held.
            lease = {"session_id": session_id, "owner": owner}
            await self._transaction(partial(_fetch, sql.RELEASE_LEASE, lease), finish=True)
            self._unreleased.discard((session_id, owner))

    async def _write_leases(
        self, work: Callable[[sqlite3.Connection], _T], *, undo: Callable[[], Awaitable[None]] | None = None
    ) -> _T:
        """A write that reads leases: the ones this store failed to release go first."""
        stale = list(self._unreleased)
        result = await self._transaction(partial(_after_releasing, stale, work) if stale else work, undo=undo)
        self._unreleased.difference_update(stale)
        return result

    async def _renew_lease(self, session_id: str, owner: str) -> None:
        while True:
            await asyncio.sleep(self.lock_ttl / 3)
            # A write that fails now (the file briefly locked) is retried next period.
            with suppress(StoreError):
                lease = {"session_id": session_id, "owner": owner, "expires_at": time.time() + self.lock_ttl}
                await self._transaction(partial(_fetch, sql.RENEW_LEASE, lease))

    @override
    async def list(self, *, app: str | None = None, user: str | None = None) -> list[Session]:
        params = {"app": app, "user": user}
        rows = await self._transaction(partial(_fetch, sql.LIST_SESSIONS, params), read_only=True)
        return [decode_session(*row) for row in rows]


# --- work done in the store's thread -----------------------------------------------------------


def _connect(path: str, busy_timeout: float, synchronous: str = "NORMAL") -> sqlite3.Connection:
    if sqlite3.sqlite_version_info < (3, 35):
        raise sqlite3.NotSupportedError(f"SQLite {sqlite3.sqlite_version} is too old; hookline needs 3.35 or newer")
    # Autocommit mode: transactions are opened and closed explicitly, in `_in_transaction`.
    db = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None)
    try:
        _set_up(db, path, time.monotonic() + busy_timeout)
        db.execute(f"PRAGMA synchronous = {synchronous}")  # one of _SYNCHRONOUS: checked by the store
    except BaseException:
        db.close()
        raise
    return db


def _set_up(db: sqlite3.Connection, path: str, deadline: float) -> None:
    """Switch to WAL and migrate; retried while another process does the same to a new file.

    Turning a new file to WAL can fail at once with "database is locked", without
    waiting out the busy timeout, while another connection turns it too.
    """
    for attempt in itertools.count(1):
        try:
            for pragma in sql.SET_UP:
                db.execute(pragma)
            db.create_function("hookline_lapsed", 4, _lease_lapsed)
            _migrate(db, path)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(min(0.01 * attempt, 0.1))


def _migrate(db: sqlite3.Connection, path: str) -> None:
    if not plan(_applied(db), where=path):
        return

    def migrate(db: sqlite3.Connection) -> None:
        db.execute(create_migrations_table(SQLITE))
        for step in plan(_applied(db), where=path):
            for statement in step.statements(SQLITE):
                db.execute(statement)
            db.execute(sql.RECORD_MIGRATION, {"name": step.name, "applied_at": iso(utcnow())})

    _in_transaction(migrate, db)


def _in_transaction(work: Callable[[sqlite3.Connection], _T], db: sqlite3.Connection, *, job: Job | None = None) -> _T:
    """Run `work` between `BEGIN IMMEDIATE` and `COMMIT`; roll back if it or the commit fails.

    Roll back too if the caller has abandoned its `job` (cancelled while it ran).
    """
    db.execute(sql.BEGIN)
    try:
        result = work(db)
        if job is not None and not job.may_commit():
            raise Abandoned
        db.execute(sql.COMMIT)
    except BaseException:
        # A failed COMMIT may leave the transaction open; SQLite may also have rolled it
        # back already (a full disk). Either way, nothing of it may reach the next job.
        if db.in_transaction:
            db.execute(sql.ROLLBACK)
        raise
    return result


def _after_releasing(
    leases: Sequence[tuple[str, str]], work: Callable[[sqlite3.Connection], _T], db: sqlite3.Connection
) -> _T:
    db.executemany(sql.RELEASE_LEASE, [{"session_id": session_id, "owner": owner} for session_id, owner in leases])
    return work(db)


_OPEN = sql.read_log("prompt", session=True)


def _open(params: Mapping[str, Any], new: Mapping[str, Any] | None, job: Job, db: sqlite3.Connection) -> list[Any]:
    """`open_for_run` in the store's thread: the rows of `sql.read_log`, once the session is created if `new`."""
    rows = _fetch(_OPEN, params, db)
    if new is None or (rows and rows[0][0] == 0):
        return rows
    with suppress(sqlite3.IntegrityError):  # created meanwhile: by another process (or it is another user's)
        _in_transaction(partial(_fetch, sql.INSERT_SESSION, new), db, job=job)
    return _fetch(_OPEN, params, db)


def _session_row(session_id: str, app: str, user: str, state: str, now: datetime) -> dict[str, Any]:
    """The parameters of `sql.INSERT_SESSION` for a new session (`state` as JSON), created `now`."""
    created = iso(now)
    row = {"id": session_id, "app": app, "user_id": user, "state": state}
    return row | {"created_at": created, "updated_at": created}


def _fetch(query: str, params: Mapping[str, Any], db: sqlite3.Connection) -> list[Any]:
    return db.execute(query, params).fetchall()


def _applied(db: sqlite3.Connection) -> list[str]:
    if db.execute(sql.MIGRATIONS_TABLE_EXISTS, {"table": MIGRATIONS_TABLE}).fetchone() is None:
        return []
    return [row[0] for row in db.execute(sql.APPLIED_MIGRATIONS)]


def _decode_log(rows: Sequence[Sequence[Any]]) -> list[Event]:
    """Decode the event and pending rows of `sql.read_log` (all but its first, the session's)."""
    return decode_events(f"[{','.join(row[2] for row in itertools.islice(rows, 1, None))}]")


def _lease_lapsed(host: str, pid: int, expires_at: float, now: float) -> bool:
    """Whether a run-lock lease is free to take: expired, or its holder's process is gone."""
    return expires_at < now or (host == _HOST and os.name == "posix" and not _alive(pid))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError as exc:  # EPERM: it runs, as another user
        return not isinstance(exc, ProcessLookupError)
    return True


def _sqlite_row(event: Event) -> dict[str, Any]:
    """The parameters of `sql.SAVE_PENDING` for `event`."""
    row = encode_event(event)._asdict()
    row["created_at"] = iso(row["created_at"])
    return row


def _event_rows(events: Iterable[Event], created_at: str) -> list[tuple[Any, ...]]:
    """The parameters of `sql.INSERT_EVENT` for stamped `events`, all created at `created_at` (their seq 0)."""
    return [(*row[:7], created_at, *row[8:]) for row in map(encode_event, events)]


def _append(
    statement: str, bump: dict[str, Any], events: list[Event], rows: list[tuple[Any, ...]],
    blobs: Mapping[str, Blob], named: Sequence[str], db: sqlite3.Connection,
) -> tuple[int, dict[int, Event]]:
    """Append stamped `events` (seq 0, `rows` their rows) after the `statement` that bumps the seq.

    Return the first seq, and by index the events merged with their author's prepared parts.
    """
    session_id = bump["session_id"]
    bumped = db.execute(statement, bump).fetchone()
    if bumped is None:
        raise SessionNotFound(session_id)
    last_seq, any_pending = bumped
    _keep_blobs(db, session_id, blobs, named)
    merged = _merge_pending(db, session_id, events, rows) if any_pending else {}
    first = last_seq - len(events) + 1
    try:
        db.executemany(sql.INSERT_EVENT, [(row[0], seq, *row[2:]) for seq, row in enumerate(rows, first)])
    except sqlite3.IntegrityError as exc:
        raise seq_taken(session_id) from exc
    return first, merged


def _merge_pending(
    db: sqlite3.Connection, session_id: str, events: list[Event], rows: list[tuple[Any, ...]]
) -> dict[int, Event]:
    """Take the pending parts of the events' authors; merge each into its author's first event (and its row).

    Return the merged events by index: new events, the prepared parts before the event's own.
    """
    authors = {"session_id": session_id, "authors": json.dumps(sorted({e.author for e in events}))}
    pending = {e.author: e for e in decode_rows(db.execute(sql.TAKE_PENDING, authors))}
    taken = with_prepared(events, pending)
    merged = {index: event for index, event in enumerate(taken) if event is not events[index]}
    for index, event in merged.items():
        (rows[index],) = _event_rows([event], rows[index][7])
    return merged


def _keep_blobs(db: sqlite3.Connection, session_id: str, blobs: Mapping[str, Blob], named: Sequence[str]) -> None:
    """Keep a write's `blobs`; first refuse it if its parts name bytes by `blob` alone (`named`) the session lacks."""
    if named:
        missing = db.execute(sql.UNHELD_BLOBS, {"session_id": session_id, "digests": json.dumps(named)}).fetchall()
        if missing:
            raise unheld(session_id, [row[0] for row in missing])
    if blobs:
        db.executemany(sql.INSERT_BLOB, [
            {"session_id": session_id, "digest": digest, "media_type": blob.media_type, "data": blob.data}
            for digest, blob in blobs.items()
        ])
