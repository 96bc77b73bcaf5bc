"""The DSN of `PostgresSessionStore`, as its messages may show it: no user, no password.

`describe` names the database (`host:port/db`) for error messages; `secrets` lists the
strings of a DSN that must be scrubbed from any text the store lets out.
"""

from __future__ import annotations

from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit

from hookline.errors import ConfigError

__all__ = ["describe", "secrets"]

_UNENCODED = (
    "the PostgreSQL DSN's user or password holds a '/', '?' or '#' that is not percent-encoded, so the "
    "URL ends its login there; encode them (%2F, %3F, %23: urllib.parse.quote(password, safe=''))"
)


def describe(dsn: str) -> str:
    """Return `host:port/db` of a DSN, fit for messages: no user, no password, no options.

    Raises:
        ConfigError: It is not a `postgresql://` URL (asyncpg takes no other form).

    """
    try:
        parts = urlsplit(dsn)
    except ValueError as exc:
        raise ConfigError(f"the PostgreSQL DSN is not a URL ({exc}); expected postgresql://host:port/db") from None
    if parts.scheme not in ("postgresql", "postgres"):
        raise ConfigError(f"the PostgreSQL DSN must start with postgresql://, not {parts.scheme or 'no scheme'}://")
    if _login_cut_short(parts):
        raise ConfigError(_UNENCODED)
    hosts = parts.netloc.rpartition("@")[2] or dict(parse_qsl(parts.query)).get("host", "") or "localhost"
    database = unquote(parts.path.lstrip("/"))
    return f"{hosts}/{database}" if database else hosts


def secrets(dsn: str) -> tuple[str, ...]:
    """Return the strings of `dsn` that must never appear in a message: the DSN, its passwords."""
    parts = urlsplit(dsn)
    found = {dsn}
    userinfo = parts.netloc.rpartition("@")[0]
    if ":" in userinfo:
        password = userinfo.partition(":")[2]
        found |= {password, unquote(password)}
    found |= {value for key, value in parse_qsl(parts.query) if "password" in key.lower()}
    return tuple(sorted((s for s in found if s), key=len, reverse=True))


def _login_cut_short(parts: SplitResult) -> bool:
    """Whether a `/`, `?` or `#` of the login ended the host early: the `@` that ends the login comes after it."""
    if "@" in parts.netloc:
        return False
    query_key = parts.query.partition("&")[0].partition("=")[0]
    return "@" in parts.path or "@" in query_key or "@" in parts.fragment
