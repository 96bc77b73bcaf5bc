"""The thread a `SQLiteSessionStore` runs its connection in, and how callers wait for its jobs.

One daemon thread per store owns the connection and runs jobs on it, one after another,
each a whole transaction; a caller queues a job and awaits its future without blocking
its event loop. A daemon thread never holds up interpreter exit, yet at exit every live
worker is asked to close its connection (so the WAL is checkpointed and the file left
tidy), waiting a moment for each. A caller cancelled before its job starts drops it; one
cancelled while it runs abandons it, and the write rolls back (`Abandoned`), unless it has
already reached its `COMMIT`: the caller then learns so (`Job.committed`) and can undo it.
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

__all__ = ["Abandoned", "Job", "Work", "Worker", "wait", "wait_stopped"]

Work = Callable[[sqlite3.Connection], Any]
"""A job's work: called with the connection, in the store's thread."""
_Jobs = queue.SimpleQueue["Job | concurrent.futures.Future[None]"]
# At interpreter exit, how long to wait for each store's thread to close its connection.
_EXIT_WAIT = 1.0
_QUEUED, _RUNNING, _DROPPED, _ABANDONED, _COMMITTED = "queued", "running", "dropped", "abandoned", "committed"


class Job:
    """One job for the store's thread: its work, its outcome, and the event loop future it wakes.

    Lighter than a `concurrent.futures.Future`, as a store runs one per transaction: one
    caller, one loop, no waiting from other threads. The store's thread (`start`,
    `may_commit`) and a cancelled caller (`abandon`) race under a lock, so a job either
    never runs, or rolls back, or commits and its caller knows it may have (`committed`).
    """

    __slots__ = ("_lock", "_state", "done", "error", "value", "work")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.done: asyncio.Future[None] = loop.create_future()
        self.work: Work | None = None
        self.value: Any = None
        self.error: BaseException | None = None
        self._state = _QUEUED
        self._lock = threading.Lock()

    def start(self) -> bool:
        """In the store's thread: whether to run the job (False: its caller dropped it)."""
        with self._lock:
            if self._state is _DROPPED:
                return False
            self._state = _RUNNING
            return True

    def may_commit(self) -> bool:
        """In the store's thread, right before a `COMMIT`: whether to commit (False: the caller abandoned the job).

        From a True answer on, the caller can no longer abandon the job: cancelled, it
        sees `committed`.
        """
        with self._lock:
            if self._state is _ABANDONED:
                return False
            self._state = _COMMITTED
            return True

    def abandon(self) -> None:
        """For a cancelled caller: drop the job if it has not started, else roll its write back if not committed."""
        with self._lock:
            if self._state is _QUEUED:
                self._state = _DROPPED
            elif self._state is _RUNNING:
                self._state = _ABANDONED

    @property
    def committed(self) -> bool:
        """Whether the job's write went on to its `COMMIT` (so may be saved) though its caller was cancelled.

        Settled once the caller has called `abandon`.
        """
        return self._state is _COMMITTED

    def finish(self, value: Any, error: BaseException | None) -> None:
        """In the store's thread: keep the outcome and wake the caller's loop."""
        self.value, self.error = value, error
        done = self.done
        # The loop may have been closed since (its caller is gone).
        with suppress(RuntimeError):
            done.get_loop().call_soon_threadsafe(_set_done, done)


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

    def submit(self, job: Job) -> None:
        """Queue `job`."""
        self._jobs.put(job)

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
                    self._jobs.put(self._stopping)
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
        job = jobs.get()
        if not isinstance(job, Job):
            break
        if not job.start():
            continue  # its caller was cancelled before it started
        try:
            if db is None:
                db = connect()
            assert job.work is not None
            value = job.work(db)
        except BaseException as exc:  # handed to the caller, which raises it
            job.finish(None, exc)
        else:
            job.finish(value, None)
    if db is not None:
        with suppress(sqlite3.Error):
            db.close()
    if job.set_running_or_notify_cancel():
        job.set_result(None)


async def wait(job: Job, *, abandonable: bool = True) -> Any:
    """Wait for `job` without blocking the event loop; return what its work returned, or raise what it raised.

    If cancelled, an `abandonable` job is dropped, or abandoned if it runs. A running job
    is not waited for: it may be waiting for another process's write lock, and a
    cancellation (Ctrl-C) must not wait that long. It ends on its own (a write that is
    abandoned rolls back; one already past its commit check commits, and `job.committed`
    says so) before the next job of the store starts. A job that is not `abandonable` is
    neither dropped nor abandoned: it runs to its end.
    """
    try:
        await job.done
    except asyncio.CancelledError:
        if abandonable:
            job.abandon()
        raise
    error = job.error
    if error is not None:
        job.error = None  # no cycle through the traceback
        raise error
    return job.value


async def wait_stopped(stopped: concurrent.futures.Future[None]) -> None:
    """Wait, without blocking the event loop, until a worker asked to stop has closed its connection."""
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    stopped.add_done_callback(partial(_wake, done))
    await done


def _wake(done: asyncio.Future[None], _stopped: object) -> None:
    # Runs in the worker thread; the loop may have been closed since (its caller is gone).
    with suppress(RuntimeError):
        done.get_loop().call_soon_threadsafe(_set_done, done)


def _set_done(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


class Abandoned(Exception):
    """The caller of a write was cancelled before its commit: roll it back."""
