"""The thread a `SQLiteSessionStore` runs its connection in, and how callers wait for its jobs.

One daemon thread per store owns the connection and runs jobs on it, one after another,
each a whole transaction; a caller queues a job and awaits its future without blocking
its event loop. A daemon thread never holds up interpreter exit, yet at exit every live
worker is asked to close its connection (so the WAL is checkpointed and the file left
tidy), waiting a moment for each. A caller cancelled before its job starts drops it; one
cancelled while it runs abandons it, and the write rolls back (`Abandoned`).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import queue
import sqlite3
import threading
from collections.abc import Callable
from contextlib import suppress
from functools import partial
from typing import Any

__all__ = ["Abandoned", "Work", "Worker", "wait"]

Work = Callable[[sqlite3.Connection], Any]
"""A job's work: called with the connection, in the store's thread."""
_Jobs = queue.SimpleQueue[tuple[concurrent.futures.Future[Any], Work | None]]
# At interpreter exit, how long to wait for each store's thread to close its connection.
_EXIT_WAIT = 1.0


class Worker:
    """A daemon thread that owns one connection and runs jobs on it, one after another.

    A daemon thread never holds up interpreter exit; `_stop_all` (run at exit) still
    asks each live worker to close its connection, so the WAL is checkpointed and the
    file left tidy. The thread holds no reference to the store, so an abandoned store
    can be garbage collected (its finalizer stops the worker).
    """

    def __init__(self, connect: Callable[[], sqlite3.Connection], path: str) -> None:
        self.pid = os.getpid()
        self._jobs: _Jobs = queue.SimpleQueue()
        self._stopping: concurrent.futures.Future[None] | None = None
        self._stop_lock = threading.Lock()
        self._thread = threading.Thread(
            target=_serve, args=(self._jobs, connect), name=f"hookline-sqlite {path}", daemon=True
        )
        self._thread.start()
        _LIVE.add(self)

    def submit(self, job: concurrent.futures.Future[Any], work: Work) -> None:
        """Queue `work`; its outcome goes to `job`."""
        self._jobs.put((job, work))

    def stop_job(self) -> concurrent.futures.Future[None]:
        """Ask the thread to close its connection and end after the jobs already queued.

        The future is done once it has; at once in a forked child, where the thread and
        its connection are the parent's, not to be touched.
        """
        with self._stop_lock:
            if self._stopping is None:
                self._stopping = concurrent.futures.Future()
                _LIVE.discard(self)
                if self.pid == os.getpid():
                    self._jobs.put((self._stopping, None))
                else:
                    self._stopping.set_result(None)
            return self._stopping

    def stop(self, wait: float = 0.0) -> None:
        """Stop the thread; wait up to `wait` seconds for it to close the connection."""
        self.stop_job()
        if wait and self.pid == os.getpid():
            self._thread.join(wait)


_LIVE: set[Worker] = set()


def _stop_all() -> None:
    """At interpreter exit: close every store's connection, waiting a moment for each."""
    for worker in list(_LIVE):
        worker.stop(_EXIT_WAIT)


atexit.register(_stop_all)


def _serve(jobs: _Jobs, connect: Callable[[], sqlite3.Connection]) -> None:
    """The worker thread: open the connection on the first job, run jobs until told to stop."""
    db: sqlite3.Connection | None = None
    while True:
        job, work = jobs.get()
        if work is None:
            break
        if not job.set_running_or_notify_cancel():
            continue  # its caller was cancelled before it started
        try:
            if db is None:
                db = connect()
            result = work(db)
        except BaseException as exc:  # handed to the caller, which raises it
            job.set_exception(exc)
        else:
            job.set_result(result)
    if db is not None:
        with suppress(sqlite3.Error):
            db.close()
    if job.set_running_or_notify_cancel():
        job.set_result(None)


async def wait(job: concurrent.futures.Future[Any], abandoned: threading.Event | None = None) -> None:
    """Wait for `job` without blocking the event loop; if cancelled, drop it, or abandon it if it runs.

    A running job is not waited for: it may be waiting for another process's write lock,
    and a cancellation (Ctrl-C) must not wait that long. It ends on its own (a write
    that is `abandoned` rolls back) before the next job of the store starts. Without
    `abandoned`, the job is neither dropped nor abandoned: it runs to its end.
    """
    try:
        await _done(job, asyncio.get_running_loop())
    except asyncio.CancelledError:
        if abandoned is not None and not job.cancel():
            abandoned.set()
        raise


def _done(job: concurrent.futures.Future[Any], loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
    """An asyncio future of `loop` that is done when `job` is."""
    done: asyncio.Future[None] = loop.create_future()
    job.add_done_callback(partial(_wake, loop, done))
    return done


def _wake(loop: asyncio.AbstractEventLoop, done: asyncio.Future[None], _job: object) -> None:
    # Runs in the worker thread; the loop may have been closed since (its caller is gone).
    with suppress(RuntimeError):
        loop.call_soon_threadsafe(_set_done, done)


def _set_done(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


class Abandoned(Exception):
    """The caller of a write was cancelled before its commit: roll it back."""
