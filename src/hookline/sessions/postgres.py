"""The store for many processes on many machines: PostgreSQL, through an asyncpg pool.

`seq` comes from a per-session counter row (`hookline_sessions.last_seq`), bumped by the
same transaction that inserts the events. The `UPDATE` locks that row until the
transaction ends, so concurrent appends to one session queue behind each other and `seq`
stays gap-free and unique across any number of processes (a rolled-back append gives its
numbers back); appends to different sessions do not wait for each other.

`run_lock` takes a session-level advisory lock (`pg_try_advisory_lock`, polled until the
timeout) on a connection of its own, held for the whole run and closed at its end. If the
process dies, PostgreSQL drops the connection and the lock with it. The connection is not
taken from the pool, so runs holding locks can never starve appends of connections.

A pool belongs to the event loop that opened it: use one store from one loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type information

from hookline.errors import ConfigError, SessionBusy, SessionExists, SessionNotFound, StoreError
from hookline.events import Event
from hookline.sessions import Session, SessionStore
from hookline.sessions._codec import (
    accumulate,
    check_event,
    check_view,
    decode_events,
    decode_rows,
    decode_session,
    encode_event,
    encode_state,
    event_json_sql,
    merge_pending,
    new_id,
    poll_lock,
    stamp,
    utcnow,
)
from hookline.sessions._migrations import MIGRATIONS_TABLE, POSTGRES, create_migrations_table, plan
from hookline.types import View

__all__ = ["PostgresSessionStore"]

DATABASE_URL_ENV = "HOOKLINE_DATABASE_URL"
"""The environment variable a DSN is read from when none is given."""

_SETTINGS = {"timezone": "UTC", "application_name": "hookline"}
_MIGRATION_LOCK = (0x686F6F6B, 1)  # two-int advisory key ("hook", 1): apart from run locks
_QUOTE = "coalesce(to_json({})::text, 'null')"
_EVENT_JSON = event_json_sql(quote=_QUOTE, raw="{}::text", partial=False)
_PENDING_JSON = event_json_sql(quote=_QUOTE, raw="{}::text", partial=True)
_SESSION_COLUMNS = "id, app, user_id, state, created_at, updated_at"
_INSERT_SESSION = f"INSERT INTO hookline_sessions ({_SESSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
_INSERT_EVENT = (
    "INSERT INTO hookline_events (session_id, seq, id, kind, author, role, source, created_at, parts, metadata)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
)
_APPEND_HEAD = f"""
    WITH s AS (UPDATE hookline_sessions SET last_seq = last_seq + $2, updated_at = $3 WHERE id = $1
               RETURNING last_seq),
         p AS (DELETE FROM hookline_pending WHERE session_id = $1 AND author = ANY($4::text[])
               RETURNING {_PENDING_JSON} AS j)
    SELECT s.last_seq, p.j FROM s LEFT JOIN p ON true"""
_SAVE_PENDING = """
    INSERT INTO hookline_pending (session_id, author, id, kind, role, source, created_at, parts, metadata)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
    ON CONFLICT (session_id, author) DO UPDATE SET kind = EXCLUDED.kind, role = EXCLUDED.role,
        source = EXCLUDED.source, parts = EXCLUDED.parts, metadata = EXCLUDED.metadata"""


class PostgresSessionStore(SessionStore):
    """Sessions in a PostgreSQL database (JSONB parts), shared by any number of processes.

    Args:
        dsn: A libpq connection string or URL, e.g. `postgresql://user@host/db`. When
            None, it is read from the `HOOKLINE_DATABASE_URL` environment variable.
        min_size: Connections the pool keeps open.
        max_size: Connections the pool opens at most.

    The pool opens lazily on first use, and creates or upgrades the schema; `aclose()`
    closes it. JSONB cannot hold the character U+0000: text containing it is refused
    with `StoreError`.

    """

    def __init__(self, dsn: str | None = None, *, min_size: int = 1, max_size: int = 10) -> None:
        dsn = dsn or os.environ.get(DATABASE_URL_ENV)
        if not dsn:
            raise ConfigError(f"PostgresSessionStore needs a DSN: pass one, or set {DATABASE_URL_ENV}")
        self.dsn = dsn
        self.where = _redact(dsn)
        self._sizes = (min_size, max_size)
        self._pool: Any = None
        self._pool_lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"PostgresSessionStore({self.where!r})"

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except asyncpg.PostgresError as exc:
            raise StoreError(f"PostgreSQL database {self.where} failed: {exc}", where=self.where) from exc
        except (OSError, TimeoutError, asyncpg.InterfaceError) as exc:
            raise StoreError(f"cannot reach PostgreSQL database {self.where}: {exc}", where=self.where) from exc

    async def _ensure_pool(self) -> Any:
        async with self._pool_lock:
            if self._pool is None:
                min_size, max_size = self._sizes
                pool = await asyncpg.create_pool(
                    self.dsn, min_size=min_size, max_size=max_size, server_settings=_SETTINGS
                )
                try:
                    async with pool.acquire() as conn:
                        await self._migrate(conn)
                except BaseException:
                    await pool.close()
                    raise
                self._pool = pool
        return self._pool

    async def _migrate(self, conn: Any) -> None:
        if not plan(await _applied(conn), where=self.where):
            return
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1, $2)", *_MIGRATION_LOCK)
            await conn.execute(create_migrations_table(POSTGRES))
            for step in plan(await _applied(conn), where=self.where):
                for statement in step.statements(POSTGRES):
                    await conn.execute(statement)
                await conn.execute(f"INSERT INTO {MIGRATIONS_TABLE} VALUES ($1, $2)", step.name, utcnow())

    @asynccontextmanager
    async def _transaction(self, *, read_only: bool = False) -> AsyncIterator[Any]:
        with self._errors():
            pool = await self._ensure_pool()
            async with pool.acquire() as conn:
                isolation = "repeatable_read" if read_only else "read_committed"
                async with conn.transaction(isolation=isolation, readonly=read_only):
                    yield conn

    async def aclose(self) -> None:
        """Close the pool (the next use opens it again)."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()

    async def create(
        self,
        *,
        app: str = "default",
        user: str = "default",
        session_id: str | None = None,
        state: dict[str, Any] | None = None,
    ) -> Session:
        """Create a session (a new uuid4 hex id when `session_id` is None)."""
        session = Session(id=session_id or new_id(), app=app, user=user, state=dict(state or {}))
        session.created_at = session.updated_at = utcnow()
        row = (session.id, app, user, encode_state(session.state), session.created_at, session.created_at)
        async with self._transaction() as conn:
            try:
                await conn.execute(_INSERT_SESSION, *row)
            except asyncpg.UniqueViolationError as exc:
                raise SessionExists(session.id) from exc
        return session

    async def get(self, session_id: str, *, user: str | None = None, with_events: bool = True) -> Session:
        """Return the session with its events in the `ui` view (none when `with_events` is false)."""
        async with self._transaction(read_only=True) as conn:
            row = await conn.fetchrow(
                f"SELECT {_SESSION_COLUMNS} FROM hookline_sessions"
                " WHERE id = $1 AND ($2::text IS NULL OR user_id = $2)",
                session_id,
                user,
            )
            if row is None:
                raise SessionNotFound(session_id)
            events = await _read_events(conn, session_id, "ui", 0) if with_events else []
        session = decode_session(*row)
        session.events = events
        return session

    async def delete(self, session_id: str, *, user: str | None = None) -> None:
        """Delete a session and its whole log."""
        async with self._transaction() as conn:
            deleted = await conn.fetchval(
                "DELETE FROM hookline_sessions WHERE id = $1 AND ($2::text IS NULL OR user_id = $2) RETURNING id",
                session_id,
                user,
            )
            if deleted is None:
                raise SessionNotFound(session_id)

    async def append_events(self, session_id: str, events: Sequence[Event]) -> list[Event]:
        """Append events in one transaction; return them as stored."""
        checked = [check_event(e) for e in events]
        authors = sorted({e.author for e in checked})
        now = utcnow()
        async with self._transaction() as conn:
            head = await conn.fetch(_APPEND_HEAD, session_id, len(checked), now, authors)
            if not head:
                raise SessionNotFound(session_id)
            pending = {e.author: e for e in decode_rows(r[1:] for r in head if r[1])}
            first = int(head[0]["last_seq"]) - len(checked) + 1
            stored = [
                stamp(merge_pending(pending.pop(e.author, None), e), session_id=session_id, seq=seq, now=now)
                for seq, e in enumerate(checked, start=first)
            ]
            try:
                await conn.executemany(_INSERT_EVENT, [encode_event(e) for e in stored])
            except asyncpg.UniqueViolationError as exc:
                raise SessionBusy(session_id, "another writer took the same seq") from exc
        return stored

    async def prepare_event(self, session_id: str, event: Event) -> Event:
        """Add `event`'s parts to its author's pending parts; return the partial event."""
        event = check_event(event)
        now = utcnow()
        async with self._transaction() as conn:
            # Locking the session row first orders this after any append or prepare in flight.
            if await conn.fetchval(_TOUCH, session_id, now) is None:
                raise SessionNotFound(session_id)
            current = await conn.fetchval(
                f"SELECT {_PENDING_JSON} FROM hookline_pending WHERE session_id = $1 AND author = $2",
                session_id,
                event.author,
            )
            before = decode_events(f"[{current}]") if current else [None]
            partial = accumulate(before[0], event, session_id=session_id, now=now)
            r = encode_event(partial)
            await conn.execute(
                _SAVE_PENDING, r.session_id, r.author, r.id, r.kind, r.role, r.source, r.created_at, r.parts, r.metadata
            )
        return partial

    async def events(self, session_id: str, *, view: View = "all", after_seq: int = 0) -> list[Event]:
        """Return the events of `view` above `after_seq`; partial events come last (not in `prompt`)."""
        async with self._transaction(read_only=True) as conn:
            if await conn.fetchval("SELECT 1 FROM hookline_sessions WHERE id = $1", session_id) is None:
                raise SessionNotFound(session_id)
            return await _read_events(conn, session_id, view, after_seq)

    async def update_state(self, session_id: str, state: dict[str, Any]) -> None:
        """Replace the session's saved state."""
        encoded = encode_state(state)
        async with self._transaction() as conn:
            updated = await conn.fetchval(
                "UPDATE hookline_sessions SET state = $2, updated_at = $3 WHERE id = $1 RETURNING id",
                session_id,
                encoded,
                utcnow(),
            )
            if updated is None:
                raise SessionNotFound(session_id)

    @asynccontextmanager
    async def run_lock(self, session_id: str, *, timeout: float = 0.0) -> AsyncIterator[None]:
        """Hold the session for one run, across processes and machines; `SessionBusy` after `timeout` s.

        The lock is on the id, so a run may take it before creating its session.
        """
        key = _lock_key(session_id)
        with self._errors():
            conn = await asyncpg.connect(self.dsn, server_settings=_SETTINGS)
        try:

            async def take() -> bool:
                with self._errors():
                    return bool(await conn.fetchval("SELECT pg_try_advisory_lock($1)", key))

            await poll_lock(take, session_id=session_id, timeout=timeout)
            yield
        finally:
            # Closing the connection releases the lock.
            with self._errors():
                await conn.close()

    async def list(self, *, app: str | None = None, user: str | None = None) -> list[Session]:
        """Return the sessions of `app` and `user` (None: any), newest first, without their events."""
        async with self._transaction(read_only=True) as conn:
            rows = await conn.fetch(
                f"SELECT {_SESSION_COLUMNS} FROM hookline_sessions WHERE ($1::text IS NULL OR app = $1)"
                ' AND ($2::text IS NULL OR user_id = $2) ORDER BY created_at DESC, id COLLATE "C" DESC',
                app,
                user,
            )
        return [decode_session(*row) for row in rows]


_TOUCH = "UPDATE hookline_sessions SET updated_at = $2 WHERE id = $1 RETURNING id"


async def _applied(conn: Any) -> list[str]:
    if await conn.fetchval("SELECT to_regclass($1)", MIGRATIONS_TABLE) is None:
        return []
    return [row["name"] for row in await conn.fetch(f"SELECT name FROM {MIGRATIONS_TABLE}")]


async def _read_events(conn: Any, session_id: str, view: View, after_seq: int) -> list[Event]:
    kinds = _VIEW_KINDS[check_view(view)]
    rows = await conn.fetch(
        f"SELECT {_EVENT_JSON} FROM hookline_events WHERE session_id = $1 {kinds} AND seq > $2 ORDER BY seq",
        session_id,
        after_seq,
    )
    if view != "prompt":
        rows += await conn.fetch(
            f'SELECT {_PENDING_JSON} FROM hookline_pending WHERE session_id = $1 ORDER BY author COLLATE "C"',
            session_id,
        )
    return decode_rows(rows)


_VIEW_KINDS = {"prompt": "AND kind = 'message'", "ui": "AND kind <> 'marker'", "all": ""}


def _lock_key(session_id: str) -> int:
    """Return the 64-bit advisory-lock key of a session id."""
    digest = hashlib.blake2b(session_id.encode(), digest_size=8, person=b"hookline").digest()
    return int.from_bytes(digest, "big", signed=True)


def _redact(dsn: str) -> str:
    """Return `dsn` without its password, fit for error messages."""
    parts = urlsplit(dsn)
    if not parts.password:
        return dsn
    return urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@")))
