"""`redact`: take credentials out of a text before it reaches an error answer, a log or a terminal.

Error messages quote what failed, and what failed is often a URL or a header: a
`postgresql://user:password@host/db` DSN, a proxy URL, `Authorization: Bearer ...`, a query
string's `?access_token=...`. Rather than trust every message to leave them out, every
surface that prints or sends text passes it through this one function: the CLI's lines
(errors, status lines, `sessions show`), the HTTP server's error answers, and every line of
the server's log, through `RedactingFilter` on its handler. A tool's failure is redacted where
it becomes a result, so the log, the model and every front end get the same clean text.
"""

from __future__ import annotations

import logging
import re

__all__ = ["REDACTED", "RedactingFilter", "redact"]

REDACTED = "***"
"""What a credential is replaced with."""

_SCHEME = r"\b([a-z][a-z0-9+.-]*://)"
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # scheme://user:password@host -> scheme://***@host (the user too: it is half the login).
    # Without a ":" the login ends at the first "/" (a path may hold "@"); with one (not a
    # port's: "host:8000/"), it runs to the last "@" of the word, for passwords that hold an
    # unencoded "/" or "@"
    (re.compile(rf"(?i){_SCHEME}(?:[^\s/:@'\"<>]*:(?!\d{{1,5}}/)[^\s'\"<>]*|[^\s/'\"<>]+)@"), rf"\1{REDACTED}@"),
    # "Authorization: Bearer <token>" or "Basic <credentials>" (capitalised as in a header,
    # so prose such as "a bearer token is required" is left alone)
    (re.compile(r"\b(Bearer|Basic)(\s+)(?!\.\.\.)[A-Za-z0-9._~+/=-]{3,}"), rf"\1\2{REDACTED}"),
    # password=..., api_key: ..., access_token=... (libpq keyword DSNs, query strings, JSON)
    (
        re.compile(
            r"(?i)\b((?:ssl)?password|passwd|pwd|\w*secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token)"
            r"(['\"]?\s*[=:]\s*['\"]?)[^\s&;,'\"]+"
        ),
        rf"\1\2{REDACTED}",
    ),
    # any other token=... or "token": "...", but not prose ("'token:user'"), nor "max_tokens=10"
    (re.compile(r"""(?i)\b(\w*token)(\s*=\s*['"]?|['"]\s*:\s*['"]?)[^\s&;,'"]+"""), rf"\1\2{REDACTED}"),
)


def redact(text: str) -> str:
    """Return `text` with URL credentials, bearer tokens and `password=`-style values replaced by `***`."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


class RedactingFilter(logging.Filter):
    """Take credentials out of a log record: its message, and its traceback (formatted here, then dropped).

    On a handler it cleans every record the handler writes, whichever logger made it (a
    filter on a logger sees only that logger's own records).
    """

    _formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact `record` in place; keep it."""
        record.msg, record.args = redact(record.getMessage()), None
        if record.exc_info:
            record.exc_text = self._formatter.formatException(record.exc_info)
            record.exc_info = None  # a handler formatting it again would see the unredacted text
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True
