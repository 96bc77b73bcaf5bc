"""Reading a line of input that a Ctrl-C always interrupts (`hookline chat`'s prompts).

`input()` blocks in `read()`, which a signal interrupts only if it arrives during the
call, in the main thread. A Ctrl-C that lands just before it (between the prompt's write
and the read: a window a loaded machine can stretch) or in another thread only sets
Python's flag, and its handler waits for the read to return: for the next line, however
long that is. So `LineReader` waits in `select()` on stdin and on a `WakeupPipe`, which
the signal writes to wherever and whenever it lands: the wait ends, and the handler runs
as soon as Python code does. It then reads stdin itself, unbuffered by `sys.stdin`, so no
line waits unseen in a buffer that `select()` cannot see. (POSIX: `select()` on a pipe or
terminal. A stdin without a file descriptor, as a test runner's, is read with `input()`.)
"""

from __future__ import annotations

import contextlib
import os
import select
import sys

from hookline._cli.wakeup import WakeupPipe

__all__ = ["LineReader"]

_CHUNK = 65536


class LineReader:
    """Lines from a file descriptor (stdin by default), each read so that a signal's handler runs at once.

    Args:
        fd: What to read: a pipe, a terminal or a file.
        encoding: How its bytes are decoded; what does not decode is replaced, not raised.

    """

    def __init__(self, fd: int | None = None, encoding: str | None = None) -> None:
        self._fd = _stdin_fd() if fd is None else fd
        self._encoding = encoding or getattr(sys.stdin, "encoding", None) or "utf-8"
        self._buffer = b""
        self._ended = False

    def read_line(self, prompt: str = "") -> str | None:
        """Write `prompt` to stderr and return the next line, without its end; None at end of input.

        Raises:
            KeyboardInterrupt: Ctrl-C (whatever else the SIGINT handler of the moment raises).

        """
        print(prompt, end="", file=sys.stderr, flush=True)
        if self._fd is None:
            try:
                return input()
            except EOFError:
                return None
        while b"\n" not in self._buffer and not self._ended:
            self._wait_readable(self._fd)
            chunk = os.read(self._fd, _CHUNK)
            self._buffer += chunk
            self._ended = not chunk
        if not self._buffer:
            return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode(self._encoding, errors="replace").removesuffix("\r")

    def _wait_readable(self, fd: int) -> None:
        """Return once `fd` is readable; a signal meanwhile has its handler run (which may raise)."""
        with contextlib.closing(WakeupPipe()) as wakeup, wakeup.installed():
            while True:
                readable, _, _ = select.select([fd, wakeup.fileno()], [], [])
                # Back in Python code: a signal's handler has run by now, and raised if it would.
                if fd in readable:
                    return
                wakeup.drain()


def _stdin_fd() -> int | None:
    """Stdin's file descriptor; None when it has none."""
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by an object without one, or closed
        return None
