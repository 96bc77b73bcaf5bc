"""The one rule for the ids of new sessions, shared by the CLI, the server and the stores.

An id someone chooses must pass unquoted through a URL path, a shell and a log line: 1 to
128 characters among letters, digits, `_`, `.`, `:` and `-`, starting with a letter, a
digit or `_` (so it never reads as a command-line option or a hidden file). Generated ids
(`uuid4().hex`) follow it too. Ids of sessions that already exist are looked up as given.
"""

from __future__ import annotations

import re

from hookline.errors import ConfigError

__all__ = ["SESSION_ID_PATTERN", "SESSION_ID_RULE", "check_session_id", "session_id_problem"]

SESSION_ID_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$"
"""The rule as a regular expression (also published in the server's OpenAPI schema)."""

SESSION_ID_RULE = "1 to 128 letters, digits, '_', '.', ':' or '-', starting with a letter, a digit or '_'"
"""The rule in words, as every error message states it."""

# fullmatch, not `$`: in Python `$` also matches before a trailing newline.
_ID = re.compile(SESSION_ID_PATTERN.removeprefix("^").removesuffix("$"))
_SHOWN = 40


def session_id_problem(value: object) -> str | None:
    """Say what is wrong with `value` as the id of a new session, or None if it is valid."""
    if isinstance(value, str) and _ID.fullmatch(value):
        return None
    shown = repr(value if not isinstance(value, str) or len(value) <= _SHOWN else value[:_SHOWN] + "...")
    return f"invalid session id {shown}: use {SESSION_ID_RULE}"


def check_session_id(value: str) -> str:
    """Return `value` if it is a valid id for a new session.

    Raises:
        ConfigError: It breaks the rule; the message states the rule.

    """
    problem = session_id_problem(value)
    if problem is not None:
        raise ConfigError(problem)
    return value
