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

A small write (a session's creation, an append without media, a lease) skips the hop
when it can: it is written on a connection of the calling thread's own that never waits
for SQLite's write lock, and goes to the store's thread only when another writer holds it
(`_sqlite_inline`). That halves a persisted run's time; it is off with `synchronous="FULL"`,
whose commits wait for the disk.

`run_lock` is a lease in the `hookline_run_locks` table: taken in a write transaction,
renewed every `lock_ttl / 3` seconds while held, deleted on release. A lease frees itself
once it expires, and at once when its holder ran on this host and its pid is gone, so a
killed process never blocks a session for long. A run cancelled while its lease is being
written leaves none behind: the write rolls back, or, if it was already committing, the
cancelled run deletes the lease before its cancellation goes on.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager, suppress
from functools import partial
from typing import Any, TypeVar, cast

from typing_extensions import override

from hookline.errors import ConfigError, SessionBusy, SessionExists, SessionNotFound, StoreError
from hookline.events import Event
from hookline.sessions import _sqlite_sql as sql
from hookline.sessions import _sqlite_work as jobs
from hookline.sessions._append import checked
from hookline.sessions._blobs import wanted_digests
from hookline.sessions._codec import (
    accumulate,
    decode_events,
    decode_session,
    encode_state,
    iso,
    new_id,
    poll_lock,
    stamp,
    stored_state,
    utcnow,
)
from hookline.sessions._search import as_matched, json_form, mention_at
from hookline.sessions._sqlite_inline import Inline
from hookline.sessions._sqlite_thread import Job, Worker, wait, wait_stopped
from hookline.sessions.base import (
    Blob,
    RunHold,
    Session,
    SessionMatch,
    SessionStore,
    check_limit,
    check_list_limit,
    check_search,
)
from hookline.types import View

__all__ = ["SQLiteSessionStore"]

_T = TypeVar("_T")
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
    """Sessions in one SQLite file, through a thread of its own; small writes on the caller's, never waiting for a lock.

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
        self._searcher: Worker | None = None  # a connection of its own: a search never holds up the log's jobs
        self._worker_lock = threading.Lock()
        self._inline = self._new_inline()
        # Leases (session id, owner) whose release failed: the next lease write removes them.
        self._unreleased: set[tuple[str, str]] = set()

    def _new_inline(self) -> Inline | None:
        """The connections of the calling threads for small writes; None where they would not pay.

        With `synchronous="FULL"` every commit waits for the disk, which must not happen on
        an event loop; a database in memory is one connection's alone.
        """
        if self.synchronous != "NORMAL" or self.path in ("", ":memory:"):
            return None
        inline = Inline(partial(jobs.connect, self.path, 0.0, self.synchronous, any_thread=True))
        weakref.finalize(self, inline.close).atexit = False  # at exit, `_sqlite_inline` closes it
        return inline

    def __repr__(self) -> str:
        return f"SQLiteSessionStore({self.path!r})"

    def _submit(self, job: Job) -> None:
        """Queue `job` for the store's thread, starting one if there is none."""
        self._queue(job, search=False)

    def _queue(self, job: Job, *, search: bool) -> None:
        """Queue `job` for the store's thread, or with `search` its search thread, starting one if there is none."""
        # Under the lock, so a job is never queued behind the stop of a worker `aclose`
        # took away: every job queued to it comes before its stop.
        with self._worker_lock:
            worker = self._searcher if search else self._worker
            # A forked child inherits the object but not the thread: it opens its own.
            if worker is None or worker.pid != os.getpid():
                worker = Worker(partial(jobs.connect, self.path, self.busy_timeout, self.synchronous), self.path)
                # At exit `_stop_all` closes it (and waits); the finalizer is for a store
                # garbage collected while open.
                weakref.finalize(self, worker.stop).atexit = False
                if search:
                    self._searcher = worker
                else:
                    self._worker = worker
            worker.submit(job)

    async def _transaction(
        self,
        work: Callable[[sqlite3.Connection], _T],
        *,
        read_only: bool = False,
        finish: bool = False,
        undo: Callable[[], Awaitable[None]] | None = None,
        small: bool = False,
    ) -> _T:
        """Run `work` on the connection, in the store's thread, as one transaction; return what it returns.

        A write (the default) runs between `BEGIN IMMEDIATE` and `COMMIT`: committed when
        `work` returns, rolled back if it raises, or if the caller is cancelled before the
        `COMMIT` begins. A caller cancelled once it has begun awaits `undo` (when given)
        before the cancellation goes on. `read_only` work is one `SELECT`, which SQLite runs
        in a snapshot of its own, with no `BEGIN` around it. With `finish`, the work runs to
        its end even if the caller is cancelled. A `small` write (a few rows, no media) is
        first tried on the calling thread's own connection (`_sqlite_inline`): there it
        cannot be cancelled half-way.
        """
        if small and self._inline is not None:
            try:
                done, value = self._inline.write(work)
            except sqlite3.Error as exc:
                raise self._failure(exc, read_only) from exc
            if done:
                if self._inline.checkpoint_due():
                    self._checkpoint(self._inline)
                return cast(_T, value)
        job = Job(asyncio.get_running_loop())
        job.work = work if read_only else partial(jobs.in_transaction, work, job=None if finish else job)
        try:
            result: _T = await self._run(job, read_only=read_only, finish=finish)
        except asyncio.CancelledError:
            if undo is not None and job.committed:
                await undo()
            raise
        return result

    async def _run(self, job: Job, *, read_only: bool = False, finish: bool = False, search: bool = False) -> Any:
        """Run `job` in the store's thread (or its search thread); return what its work returns.

        A driver error is raised as `StoreError`.
        """
        if search:
            self._queue(job, search=True)
        else:
            self._submit(job)
        try:
            return await wait(job, abandonable=not finish)
        except sqlite3.Error as exc:
            raise self._failure(exc, read_only) from exc

    def _checkpoint(self, inline: Inline) -> None:
        """Ask the store's thread to checkpoint the WAL, which `inline`'s connections never do (not awaited)."""
        job = Job(asyncio.get_running_loop())
        job.work = partial(inline.checkpoint, partial(jobs.checkpoint, self.busy_timeout))
        self._submit(job)

    def _failure(self, exc: sqlite3.Error, read_only: bool) -> StoreError:
        """The `StoreError` a driver error is raised as."""
        return StoreError(f"SQLite database {self.path} {self._problem(exc, read_only)}", where=self.path)

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
            workers = [w for w in (self._worker, self._searcher) if w is not None]
            self._worker = self._searcher = None
        if self._inline is not None:
            self._inline.close()
        for worker in workers:
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
        row = jobs.session_row(session.id, app, user, encoded, session.created_at)

        def insert(db: sqlite3.Connection) -> None:
            try:
                db.execute(sql.INSERT_SESSION, row)
            except sqlite3.IntegrityError as exc:
                raise SessionExists(session.id) from exc

        await self._transaction(insert, small=True)
        return session

    @override
    async def get(self, session_id: str, *, user: str | None = None, with_events: bool = True) -> Session:
        if not with_events:
            params = {"session_id": session_id, "user": user}
            rows = await self._transaction(partial(jobs.fetch, sql.READ_SESSION, params), read_only=True)
            if not rows:
                raise SessionNotFound(session_id)
            return decode_session(*rows[0])
        rows = await self._read_log(session_id, user, "ui", 0, session=True)
        session = decode_session(*rows[0][2:])
        session.events = jobs.decode_log(rows)
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
        new = jobs.session_row(session_id, app, user or "default", "{}", utcnow()) if create else None
        job = Job(asyncio.get_running_loop())
        job.work = partial(jobs.open_log, params, new, job)
        rows = await self._run(job)
        if not rows or rows[0][0] != 0:
            raise SessionNotFound(session_id)
        return decode_session(*rows[0][2:]), jobs.decode_log(rows)

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

    async def _append(
        self, session_id: str, events: Sequence[Event], state: str | None, release: str | None = None
    ) -> list[Event]:
        """Append `events`, and replace the state with `state` (JSON) unless it is None.

        With `release`, the lease of that owner is given back in the same transaction.
        """
        events, blobs, named = checked(events)
        now = utcnow()
        # Stamped and encoded here, so the store's thread only binds the rows (and merges in
        # an author's prepared parts, when there are some).
        stored = [stamp(e, session_id=session_id, seq=0, now=now) for e in events]
        created = iso(now)
        rows = jobs.event_rows(stored, created)
        bump = {"session_id": session_id, "count": len(events), "updated_at": created, "state": state}
        statement = sql.BUMP if state is None else sql.BUMP_AND_SAVE_STATE
        lease = None if release is None else {"session_id": session_id, "owner": release}
        work = partial(jobs.append, statement, bump, stored, rows, blobs, named, lease)
        first, merged = await self._transaction(work, small=not blobs)
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
            jobs.keep_blobs(db, session_id, blobs, named)
            before = decode_events(f"[{touched[0]}]")[0] if touched[0] is not None else None
            partial_event = accumulate(before, event, session_id=session_id, now=now)
            db.execute(sql.SAVE_PENDING, jobs.pending_row(partial_event))
            return partial_event

        return await self._transaction(prepare, small=not blobs)

    @override
    async def events(self, session_id: str, *, view: View = "all", after_seq: int = 0) -> list[Event]:
        return jobs.decode_log(await self._read_log(session_id, None, view, after_seq, session=False))

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
        rows = await self._transaction(partial(jobs.fetch, query, params), read_only=True)
        if not rows or rows[0][0] != 0:
            raise SessionNotFound(session_id)
        return rows

    @override
    async def roll_back(self, session_id: str, *, after_seq: int, through_seq: int) -> int:
        marks = {"session_id": session_id, "after_seq": after_seq, "through_seq": through_seq}

        def mark(db: sqlite3.Connection) -> int:
            if not db.execute(sql.READ_SESSION, {"session_id": session_id, "user": None}).fetchone():
                raise SessionNotFound(session_id)
            return db.execute(sql.ROLL_BACK, marks).rowcount

        return await self._transaction(mark)

    @override
    async def load_blobs(self, session_id: str, digests: Iterable[str]) -> dict[str, Blob]:
        wanted = wanted_digests(digests)
        if not wanted:
            return {}
        params = {"session_id": session_id, "digests": json.dumps(wanted)}
        rows = await self._transaction(partial(jobs.fetch, sql.READ_BLOBS, params), read_only=True)
        return {digest: Blob(media_type, data) for digest, media_type, data in rows}

    @override
    async def update_state(self, session_id: str, state: dict[str, Any]) -> None:
        params = {"session_id": session_id, "state": encode_state(state), "updated_at": iso(utcnow())}
        if not await self._transaction(partial(jobs.fetch, sql.UPDATE_STATE, params), small=True):
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
    @asynccontextmanager
    async def hold_for_run(
        self, session_id: str, *, user: str | None = "default", create: bool = True, app: str = "default",
        timeout: float = 0.0,
    ) -> AsyncIterator[RunHold]:
        """Take the lease and read the session in one transaction; give the lease back with the last write.

        The owner is checked first: another user's session is `SessionNotFound`, held or not.
        The lease is renewed while the block runs, and released at its end if the last
        write (`RunHold.finish`) did not release it.
        """
        owner = new_id()
        params = {"session_id": session_id, "user": user, "after_seq": 0}
        new = jobs.session_row(session_id, app, user or "default", "{}", utcnow()) if create else None
        opened: list[Any] = []

        async def take() -> bool:
            work = partial(jobs.hold_log, params, self._lease(session_id, owner), new)
            rows = await self._write_leases(work, undo=partial(self._release_lease, session_id, owner))
            opened.extend([rows] if rows is not None else [])
            return rows is not None

        await poll_lock(take, session_id=session_id, timeout=timeout)
        released = False

        async def finish(events: Sequence[Event], state: dict[str, Any]) -> list[Event]:
            nonlocal released
            stored = await self._append(session_id, events, encode_state(state), release=owner)
            released = True
            return stored

        renewal = asyncio.create_task(self._renew_lease(session_id, owner))
        try:
            yield RunHold(decode_session(*opened[0][0][2:]), jobs.decode_log(opened[0]), finish)
        finally:
            renewal.cancel()
            await asyncio.wait([renewal])
            if not released:
                await self._release_lease(session_id, owner)

    @override
    async def run_active(self, session_id: str) -> bool:
        """Whether a live lease holds `session_id` (read, not taken: a run starting now is not made busy)."""
        held = {"session_id": session_id, "now": time.time()}
        return bool(await self._transaction(partial(jobs.fetch, sql.LEASE_HELD, held), read_only=True))

    def _lease(self, session_id: str, owner: str) -> dict[str, Any]:
        """The parameters of `sql.TAKE_LEASE`: a lease of `owner`, from now for `lock_ttl` seconds."""
        now = time.time()
        lease = {"session_id": session_id, "owner": owner, "host": jobs.HOST, "pid": os.getpid()}
        return lease | {"expires_at": now + self.lock_ttl, "now": now}

    async def _take_lease(self, session_id: str, owner: str) -> bool:
        lease = self._lease(session_id, owner)
        # Cancelled once the lease is committing, the caller never learns it holds it
        # (`run_lock` raises before its `finally`): release it here, or it would hold the
        # session until it expires.
        undo = partial(self._release_lease, session_id, owner)
        return bool(await self._write_leases(partial(jobs.fetch, sql.TAKE_LEASE, lease), undo=undo, small=True))

    async def _release_lease(self, session_id: str, owner: str) -> None:
        """Release a lease; if that fails (a full disk), leave it to the next lease write.

        The run is over either way, and its outcome, not the release's, is what its caller
        must see. Other processes see the lease until it expires (it is no longer renewed).
        """
        self._unreleased.add((session_id, owner))
        with suppress(StoreError):
            # Finished even if the caller is cancelled: the session must not stay held.
            lease = {"session_id": session_id, "owner": owner}
            await self._transaction(partial(jobs.fetch, sql.RELEASE_LEASE, lease), finish=True, small=True)
            self._unreleased.discard((session_id, owner))

    async def _write_leases(
        self, work: Callable[[sqlite3.Connection], _T], *, undo: Callable[[], Awaitable[None]] | None = None,
        small: bool = False,
    ) -> _T:
        """A write that reads leases: the ones this store failed to release go first."""
        stale = list(self._unreleased)
        work = partial(jobs.after_releasing, stale, work) if stale else work
        result = await self._transaction(work, undo=undo, small=small)
        self._unreleased.difference_update(stale)
        return result

    async def _renew_lease(self, session_id: str, owner: str) -> None:
        while True:
            await asyncio.sleep(self.lock_ttl / 3)
            # A write that fails now (the file briefly locked) is retried next period.
            with suppress(StoreError):
                lease = {"session_id": session_id, "owner": owner, "expires_at": time.time() + self.lock_ttl}
                await self._transaction(partial(jobs.fetch, sql.RENEW_LEASE, lease), small=True)

    @override
    async def search(
        self, text: str, *, app: str | None = None, user: str | None = None, limit: int = 50
    ) -> list[SessionMatch]:
        """The sessions that mention `text`, newest first, at most `limit` (see `SessionStore.search`).

        One `SELECT`, run on a connection of its own in a thread of its own: WAL lets it read
        while the store's thread reads and writes, so a search of long logs holds up no run.
        """
        check_search(text, limit)
        params = {"app": app, "user": user, "needle": as_matched(text).casefold(),
                  "json_needle": json_form(text).casefold(), "limit": limit}
        job = Job(asyncio.get_running_loop())
        job.work = partial(jobs.fetch, sql.search(app=app is not None, user=user is not None), params)
        rows = await self._run(job, read_only=True, search=True)
        return [SessionMatch(decode_session(*row[:6]), mention_at(row[6])) for row in rows]

    @override
    async def list(
        self, *, app: str | None = None, user: str | None = None, limit: int | None = None
    ) -> list[Session]:
        check_list_limit(limit)
        query = sql.list_sessions(app=app is not None, user=user is not None)
        params = {"app": app, "user": user, "limit": limit}
        rows = await self._transaction(partial(jobs.fetch, query, params), read_only=True)
        return [decode_session(*row) for row in rows]

