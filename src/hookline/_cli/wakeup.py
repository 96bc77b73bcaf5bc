"""A pipe that signals write to, so that a wait in the main thread ends when one arrives.

Python runs a signal's handler in the main thread, between two steps of its code. A
signal that arrives while the main thread waits in a system call (`read()`, `select()`,
`epoll_wait()`) interrupts that call only if the kernel delivers it to the main thread
while it waits; one delivered to another thread, or just before the call, leaves it
waiting (for a line of input, for an event loop's next event) with the handler pending.
With `signal.set_wakeup_fd` every signal also writes a byte here: a wait that watches
`fileno()` ends, and the handler runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

__all__ = ["WakeupPipe"]


class WakeupPipe:
    """A non-blocking pipe that every signal writes a byte to while `installed()` (main thread only)."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)

    def fileno(self) -> int:
        """The end to wait on: readable once a signal has arrived."""
        return self._read

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Have every signal write here while the block runs; then restore the wakeup fd there was."""
        previous = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        try:
            yield
        finally:
            signal.set_wakeup_fd(previous)

    def drain(self) -> None:
        """Read what signals wrote, so that a wait on `fileno()` waits again."""
        with contextlib.suppress(BlockingIOError):
            while os.read(self._read, 4096):
                pass

    def close(self) -> None:
        """Close both ends."""
        os.close(self._read)
        os.close(self._write)
