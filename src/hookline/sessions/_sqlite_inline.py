"""A `SQLiteSessionStore`'s small writes, on a connection of the calling thread's own: no hop to the store's thread.

Handing a write to the store's thread and back (waking that thread, then the event loop)
costs more CPU than a small write's statements. So a write the store knows to be small (a
session's creation, an append without media, a lease) is first tried here, on a connection
whose busy timeout is zero: its `BEGIN IMMEDIATE` takes SQLite's write lock at once or fails
at once, and then the write goes to the store's thread as before, where it waits for the
lock. Nothing waits on the event loop but the statements themselves: with WAL and
`synchronous=NORMAL` a commit does not wait for the disk (the store never writes here with
`synchronous=FULL`), and these connections never checkpoint (`wal_autocheckpoint=0`): every
`CHECKPOINT_EVERY` of their commits the store asks its thread to, and until it has, small
writes queue behind it there, so the WAL stays short however long the writes go on.
"""

from __future__ import annotations

import atexit
import os
import sqlite3
import threading
import weakref
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from hookline.sessions._sqlite_thread import Work
from hookline.sessions._sqlite_work import in_transaction

__all__ = ["CHECKPOINT_EVERY", "Inline"]

CHECKPOINT_EVERY = 100
"""Commits made here between two checkpoints asked of the store's thread."""
_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class _Held:
    """One thread's connection, and the lock its writes hold, so that `Inline.close` never closes it mid-write."""

    __slots__ = ("db", "lock", "pid")

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db: sqlite3.Connection | None = db  # None once closed
        self.lock = threading.Lock()
        self.pid = os.getpid()


class Inline:
    """The calling threads' own connections to one file, each opened on its thread's first small write.

    Args:
        connect: Opens a connection (busy timeout zero, usable from any thread, so that
            `close` may close it from another).
    """

    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        self._connect = connect
        self._local = threading.local()
        self._opened: list[_Held] = []
        self._lock = threading.Lock()
        self.commits = 0
        """Commits made here (counted without a lock: it only paces checkpoints)."""
        self._checkpointing = False
        _LIVE.add(self)

    def write(self, work: Work) -> tuple[bool, Any]:
        """Run `work` as one write transaction, here and now: `(True, what it returned)`.

        `(False, None)` when it could not run here (another connection holds the write lock,
        a checkpoint is awaited, or this thread's connection cannot be opened or was closed):
        nothing was written, and the write is the store's thread's to run. Any other failure
        is raised.
        """
        if self._checkpointing:
            return False, None
        held = self._held()
        if held is None:
            return False, None
        with held.lock:
            db = held.db
            if db is None:  # closed by `close` since this thread opened it: the next write opens another
                self._local.held = None
                return False, None
            try:
                value = in_transaction(work, db)
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode & 0xFF in _BUSY:
                    return False, None
                raise
        self.commits += 1
        return True, value

    def checkpoint_due(self) -> bool:
        """Whether the store must ask its thread for a checkpoint now; if so, writes go there until `checkpoint` ran."""
        if self.commits % CHECKPOINT_EVERY or self._checkpointing:
            return False
        self._checkpointing = True
        return True

    def checkpoint(self, checkpoint: Work, db: sqlite3.Connection) -> None:
        """In the store's thread: run `checkpoint` on its connection; then small writes come back here."""
        try:
            checkpoint(db)
        finally:
            self._checkpointing = False

    def _held(self) -> _Held | None:
        """This thread's connection, opened now if it has none (None: it cannot be opened now)."""
        held: _Held | None = getattr(self._local, "held", None)
        if held is not None and held.pid == os.getpid():  # a forked child opens its own
            return held
        try:
            db = self._connect()
        except sqlite3.Error:  # e.g. locked while another process migrates the file: the thread says why
            return None
        db.execute("PRAGMA wal_autocheckpoint = 0")
        held = _Held(db)
        with self._lock:
            self._opened.append(held)
        self._local.held = held
        return held

    def close(self) -> None:
        """Close this process's connections once their writes in progress end; a thread's next write opens another."""
        with self._lock:
            opened, self._opened = self._opened, []
        for held in opened:
            if held.pid != os.getpid():
                continue
            with held.lock:
                db, held.db = held.db, None
                if db is not None:
                    with suppress(sqlite3.Error):
                        db.close()


_LIVE: weakref.WeakSet[Inline] = weakref.WeakSet()


def _close_all() -> None:
    """At interpreter exit, before the stores' threads close theirs (so the last to close checkpoints the WAL)."""
    for inline in list(_LIVE):
        inline.close()


# Registered after `_sqlite_thread`'s `_stop_all` (imported above), so it runs before it.
atexit.register(_close_all)
