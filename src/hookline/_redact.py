"""`redact`: take credentials out of a text before it reaches an error answer, a log or a terminal.

Error messages quote what failed, and what failed is often a URL or a header: a
`postgresql://user:password@host/db` DSN, a proxy URL, `Authorization: Bearer ...`. Rather
than trust every message to leave them out, the surfaces that print or send errors (the
CLI, the HTTP server and its log) pass their text through this one function.
"""

from __future__ import annotations

import re

__all__ = ["REDACTED", "redact"]

REDACTED = "***"
"""What a credential is replaced with."""

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # scheme://user:password@host -> scheme://***@host (the user too: it is half the login);
    # greedy up to the last "@" before the path, for passwords that hold an unencoded "@"
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/'\"<>]+@"), rf"\1{REDACTED}@"),
    # "Authorization: Bearer <token>" or "Basic <credentials>" (capitalised as in a header,
    # so prose such as "a bearer token is required" is left alone)
    (re.compile(r"\b(Bearer|Basic)(\s+)(?!\.\.\.)[A-Za-z0-9._~+/=-]{3,}"), rf"\1\2{REDACTED}"),
    # password=..., api_key: ... (libpq keyword DSNs, query strings, JSON)
    (
        re.compile(
            r"(?i)\b((?:ssl)?password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)"
            r"(['\"]?\s*[=:]\s*['\"]?)[^\s&;,'\"]+"
        ),
        rf"\1\2{REDACTED}",
    ),
)


def redact(text: str) -> str:
    """Return `text` with URL credentials, bearer tokens and `password=`-style values replaced by `***`."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
