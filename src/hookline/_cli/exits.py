"""Exit codes, and the one place that turns an exception into one line and a code.

Scripts rely on the codes, so each error class maps to exactly one of them:

| code | meaning |
|---|---|
| 0 | ok |
| 1 | the run failed: a model, hook, store or tool-loop error, or too many turns |
| 2 | usage or configuration error (bad option, unknown model provider, no model) |
| 3 | session not found, or busy with another run |
| 4 | the run stopped for approval of a tool call (`stop_reason == "interrupted"`) |
| 130 | interrupted with Ctrl-C |
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from enum import IntEnum

import typer

from hookline.errors import ConfigError, HooklineError, MaxTurnsExceeded, SessionBusy, SessionNotFound

__all__ = ["ExitCode", "UsageProblem", "error", "exit_code_for", "one_line", "report_errors"]


class ExitCode(IntEnum):
    """What `hookline` exits with."""

    OK = 0
    RUN_FAILED = 1
    USAGE = 2
    SESSION = 3
    INTERRUPTED = 4
    CTRL_C = 130


class UsageProblem(ConfigError):
    """A bad combination of command-line options (exit code 2)."""


def exit_code_for(error: BaseException) -> ExitCode:
    """Return the exit code an exception ends the command with."""
    if isinstance(error, KeyboardInterrupt):
        return ExitCode.CTRL_C
    if isinstance(error, ConfigError):
        return ExitCode.USAGE
    if isinstance(error, SessionNotFound | SessionBusy):
        return ExitCode.SESSION
    return ExitCode.RUN_FAILED


def one_line(text: str) -> str:
    """`text` on one line: its non-blank lines, stripped, joined by spaces."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def _describe(error: BaseException) -> str:
    if isinstance(error, MaxTurnsExceeded):
        return f"{error}; allow more with --max-turns"
    if isinstance(error, HooklineError):
        return str(error)
    return f"unexpected {type(error).__name__}: {error} (run again with --debug for the traceback)"


def error(message: str) -> None:
    """Write `message` to stderr as one `error:` line."""
    print(f"error: {one_line(message)}", file=sys.stderr, flush=True)


@contextmanager
def report_errors(*, debug: bool = False) -> Iterator[None]:
    """Turn any exception in the block into one line on stderr and `typer.Exit(code)`.

    Args:
        debug: Print the traceback first.

    """
    try:
        yield
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        raise typer.Exit(ExitCode.CTRL_C) from None
    except Exception as exc:
        if debug:
            traceback.print_exc(file=sys.stderr)
        error(_describe(exc))
        raise typer.Exit(exit_code_for(exc)) from None
