"""What a `SQLiteSessionStore` runs in its thread: the connection, transactions, and each job's statements.

Everything here runs in the store's own thread (`_sqlite_thread.py`), on its one connection:
opening and migrating the file, `in_transaction` around a write, and the statements of the
store's reads and writes. The store (`sqlite.py`) stamps and encodes before it hands a job
over, so what runs here binds rows and holds SQLite's write lock for the statements alone.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from hookline.errors import SessionNotFound
from hookline.events import Event
from hookline.sessions import _sqlite_sql as sql
from hookline.sessions._append import seq_taken, with_prepared
from hookline.sessions._blobs import unheld
from hookline.sessions._codec import decode_events, decode_rows, encode_event, iso, utcnow
from hookline.sessions._migrations import MIGRATIONS_TABLE, SQLITE, create_migrations_table, plan
from hookline.sessions._search import holds
from hookline.sessions._sqlite_thread import Abandoned, Job
from hookline.sessions.base import Blob

__all__ = [
    "CHECKPOINT_WAIT", "HOST", "OPEN", "after_releasing", "append", "checkpoint", "connect", "decode_log",
    "event_rows", "fetch", "hold_log", "in_transaction", "keep_blobs", "open_log", "pending_row", "session_row",
]

_T = TypeVar("_T")
CHECKPOINT_WAIT = 0.05
"""Seconds a `checkpoint` waits for the writer and the readers of the moment before it gives up."""
HOST = socket.gethostname()
"""This host's name, written with each lease (a lease whose process on this host is gone is free)."""



def connect(
    path: str, busy_timeout: float, synchronous: str = "NORMAL", *, any_thread: bool = False
) -> sqlite3.Connection:
    """Open the store's file (made and migrated if need be); `any_thread`: usable from any thread, not only this one."""
    if sqlite3.sqlite_version_info < (3, 35):
        raise sqlite3.NotSupportedError(f"SQLite {sqlite3.sqlite_version} is too old; hookline needs 3.35 or newer")
    # Autocommit mode: transactions are opened and closed explicitly, in `in_transaction`.
    db = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=not any_thread)
    try:
        set_up(db, path, time.monotonic() + busy_timeout)
        db.execute(f"PRAGMA synchronous = {synchronous}")  # one of _SYNCHRONOUS: checked by the store
    except BaseException:
        db.close()
        raise
    return db


def set_up(db: sqlite3.Connection, path: str, deadline: float) -> None:
    """Switch to WAL and migrate; retried while another process does the same to a new file.

    Turning a new file to WAL can fail at once with "database is locked", without
    waiting out the busy timeout, while another connection turns it too.
    """
    for attempt in itertools.count(1):
        try:
            for pragma in sql.SET_UP:
                db.execute(pragma)
            db.create_function("hookline_lapsed", 4, lease_lapsed)
            db.create_function("hookline_holds", 2, holds, deterministic=True)
            migrate(db, path)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(min(0.01 * attempt, 0.1))


def migrate(db: sqlite3.Connection, path: str) -> None:
    if not plan(applied(db), where=path):
        return

    def migrate(db: sqlite3.Connection) -> None:
        db.execute(create_migrations_table(SQLITE))
        for step in plan(applied(db), where=path):
            for statement in step.statements(SQLITE):
                db.execute(statement)
            db.execute(sql.RECORD_MIGRATION, {"name": step.name, "applied_at": iso(utcnow())})

    in_transaction(migrate, db)


def in_transaction(work: Callable[[sqlite3.Connection], _T], db: sqlite3.Connection, *, job: Job | None = None) -> _T:
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


def checkpoint(busy_timeout: float, db: sqlite3.Connection) -> None:
    """Copy the whole WAL into the database file, so that the next write starts the WAL over.

    A `RESTART` checkpoint: it holds writers off while it waits for the writer and the
    readers of the moment, so that a WAL written without pause stays short; it waits at
    most `CHECKPOINT_WAIT` seconds (writers meanwhile wait in the store's thread, not on an
    event loop), then leaves the rest to the next one. `busy_timeout` is the connection's own,
    set back after it.
    """
    db.execute(f"PRAGMA busy_timeout = {round(CHECKPOINT_WAIT * 1000)}")
    try:
        with suppress(sqlite3.Error):  # busy: the next one catches up
            db.execute(sql.CHECKPOINT).fetchall()
    finally:
        db.execute(f"PRAGMA busy_timeout = {round(busy_timeout * 1000)}")


def after_releasing(
    leases: Sequence[tuple[str, str]], work: Callable[[sqlite3.Connection], _T], db: sqlite3.Connection
) -> _T:
    db.executemany(sql.RELEASE_LEASE, [{"session_id": session_id, "owner": owner} for session_id, owner in leases])
    return work(db)


OPEN = sql.read_log("prompt", session=True)


def open_log(params: Mapping[str, Any], new: Mapping[str, Any] | None, job: Job, db: sqlite3.Connection) -> list[Any]:
    """`open_for_run` in the store's thread: the rows of `sql.read_log`, once the session is created if `new`."""
    rows = fetch(OPEN, params, db)
    if new is None or (rows and rows[0][0] == 0):
        return rows
    with suppress(sqlite3.IntegrityError):  # created meanwhile: by another process (or it is another user's)
        in_transaction(partial(fetch, sql.INSERT_SESSION, new), db, job=job)
    return fetch(OPEN, params, db)


def hold_log(
    params: Mapping[str, Any], lease: Mapping[str, Any], new: Mapping[str, Any] | None, db: sqlite3.Connection
) -> list[Any] | None:
    """`hold_for_run` in a write transaction: the rows of `OPEN` once the lease is taken; None: a run holds it.

    The owner is checked before the lease, so another user's session is not found even
    while a run holds it; a missing one is created (when `new`) once the lease is taken.
    """
    rows = fetch(OPEN, params, db)
    if rows and rows[0][0] == 0:
        return rows if fetch(sql.TAKE_LEASE, lease, db) else None
    if new is None:
        raise SessionNotFound(params["session_id"])
    if not fetch(sql.TAKE_LEASE, lease, db):
        return None
    try:
        db.execute(sql.INSERT_SESSION, new)
    except sqlite3.IntegrityError as exc:  # the id is another user's session
        raise SessionNotFound(params["session_id"]) from exc
    return fetch(OPEN, params, db)


def session_row(session_id: str, app: str, user: str, state: str, now: datetime) -> dict[str, Any]:
    """The parameters of `sql.INSERT_SESSION` for a new session (`state` as JSON), created `now`."""
    created = iso(now)
    row = {"id": session_id, "app": app, "user_id": user, "state": state}
    return row | {"created_at": created, "updated_at": created}


def fetch(query: str, params: Mapping[str, Any], db: sqlite3.Connection) -> list[Any]:
    return db.execute(query, params).fetchall()


def applied(db: sqlite3.Connection) -> list[str]:
    if db.execute(sql.MIGRATIONS_TABLE_EXISTS, {"table": MIGRATIONS_TABLE}).fetchone() is None:
        return []
    return [row[0] for row in db.execute(sql.APPLIED_MIGRATIONS)]


def decode_log(rows: Sequence[Sequence[Any]]) -> list[Event]:
    """Decode the event and pending rows of `sql.read_log` (all but its first, the session's)."""
    return decode_events(f"[{','.join(row[2] for row in itertools.islice(rows, 1, None))}]")


def lease_lapsed(host: str, pid: int, expires_at: float, now: float) -> bool:
    """Whether a run-lock lease is free to take: expired, or its holder's process is gone."""
    return expires_at < now or (host == HOST and os.name == "posix" and not alive(pid))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError as exc:  # EPERM: it runs, as another user
        return not isinstance(exc, ProcessLookupError)
    return True


def pending_row(event: Event) -> dict[str, Any]:
    """The parameters of `sql.SAVE_PENDING` for `event`."""
    row = encode_event(event)._asdict()
    row["created_at"] = iso(row["created_at"])
    return row


def event_rows(events: Iterable[Event], created_at: str) -> list[tuple[Any, ...]]:
    """The parameters of `sql.INSERT_EVENT` for stamped `events`, all created at `created_at` (their seq 0)."""
    return [(*row[:7], created_at, *row[8:]) for row in map(encode_event, events)]


def append(
    statement: str, bump: dict[str, Any], events: list[Event], rows: list[tuple[Any, ...]],
    blobs: Mapping[str, Blob], named: Sequence[str], release: Mapping[str, Any] | None, db: sqlite3.Connection,
) -> tuple[int, dict[int, Event]]:
    """Append stamped `events` (seq 0, `rows` their rows) after the `statement` that bumps the seq.

    Then, with `release` (`sql.RELEASE_LEASE`'s parameters), give the run's lease back.
    Return the first seq, and by index the events merged with their author's prepared parts.
    """
    session_id = bump["session_id"]
    bumped = db.execute(statement, bump).fetchone()
    if bumped is None:
        raise SessionNotFound(session_id)
    last_seq, any_pending = bumped
    keep_blobs(db, session_id, blobs, named)
    merged = merge_pending_rows(db, session_id, events, rows) if any_pending else {}
    first = last_seq - len(events) + 1
    try:
        db.executemany(sql.INSERT_EVENT, [(row[0], seq, *row[2:]) for seq, row in enumerate(rows, first)])
    except sqlite3.IntegrityError as exc:
        raise seq_taken(session_id) from exc
    if release is not None:
        db.execute(sql.RELEASE_LEASE, release)
    return first, merged


def merge_pending_rows(
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
        (rows[index],) = event_rows([event], rows[index][7])
    return merged


def keep_blobs(db: sqlite3.Connection, session_id: str, blobs: Mapping[str, Blob], named: Sequence[str]) -> None:
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
