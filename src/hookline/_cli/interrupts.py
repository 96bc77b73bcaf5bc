"""Ctrl-C for the commands that run on an event loop (`run`, `chat`): the first cancels, the second quits.

The first Ctrl-C cancels what the loop runs: the run stops its model call and tools,
records that it was cancelled and closes its store, and the command ends with code 130
(`chat` goes back to its prompt). A run that has not stopped `GRACE` seconds later (code
that ignores cancellation, or a blocking call in the loop's thread) is left behind and
the process ends at once, as it does on a second Ctrl-C. Either way the session log stays
valid: the store writes one transaction per append.

A cancelled run may leave worker threads running that nothing can stop from outside (a
local model generating, a threaded tool). `asyncio.run` waits for them when it closes its
loop, and the interpreter waits for them at exit: a minute for a long generation, and a
second Ctrl-C there printed a traceback. So `CommandLoop.close` does not wait for a busy
executor, and `end_process` ends the process without joining such threads.

When a Ctrl-C ends the command, what follows it ends within `EXIT_AFTER_CTRL_C` seconds of
that Ctrl-C, however late in its grace the run stopped: `close` winding down the tasks,
async generators and executor the run left, then `end_process` joining threads. What has
not finished by then is left behind too. Those bounds are the event loop's, so a watchdog
backs them: should something block the loop's thread itself (a hook's synchronous `close()`
that never returns), the process ends `_WATCHDOG_SLACK` seconds after that deadline.

On the way out the command closes what it opened (its agent's toolsets and model, its
session store) through `CommandLoop.closing`: all at once, so that one that hangs holds up
no other, and for a bounded time, `CLOSE_LIMIT` seconds or, after a Ctrl-C, until the same
deadline as the cleanup. What has not closed by then is left behind with one line on
stderr, and the command ends with the exit code it would have had.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from types import FrameType, TracebackType
from typing import Any, NoReturn, TypeVar

from hookline._cli.wakeup import WakeupPipe

__all__ = ["CLOSE_LIMIT", "EXIT_AFTER_CTRL_C", "GRACE", "CommandLoop", "Closer", "end_process", "quit_now", "watchdog"]

GRACE = 1.5
"""Seconds a cancelled run has to stop before the process ends without it."""

EXIT_AFTER_CTRL_C = 1.7
"""Seconds from a Ctrl-C that ends the command to the end of the cleanup after it.

Ctrl-C is honoured within 2 s; the last 0.3 s are for the interpreter's own exit on a
loaded machine. A run that stops just within `GRACE` leaves 0.2 s to wind down what it
left running: ample, as the run's own cleanup (closing its store) is part of the run.
"""

CLOSE_LIMIT = 5.0
"""Seconds the command's closing has on a normal end before what has not closed is left behind.

Long enough for an MCP stdio server's orderly shutdown as the `mcp` SDK bounds it
(`mcp/client/stdio.py`): 0.5 s to flush what was sent, 2 s for the server to exit once its
stdin closes, then SIGTERM to its process group and 2 s more before SIGKILL. By 5 s the SDK
has sent that SIGKILL, so no server outlives the command; only a close that hangs for good
(one that never returns, or ignores cancellation) is left behind.
"""

Closer = Callable[[], Awaitable[object]]
"""What closes one thing the command opened: `agent.close`, `store.aclose`."""

_JOIN = 0.2
"""Seconds `end_process` gives other threads to finish before it stops waiting for them."""

_CLOSE = 0.5
"""Seconds `CommandLoop.close` gives each step of its cleanup."""

_WATCHDOG_SLACK = 0.2
"""Seconds past the cleanup's deadline after a Ctrl-C before its watchdog ends the process, cleanup or not."""

_CTRL_C = 130
_exit_deadline = math.inf  # time.monotonic() by which `end_process` stops waiting; a Ctrl-C's close sets it
_left_behind = False  # a closing was left behind: the interpreter's exit would complain of its pending tasks
T = TypeVar("T")


def _say(text: str) -> None:
    # os.write, not print: this runs in a signal handler or a timer thread, where a
    # buffered stream may be in the middle of a write.
    with contextlib.suppress(OSError):
        os.write(2, (text + "\n").encode())


def quit_now(message: str = "interrupted", code: int = _CTRL_C) -> NoReturn:
    """End the process at once with `code`, after one line on stderr; nothing is waited for."""
    _say(message)
    os._exit(code)


def watchdog(seconds: float, message: str) -> threading.Timer:
    """Start a timer that ends the process (`quit_now(message)`) unless cancelled within `seconds`."""
    timer = threading.Timer(seconds, quit_now, args=(message,))
    timer.daemon = True
    timer.start()
    return timer


class CommandLoop:
    """The event loop of one command: Ctrl-C cancels the coroutine it runs, and closing waits for no stray thread.

    Use it as a context manager; each `run` shares one event loop (and one context), so a
    store's connection lives across the turns of a REPL.

    Args:
        what: What a Ctrl-C cancels, as the notice names it (e.g. "the run").
        grace: Seconds a cancelled coroutine has to stop before the process ends without it.
        loop_factory: Makes the event loop (`hookline serve` passes uvloop's when it runs on it).

    """

    def __init__(
        self, what: str = "the run", *, grace: float = GRACE,
        loop_factory: Callable[[], asyncio.AbstractEventLoop] = asyncio.new_event_loop,
    ) -> None:
        self.what = what
        self.grace = grace
        self._loop = loop_factory()
        self._context = contextvars.copy_context()
        self._task: asyncio.Task[Any] | None = None
        self._interrupts = 0
        self._ctrl_c_at: float | None = None
        self._deadline = math.inf
        self._watchdog: threading.Timer | None = None
        self._exit_watchdog: threading.Timer | None = None  # armed once a Ctrl-C ends the command
        self._between_runs = contextlib.ExitStack()
        self._wakeup = WakeupPipe()

    def __enter__(self) -> CommandLoop:
        asyncio.set_event_loop(self._loop)
        self._loop.add_reader(self._wakeup.fileno(), self._wakeup.drain)
        self._between_runs.enter_context(self._sigint_handled(self._note_ctrl_c))
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close(after_ctrl_c=isinstance(exc, KeyboardInterrupt))

    def run(self, coro: Coroutine[Any, Any, T], *, ctrl_c: bool = True) -> T:
        """Run `coro` to its end and return its result.

        Args:
            coro: What to run.
            ctrl_c: Cancel it on Ctrl-C; False leaves Ctrl-C to `coro` (a server that handles signals).

        Raises:
            KeyboardInterrupt: Ctrl-C cancelled it, and it stopped within `grace` seconds.

        """
        self._task = task = self._loop.create_task(coro, context=self._context)
        self._interrupts = 0
        self._ctrl_c_at = None
        try:
            with self._sigint_handled() if ctrl_c else contextlib.nullcontext():
                result = self._loop.run_until_complete(task)
        except asyncio.CancelledError:
            if self._interrupts:
                raise KeyboardInterrupt from None
            raise
        finally:
            self._disarm()
            self._task = None
        if self._interrupts:
            raise KeyboardInterrupt
        return result

    @contextlib.contextmanager
    def closing(self, closers: Mapping[str, Closer]) -> Iterator[None]:
        """On leaving the block, however it ends, `finish(closers)`: bounded, after a Ctrl-C too.

        Args:
            closers: What to close, by the name a notice gives it (e.g. "the agent": `agent.close`).

        """
        ended_by: BaseException | None = None
        try:
            yield
        except BaseException as exc:
            ended_by = exc
            raise
        finally:
            self.finish(closers, after_ctrl_c=isinstance(ended_by, KeyboardInterrupt))

    def finish(self, closers: Mapping[str, Closer], *, after_ctrl_c: bool = False) -> None:
        """Close everything in `closers` at once; leave behind, with one line on stderr, what is not closed in time.

        In time is within `CLOSE_LIMIT` seconds, or after a Ctrl-C by the deadline of the
        cleanup that follows it (`EXIT_AFTER_CTRL_C` seconds from it). Once something is left
        behind, the cleanup after it (`close`) gets `_CLOSE` seconds in all. A Ctrl-C meanwhile
        quits at once.

        Args:
            closers: What to close, by the name the notice gives it.
            after_ctrl_c: A Ctrl-C ends the command.

        Raises:
            Exception: The first error a closer raised.

        """
        global _left_behind
        if after_ctrl_c:
            self._end_by_ctrl_c()
            within = f"{EXIT_AFTER_CTRL_C:g} s of Ctrl-C"
        else:
            within = f"{CLOSE_LIMIT:g} s"
        seconds = min(CLOSE_LIMIT, self._deadline - time.monotonic())
        still_open = list(closers)
        task = self._loop.create_task(_close_all(closers, still_open), context=self._context)
        with self._sigint_handled():  # no run to cancel: a Ctrl-C quits at once
            self._loop.run_until_complete(asyncio.wait([task], timeout=max(0.0, seconds)))
        if task.done():
            task.result()
            return
        _left_behind = True
        _say(f"{' and '.join(still_open)} did not close within {within}: left behind")
        self._deadline = min(self._deadline, time.monotonic() + _CLOSE)  # for all the cleanup left

    def call_soon_threadsafe(self, callback: Callable[..., object], *args: Any) -> None:
        """Have the loop call `callback(*args)` (safe from a signal handler or another thread)."""
        self._loop.call_soon_threadsafe(callback, *args)

    def close(self, *, after_ctrl_c: bool = False) -> None:
        """Cancel what is left, close the loop; wait for its executor only if no other thread is busy.

        Each step of the cleanup waits `_CLOSE` seconds at most, and after a Ctrl-C all of it,
        with `end_process` after it, ends within `EXIT_AFTER_CTRL_C` seconds of that Ctrl-C.

        Args:
            after_ctrl_c: A Ctrl-C ends the command: the one that cancelled the last `run`, or one just now.

        """
        loop = self._loop
        if loop.is_closed():
            return
        if after_ctrl_c:
            self._end_by_ctrl_c()
        try:
            with self._sigint_handled():
                self._finish_tasks()
                self._run_for_a_step(loop.shutdown_asyncgens())
                if not _other_threads():
                    self._run_for_a_step(loop.shutdown_default_executor())
        finally:
            self._between_runs.close()
            asyncio.set_event_loop(None)
            loop.remove_reader(self._wakeup.fileno())
            loop.close()  # shuts a busy executor down without waiting for it
            self._wakeup.close()

    def _end_by_ctrl_c(self) -> None:
        """Set the deadline of all that follows the Ctrl-C that ends the command (the last one), and its watchdog."""
        global _exit_deadline
        ctrl_c_at = time.monotonic() if self._ctrl_c_at is None else self._ctrl_c_at
        self._ctrl_c_at = ctrl_c_at
        self._deadline = _exit_deadline = ctrl_c_at + EXIT_AFTER_CTRL_C
        if self._exit_watchdog is None:
            late = f"interrupted: the cleanup did not end within {EXIT_AFTER_CTRL_C:g} s of Ctrl-C"
            self._exit_watchdog = watchdog(_exit_deadline + _WATCHDOG_SLACK - time.monotonic(), late)

    def _finish_tasks(self) -> None:
        tasks = asyncio.all_tasks(self._loop)
        for task in tasks:
            task.cancel()
        if tasks:
            self._loop.run_until_complete(asyncio.wait(tasks, timeout=self._step_seconds()))

    def _run_for_a_step(self, cleanup: Coroutine[Any, Any, None]) -> None:
        # Not asyncio.wait_for: after its timeout it waits for the cancelled cleanup, which
        # may ignore cancellation (an async generator that goes on awaiting in its finally).
        task = self._loop.create_task(cleanup)
        self._loop.run_until_complete(asyncio.wait([task], timeout=self._step_seconds()))

    def _step_seconds(self) -> float:
        return max(0.0, min(_CLOSE, self._deadline - time.monotonic()))

    @contextlib.contextmanager
    def _sigint_handled(self, handler: Callable[[int, FrameType | None], None] | None = None) -> Any:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.signal(signal.SIGINT, handler or self._on_sigint)
        try:
            with self._wakeup.installed():  # the loop wakes, and the handler runs, wherever the signal lands
                yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def _note_ctrl_c(self, signum: int, frame: FrameType | None) -> None:
        # Between runs (at a prompt) Ctrl-C raises KeyboardInterrupt, as Python's own handler
        # does; noting when lets the closing after it end in time.
        self._ctrl_c_at = time.monotonic()
        raise KeyboardInterrupt

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        self._interrupts += 1
        task = self._task
        if self._interrupts > 1 or task is None or task.done():
            quit_now()
        self._ctrl_c_at = time.monotonic()
        _say(f"\ncancelling {self.what}... (Ctrl-C again to quit at once)")
        task.cancel()
        self._loop.call_soon_threadsafe(_nothing)  # wake the loop if it waits in select()
        late = f"interrupted: {self.what} did not stop within {self.grace:g} s of Ctrl-C"
        self._watchdog = watchdog(self.grace, late)

    def _disarm(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None


def _nothing() -> None:
    pass


async def _close_all(closers: Mapping[str, Closer], still_open: list[str]) -> None:
    """Run every closer at once; `still_open` keeps the names of those not ended yet."""

    async def close(name: str, closer: Closer) -> None:
        try:
            await closer()
        finally:
            still_open.remove(name)

    outcomes = await asyncio.gather(*(close(n, c) for n, c in closers.items()), return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome


def _other_threads() -> list[threading.Thread]:
    """Threads the interpreter would wait for at exit, besides this one."""
    current = threading.current_thread()
    return [t for t in threading.enumerate() if t is not current and not t.daemon and t.is_alive()]


def end_process(code: int) -> NoReturn:
    """Exit with `code`; at once if threads are still busy (a cancelled run's workers) or a closing was left behind."""
    deadline = min(time.monotonic() + _JOIN, _exit_deadline)
    for thread in _other_threads():
        thread.join(max(0.0, deadline - time.monotonic()))
    if _other_threads() or _left_behind:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
    sys.exit(code)
