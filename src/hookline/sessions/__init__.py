"""The session-store seam and its backends, importable from one place.

The seam (`SessionStore`, `Session`) lives in `hookline.sessions.base` and is imported here
at once, with the store errors. The backends are loaded on first use (PEP 562
`__getattr__`): importing hookline opens no database module, and `PostgresSessionStore`
needs asyncpg (the `postgres` extra) only when it is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hookline.errors import InvalidEvent, SessionExists, StoreError
from hookline.sessions.base import Blob, LastWrite, RunHold, Session, SessionMatch, SessionStore, pages_back

if TYPE_CHECKING:
    from hookline.sessions.memory import InMemorySessionStore
    from hookline.sessions.postgres import PostgresSessionStore
    from hookline.sessions.sqlite import SQLiteSessionStore

__all__ = [
    "Blob",
    "InMemorySessionStore",
    "InvalidEvent",
    "LastWrite",
    "PostgresSessionStore",
    "RunHold",
    "SQLiteSessionStore",
    "Session",
    "SessionExists",
    "SessionMatch",
    "SessionStore",
    "StoreError",
    "pages_back",
]

_BACKENDS = {
    "InMemorySessionStore": "hookline.sessions.memory",
    "SQLiteSessionStore": "hookline.sessions.sqlite",
    "PostgresSessionStore": "hookline.sessions.postgres",
}
"""The backends importable from here but loaded on first use, each with the module that defines it."""

_EXTRAS = {"asyncpg": "postgres"}
"""Drivers a backend needs, each with the extra that installs it."""


def __getattr__(name: str) -> Any:
    """Load a backend on first use (PEP 562), so that importing this package opens no database module.

    Raises:
        ImportError: The backend's driver is not installed; the message says how to install it.
        AttributeError: `name` is no name of this module.

    """
    module = _BACKENDS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        backend = getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        extra = _EXTRAS.get(exc.name or "")
        if extra is None:
            raise
        raise ImportError(f"{name} needs {exc.name}: pip install 'hookline[{extra}]'") from exc
    globals()[name] = backend
    return backend


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_BACKENDS))
