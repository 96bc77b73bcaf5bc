"""The DSN of `PostgresSessionStore`, as its messages may show it: no user, no password.

`describe` names the database (`host:port/db`) for error messages; `secrets` lists the
strings of a DSN that must be scrubbed from any text the store lets out.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit

from hookline.errors import ConfigError

__all__ = ["describe", "secrets"]


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
