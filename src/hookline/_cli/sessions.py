"""`hookline sessions list|show|rm|export`: read and delete stored sessions (and export one as an eval case).

Reading never creates a database, nor its tables: a SQLite file that does not exist, or a
PostgreSQL database without hookline's tables, holds no sessions (and is left as it was).
Markers (the loop's own bookkeeping, e.g. that a tool call started) are neither shown
nor exported.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import TypeVar

from rich.console import Console

from hookline._cli.render import event_lines, is_shown, sessions_table
from hookline._cli.setup import is_postgres, open_store, store_location
from hookline._redact import redact
from hookline.errors import SessionNotFound
from hookline.sessions import Session, SessionStore

__all__ = ["export_session", "list_sessions", "remove_session", "show_session"]

T = TypeVar("T")


def _with_store(db: str | None, session_id: str | None, action: Callable[[SessionStore], Awaitable[T]]) -> T | None:
    """Run `action` on the store; None when it holds no sessions (no SQLite file, no hookline tables)."""
    location = store_location(db)
    if not is_postgres(location) and not os.path.exists(location):
        if session_id is not None:
            raise SessionNotFound(session_id)
        return None

    async def run() -> T | None:
        store = open_store(location)
        try:
            if not await _holds_tables(store):
                if session_id is not None:
                    raise SessionNotFound(session_id)
                return None
            return await action(store)
        finally:
            await store.aclose()

    return asyncio.run(run())


async def _holds_tables(store: SessionStore) -> bool:
    """False for a PostgreSQL database without hookline's tables (asked without creating them)."""
    has_schema = getattr(store, "has_schema", None)  # `PostgresSessionStore.has_schema`
    return has_schema is None or bool(await has_schema())


def list_sessions(db: str | None, *, as_json: bool, limit: int, console: Console) -> None:
    """Print the newest `limit` sessions, newest first: a table, or one JSON object a line.

    When the store holds more, a line on stderr says so (standard output stays the list).
    """

    async def fetch(store: SessionStore) -> list[Session]:
        return await store.list(limit=limit + 1)

    sessions = _with_store(db, None, fetch) or []
    if len(sessions) > limit:
        sessions = sessions[:limit]
        Console(stderr=True).print(f"the newest {limit} sessions; --limit N lists more", style="dim", soft_wrap=True)
    if as_json:
        for session in sessions:
            print(session.model_dump_json(exclude={"events"}), flush=True)
    elif sessions:
        console.print(sessions_table(sessions), soft_wrap=True)
    else:
        Console(stderr=True).print(f"no sessions in {redact(store_location(db))}", style="dim", soft_wrap=True)


def show_session(db: str | None, session_id: str, *, console: Console) -> None:
    """Print a session's log: messages by role, status lines dim with their source."""

    async def fetch(store: SessionStore) -> Session:
        return await store.get(session_id)

    session = _with_store(db, session_id, fetch)
    assert session is not None
    console.print(f"session {session.id}  user {session.user}  app {session.app}", style="bold", soft_wrap=True)
    for event in session.events:
        for line in event_lines(event):
            console.print(line, soft_wrap=True)


_EXPORT_PAGE = 1000  # events read from the store at a time: a long session is never held whole


def export_session(db: str | None, session_id: str, *, as_case: str | None = None) -> None:
    """Print a session's whole log (view `all`, markers left out) as JSON lines of `Event`, a page at a time.

    With `as_case` (a name), print instead the eval case the session makes (`Case.of_session`), as JSON.
    """

    async def fetch(store: SessionStore) -> None:
        if as_case is not None:
            from hookline.evals._export import CASE_VIEW, case_json

            print(case_json(await store.events(session_id, view=CASE_VIEW), as_case, session_id), end="", flush=True)
            return
        after = 0
        while True:
            page = await store.page(session_id, view="all", after_seq=after, limit=_EXPORT_PAGE)
            for event in page:
                if is_shown(event):
                    print(event.model_dump_json(), flush=True)
            stored = [e.seq for e in page if e.seq is not None and not e.partial]
            if len(stored) < _EXPORT_PAGE:
                return
            after = stored[-1]

    _with_store(db, session_id, fetch)


def remove_session(db: str | None, session_id: str) -> None:
    """Delete a session and its log."""

    async def delete(store: SessionStore) -> None:
        await store.delete(session_id)

    _with_store(db, session_id, delete)
