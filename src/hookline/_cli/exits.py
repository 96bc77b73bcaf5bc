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

Every line passes through `hookline._redact.redact`, so a DSN's password or a bearer token
quoted by an error never reaches the terminal; click's own usage errors too, which quote the
argument they refuse (`hookline sessions list postgresql://user:password@host/db`, the
DSN given without `--db`), through `RedactingGroup`.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from enum import IntEnum
from typing import Any

import typer
from typer.core import TyperGroup

from hookline._redact import redact
from hookline.errors import ConfigError, HooklineError, MaxTurnsExceeded, ModelError, SessionBusy, SessionNotFound

__all__ = [
    "ExitCode", "RedactingGroup", "UsageProblem", "error", "exit_code_for", "key_variable", "one_line", "report_errors",
]


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
    if isinstance(error, ModelError):
        return _describe_model_error(error)
    if isinstance(error, HooklineError):
        return str(error)
    return f"unexpected {type(error).__name__}: {error} (run again with --debug for the traceback)"


def _describe_model_error(error: ModelError) -> str:
    """A model error, with the server it could not reach, or the key variable it refused."""
    message = str(error)
    if error.status_code is None and (url := _request_url(error)) is not None:
        return f"{message} (no answer from {url}: is the server running, and the base URL right?)"
    if error.status_code in (401, 403) and (variable := key_variable(error.provider)) is not None:
        return f"{message}; check {variable}, the {error.provider} API key"
    return message


def _request_url(error: BaseException) -> str | None:
    """The URL of the HTTP request behind an error (the SDK's exception is its `__cause__`)."""
    visited: set[int] = set()
    seen: BaseException | None = error
    while seen is not None and id(seen) not in visited:
        visited.add(id(seen))
        url = getattr(getattr(seen, "request", None), "url", None)
        if url is not None:
            return str(url)
        seen = seen.__cause__ or seen.__context__
    return None


def key_variable(provider: str) -> str | None:
    """The environment variable holding `provider`'s API key (`OPENAI_API_KEY`, ...), if known."""
    if provider == "anthropic":
        return "ANTHROPIC_API_KEY"
    try:
        from hookline.models.openai import PRESETS
    except ImportError:  # the openai SDK is not installed, so no OpenAI-compatible provider was used
        return None
    preset = PRESETS.get(provider)
    return preset.api_key_env if preset is not None else None


def error(message: str) -> None:
    """Write `message` to stderr as one `error:` line."""
    print(f"error: {one_line(redact(message))}", file=sys.stderr, flush=True)


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
            print(redact(traceback.format_exc()), end="", file=sys.stderr, flush=True)
        error(_describe(exc))
        raise typer.Exit(exit_code_for(exc)) from None


class RedactingGroup(TyperGroup):
    """The command group of `hookline`, whose usage errors (click's, printed by click) are redacted."""

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        """Parse the top-level options, a refused one's message redacted."""
        with _redacted_usage():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: Any) -> Any:
        """Run the subcommand (parsing its arguments), a refused one's message redacted."""
        with _redacted_usage():
            return super().invoke(ctx)


@contextmanager
def _redacted_usage() -> Iterator[None]:
    try:
        yield
    except typer.TyperException as exc:  # click's exceptions, as typer carries them
        if isinstance(message := getattr(exc, "message", None), str):
            exc.message = redact(message)
        raise
