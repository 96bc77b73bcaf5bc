"""The store for many processes on many machines: PostgreSQL, through asyncpg pools.

`seq` comes from a per-session counter row (`hookline_sessions.last_seq`), bumped by the
same transaction that inserts the events. The `UPDATE` locks that row until the
transaction ends, so concurrent appends to one session queue behind each other and `seq`
stays gap-free and unique across any number of processes (a rolled-back append gives its
numbers back); appends to different sessions do not wait for each other.

`run_lock` takes a session-level advisory lock (`pg_try_advisory_lock`, polled until the
timeout), held for the whole run and released at its end, on the one connection that holds
the run locks of the event loop (`_postgres_locks.py`). If the process dies, PostgreSQL drops
the connection and the locks with it. That connection is not taken from the pool, so runs
holding locks can never starve appends of connections.

Fencing. Because the run's writes go through pool connections, the lock alone does not
order them: a process killed while its commit is in flight loses its lock at once, yet
that commit may still land after the next run took the lock and read the log, so the next
run would redo work whose result is about to appear (a duplicate tool result). So every
lock draws a fresh epoch from the `hookline_lock_epochs` sequence and stamps it on the
session row (`lock_epoch`); every write made under the lock (by the task that holds it,
through a context variable) updates that row only `WHERE lock_epoch <= its epoch`. Two
things follow. The stamp is an `UPDATE` of the row each in-flight write has locked, so the
new holder waits for any such commit before it reads the log. And a writer whose lock was
lost writes nothing: one whose session a newer run has stamped gets `SessionBusy`; one
whose lock connection is seen closed gets `StoreError` at once (the database or the network
failed, and a retry takes the session again unless another run holds it by then). Epochs
come from one sequence, not from `lock_epoch + 1`, because a run may lock an id before its
session exists: `create` under the lock stamps the new row. Writes without a lock
(`prepare_event` from a front end, user code) are not fenced and work as before.

We chose this over the other sound design, running the run's writes on the lock's own
connection (the lock and the in-flight commit would then die together), because a
cancelled write, or one connection's failure, would then cost the run its lock, and the
run's writes would be serialised on one connection; the fence costs no extra round trip
per append (one condition on a row it already updates) and one statement per run.

Notifications. Every append announces itself on the `hookline_events` channel
(`pg_notify` inside its transaction, so PostgreSQL sends it at commit, and never for an
append that rolled back), with `"<last seq>:<session id>"` as payload: servers LISTEN to
follow runs of other processes (`hookline.sessions._notify`). A notification is only a
hint to read the log again, so one lost costs latency, never an event. `run_active` tells
whether a run holds a session, from `pg_locks`, without taking the lock.

Each event loop gets its own pool, closed when that loop ends (`asyncio.run` or the
`run_sync` runner shutting down), so a script that never calls `aclose()` still exits at
once and cleanly (`_postgres_pools.py`). Error messages name the database as `host:port/db`,
never with its user or password (`_postgres_errors.py`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from contextvars import ContextVar
from datetime import datetime
from functools import partial
from types import MappingProxyType
from typing import Any, NamedTuple, NoReturn

import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type information
from typing_extensions import override

from hookline.errors import (
    ConfigError,
    SessionBusy,
    SessionExists,
    SessionNotFound,
    StoreError,
)
from hookline.events import Event
from hookline.sessions import _postgres_sql as sql
from hookline.sessions._append import checked, seq_taken, stamped
from hookline.sessions._blobs import unheld, wanted_digests
from hookline.sessions._codec import (
    accumulate,
    decode_events,
    decode_rows,
    decode_session,
    encode_event,
    encode_state,
    new_id,
    poll_lock,
    stored_state,
    utcnow,
)
from hookline.sessions._migrations import MIGRATIONS_TABLE, POSTGRES, create_migrations_table, plan
from hookline.sessions._postgres_dsn import describe, secrets
from hookline.sessions._postgres_errors import DriverErrors
from hookline.sessions._postgres_pools import LoopPools, close_connection
from hookline.sessions._search import as_matched, json_form, like_pattern, mention_at
from hookline.sessions.base import (
    Blob,
    Session,
    SessionMatch,
    SessionStore,
    check_limit,
    check_list_limit,
    check_search,
)
from hookline.types import View

__all__ = ["EVENTS_CHANNEL", "PostgresSessionStore"]

DATABASE_URL_ENV = "HOOKLINE_DATABASE_URL"
"""The environment variable a DSN is read from when none is given."""

EVENTS_CHANNEL = sql.EVENTS_CHANNEL
"""The NOTIFY channel every append signals at its commit, with the payload `"<last seq>:<session id>"`."""

_SETTINGS = {"timezone": "UTC", "application_name": "hookline"}
_MIGRATION_LOCK = (0x686F6F6B, 1)  # two-int advisory key ("hook", 1): apart from run locks
_LOST = "this run lost its run lock (a newer run took the session); nothing was written"
_DROPPED = (
    "the connection holding this run's lock on the session dropped, so the run no longer holds it; nothing was "
    "written: run again"
)
_HELD = "a run holds it; cancel the run or wait for it to end, then delete the session"
_ALONE_COLUMNS = ("id", "kind", "author", "role", "source", "parts", "metadata")  # `sql.APPEND_ALONE`'s arrays


class _Fence(NamedTuple):
    """What a task holding a run lock writes under."""

    epoch: int
    """The epoch its lock stamped on the session row."""
    conn: Any
    """The connection holding the advisory lock (closed: the lock is gone)."""


_FENCES: ContextVar[Mapping[tuple[str, str], _Fence]] = ContextVar("hookline_fences", default=MappingProxyType({}))


class PostgresSessionStore(SessionStore):
    """Sessions in a PostgreSQL database, shared by any number of processes.

    Args:
        dsn: A `postgresql://` URL, e.g. `postgresql://user:password@host:5432/db`. When
            None, it is read from the `HOOKLINE_DATABASE_URL` environment variable.
        min_size: Connections each pool keeps open.
        max_size: Connections each pool opens at most.

    A pool opens lazily on first use in each event loop, and creates or upgrades the
    schema (each new connection checks it, so a database dropped and created again gets its
    tables back as the pool reconnects); it closes when that loop ends, or on `aclose()`.
    Text is stored as given, NUL included (parts, metadata and state are `json` columns).

    Raises:
        ConfigError: No DSN, or one that is not a `postgresql://` URL.

    """

    def __init__(self, dsn: str | None = None, *, min_size: int = 1, max_size: int = 10) -> None:
        dsn = dsn or os.environ.get(DATABASE_URL_ENV)
        if not dsn:
            raise ConfigError(f"PostgresSessionStore needs a DSN: pass one, or set {DATABASE_URL_ENV}")
        self.where = describe(dsn)
        self._dsn = dsn
        self._errors = DriverErrors(self.where, secrets(dsn))
        self._sizes = (min_size, max_size)
        self._pools = LoopPools(self._open_pool, self._connect)

    def __repr__(self) -> str:
        return f"PostgresSessionStore({self.where!r})"

    @property
    def dsn(self) -> str:
        """The DSN, password included: never put it in a message."""
        return self._dsn

    # -- connections: what `LoopPools` opens, one pool per event loop ----------------------

    async def _connect(self) -> Any:
        with self._errors.translated():
            return await asyncpg.connect(self._dsn, server_settings=_SETTINGS)

    async def _open_pool(self) -> Any:
        min_size, max_size = self._sizes
        try:
            # init: each new connection checks the schema (one query), so a database recreated
            # under a running server gets its tables again when the pool reconnects to it
            with self._errors.translated():
                return await asyncpg.create_pool(self._dsn, min_size=min_size, max_size=max_size,
                                                 server_settings=_SETTINGS, init=self._migrate, reset=_kept_as_is)
        except ValueError as exc:  # asyncpg's DSN parser
            raise self._errors.failure(ConfigError, f"invalid PostgreSQL DSN for {self.where}", exc)  # noqa: B904

    async def _migrate(self, conn: Any) -> None:
        if not plan(await _applied(conn), where=self.where):
            return
        async with conn.transaction():
            await conn.execute(sql.LOCK_MIGRATIONS, *_MIGRATION_LOCK)
            await conn.execute(create_migrations_table(POSTGRES))
            for step in plan(await _applied(conn), where=self.where):
                for statement in step.statements(POSTGRES):
                    await conn.execute(statement)
                await conn.execute(sql.RECORD_MIGRATION, step.name, utcnow())

    @asynccontextmanager
    async def _transaction(self, *, read_only: bool = False) -> AsyncIterator[Any]:
        pool = await self._pools.pool()
        with self._errors.translated():
            async with pool.acquire() as conn:
                isolation = "repeatable_read" if read_only else "read_committed"
                async with conn.transaction(isolation=isolation, readonly=read_only):
                    yield conn

    async def _one(
        self, method: str, statement: str, *args: Any, duplicate: Callable[[], Exception] | None = None
    ) -> Any:
        """Run one statement on a pool connection, without a transaction around it: one round trip.

        `method` is the connection's: "execute", "fetch", "fetchrow" or "fetchval". A unique
        violation raises what `duplicate` makes, when given.
        """
        pool = await self._pools.pool()
        with self._errors.translated():
            async with pool.acquire() as conn:
                try:
                    return await getattr(conn, method)(statement, *args)
                except asyncpg.UniqueViolationError as exc:
                    if duplicate is None:
                        raise
                    raise duplicate() from exc
                except asyncpg.DataError:
                    # A parameter asyncpg could not encode (a lone surrogate) fails once the
                    # statement is sent, leaving the server inside an implicit transaction:
                    # the connection would fail the next transaction that starts on it.
                    conn.terminate()
                    raise

    async def aclose(self) -> None:
        """Close the calling event loop's pool (the next use opens it again).

        Pools that other event loops opened close when those loops end.
        """
        await self._pools.aclose()

    # -- the fence ------------------------------------------------------------------------

    def _fence(self, session_id: str) -> int | None:
        """The epoch this task writes `session_id` under (None: no run lock held here)."""
        fence = _FENCES.get().get((self._dsn, session_id))
        if fence is None:
            return None
        if fence.conn.is_closed():  # the database or the network failed, not another run: worth a retry
            raise StoreError(f"session {session_id!r}: {_DROPPED}", where=self.where)
        return fence.epoch

    async def _refused(self, conn: Any, session_id: str) -> NoReturn:
        """Raise why a write to `session_id` changed no row: it is missing, or this run was fenced out."""
        if not await _exists(conn, session_id, None):
            raise SessionNotFound(session_id)
        raise SessionBusy(session_id, _LOST)

    # -- the store ------------------------------------------------------------------------

    @override
    async def create(
        self,
        *,
        app: str = "default",
        user: str = "default",
        session_id: str | None = None,
        state: dict[str, Any] | None = None,
    ) -> Session:
        kept, encoded = stored_state(state or {})
        session = Session(id=session_id or new_id(), app=app, user=user, state=kept)
        session.created_at = session.updated_at = utcnow()
        row = (session.id, app, user, encoded, session.created_at, session.created_at)
        fence = self._fence(session.id)
        await self._one("execute", sql.INSERT_SESSION, *row, fence, duplicate=partial(SessionExists, session.id))
        return session

    @override
    async def get(self, session_id: str, *, user: str | None = None, with_events: bool = True) -> Session:
        if not with_events:
            found = await self._one("fetchrow", sql.READ_SESSION, session_id, user)
            if found is None:
                raise SessionNotFound(session_id)
            return decode_session(*found)
        async with self._transaction(read_only=True) as conn:
            row = await conn.fetchrow(sql.READ_SESSION, session_id, user)
            if row is None:
                raise SessionNotFound(session_id)
            events = await _read_events(conn, session_id, "ui", 0)
        session = decode_session(*row)
        session.events = events
        return session

    @override
    async def open_for_run(
        self, session_id: str, *, user: str | None = "default", create: bool = True, app: str = "default"
    ) -> tuple[Session, list[Event]]:
        """The session a run starts on and its `prompt` view: one statement (a transaction to create a missing one)."""
        rows = await self._one("fetch", sql.OPEN_FOR_RUN, session_id, user)
        if rows and rows[0]["k"] == -1:
            return decode_session(*rows[0][2:]), decode_rows(r[1:] for r in rows[1:])
        if not create:
            raise SessionNotFound(session_id)
        now = utcnow()
        async with self._transaction() as conn:
            row = await conn.fetchrow(sql.READ_SESSION, session_id, user)
            if row is None and create:  # one created meanwhile (another process) is read instead
                new = (session_id, app, user or "default", encode_state({}), now, now, self._fence(session_id))
                await conn.execute(sql.CREATE_SESSION, *new)
                row = await conn.fetchrow(sql.READ_SESSION, session_id, user)
            if row is None:
                raise SessionNotFound(session_id)
            prompt = await _read_events(conn, session_id, "prompt", 0)
        return decode_session(*row), prompt

    async def delete(self, session_id: str, *, user: str | None = None) -> None:
        """Delete a session and its whole log; `SessionBusy` while a run holds it (in any process)."""
        async with self._transaction() as conn:
            # The run lock, for this transaction only: no run starts until the delete is
            # done, and if it cannot be taken, a run holds the session.
            if not await conn.fetchval(sql.LOCK_FOR_DELETE, _lock_key(session_id)):
                if await _exists(conn, session_id, user):
                    raise SessionBusy(session_id, _HELD)
                raise SessionNotFound(session_id)
            if await conn.fetchval(sql.DELETE_SESSION, session_id, user) is None:
                raise SessionNotFound(session_id)

    @override
    async def append_events(self, session_id: str, events: Sequence[Event]) -> list[Event]:
        return await self._append(session_id, events, None)

    @override
    async def append_and_save_state(
        self, session_id: str, events: Sequence[Event], state: dict[str, Any]
    ) -> list[Event]:
        return await self._append(session_id, events, encode_state(state))

    async def _append(self, session_id: str, events: Sequence[Event], state: str | None) -> list[Event]:
        """Append `events`, and replace the state with `state` (JSON) unless it is None.

        In one statement (one round trip, no transaction of its own) when the append brings
        no media and takes no prepared parts; else, or when that statement finds prepared
        parts, in a transaction that merges them.
        """
        events, blobs, named = checked(events)
        authors = sorted({e.author for e in events})
        now = utcnow()
        fence = self._fence(session_id)
        announced = len(session_id.encode("utf-8", "replace")) <= sql.NOTIFY_MAX_ID
        if not blobs and not named:
            alone = await self._append_alone(session_id, events, authors, (now, fence, state), announced)
            if alone is not None:
                return alone
        head_sql = sql.APPEND_HEAD_NOTIFY if announced else sql.APPEND_HEAD
        async with self._transaction() as conn:
            head = await conn.fetch(head_sql, session_id, len(events), now, authors, fence)
            if not head:
                await self._refused(conn, session_id)
            await _keep_blobs(conn, session_id, blobs, named)
            pending = {e.author: e for e in decode_rows(r[1:] for r in head if r[1])}
            first = int(head[0]["last_seq"]) - len(events) + 1
            stored = stamped(events, pending, session_id=session_id, first=first, now=now)
            try:
                await conn.executemany(sql.INSERT_EVENT, [encode_event(e) for e in stored])
            except asyncpg.UniqueViolationError as exc:
                raise seq_taken(session_id) from exc
            if state is not None:  # the row is locked and the fence checked: it updates
                await conn.execute(sql.UPDATE_STATE, session_id, state, now, fence)
        return stored

    async def _append_alone(
        self, session_id: str, events: Sequence[Event], authors: list[str],
        when: tuple[datetime, int | None, str | None], announced: bool,
    ) -> list[Event] | None:
        """The append as one statement (`sql.APPEND_ALONE`); None when it wrote nothing (see `_append`)."""
        now, fence, state = when
        stored = stamped(events, {}, session_id=session_id, first=0, now=now)
        rows = [encode_event(e) for e in stored]
        columns = [[getattr(r, name) for r in rows] for name in _ALONE_COLUMNS]
        statement = sql.APPEND_ALONE_NOTIFY if announced else sql.APPEND_ALONE
        parameters = (session_id, len(events), now, authors, fence, state, *columns)
        last = await self._one("fetchval", statement, *parameters, duplicate=partial(seq_taken, session_id))
        if last is None:
            return None
        for seq, event in enumerate(stored, int(last) - len(events) + 1):
            event.seq = seq
        return stored

    @override
    async def prepare_event(self, session_id: str, event: Event) -> Event:
        (event,), blobs, named = checked([event])
        now = utcnow()
        fence = self._fence(session_id)
        async with self._transaction() as conn:
            # Locking the session row first orders this after any append or prepare in flight.
            if await conn.fetchval(sql.TOUCH, session_id, now, fence) is None:
                await self._refused(conn, session_id)
            await _keep_blobs(conn, session_id, blobs, named)
            current = await conn.fetchval(sql.READ_PENDING_OF, session_id, event.author)
            before = decode_events(f"[{current}]") if current else [None]
            partial = accumulate(before[0], event, session_id=session_id, now=now)
            r = encode_event(partial)
            await conn.execute(
                sql.SAVE_PENDING,
                *(r.session_id, r.author, r.id, r.kind, r.role, r.source, r.created_at, r.parts, r.metadata),
            )
        return partial

    @override
    async def events(self, session_id: str, *, view: View = "all", after_seq: int = 0) -> list[Event]:
        async with self._transaction(read_only=True) as conn:
            if not await _exists(conn, session_id, None):
                raise SessionNotFound(session_id)
            return await _read_events(conn, session_id, view, after_seq)

    @override
    async def page(
        self, session_id: str, *, view: View = "all", after_seq: int = 0, before_seq: int | None = None,
        limit: int = 1000, newest: bool = False,
    ) -> list[Event]:
        check_limit(limit)
        query, tail = sql.read_page(view, newest=newest), before_seq is None and view != "prompt"
        rows = await self._one("fetch", query, session_id, after_seq, before_seq, limit + 1, tail)
        if not rows or rows[0][0] != 0:
            raise SessionNotFound(session_id)
        page = [row[3:] for row in rows if row[0] == 1]
        pending = [row[3:] for row in rows if row[0] == 2] if newest or len(page) <= limit else []
        page = page[:limit]
        if newest:
            page.reverse()
        return decode_rows(page + pending)

    @override
    async def roll_back(self, session_id: str, *, after_seq: int, through_seq: int) -> int:
        async with self._transaction() as conn:
            if not await _exists(conn, session_id, None):
                raise SessionNotFound(session_id)
            return int(await conn.fetchval(sql.ROLL_BACK, session_id, after_seq, through_seq))

    @override
    async def load_blobs(self, session_id: str, digests: Iterable[str]) -> dict[str, Blob]:
        wanted = wanted_digests(digests)
        if not wanted:
            return {}
        rows = await self._one("fetch", sql.READ_BLOBS, session_id, wanted)
        return {row["digest"]: Blob(row["media_type"], row["data"]) for row in rows}

    @override
    async def update_state(self, session_id: str, state: dict[str, Any]) -> None:
        encoded = encode_state(state)
        fence = self._fence(session_id)
        async with self._transaction() as conn:
            if await conn.fetchval(sql.UPDATE_STATE, session_id, encoded, utcnow(), fence) is None:
                await self._refused(conn, session_id)

    @asynccontextmanager
    async def run_lock(self, session_id: str, *, timeout: float = 0.0) -> AsyncIterator[None]:
        """Hold the session for one run, across processes and machines; `SessionBusy` after `timeout` s.

        The lock is on the id, so a run may take it before creating its session. Writes
        to the session from this task (and the tasks it starts) are fenced: once another
        run has taken the session over, they raise `SessionBusy` and write nothing.
        """
        key = _lock_key(session_id)
        await self._pools.pool()  # the schema, fence included, exists
        run_locks = await self._pools.run_locks()
        holder: Any = None

        async def take() -> bool:
            nonlocal holder
            with self._errors.translated():
                holder = await run_locks.take(key)
            return holder is not None

        await poll_lock(take, session_id=session_id, timeout=timeout)
        try:
            epoch = int(await self._one("fetchval", sql.CLAIM, session_id))
            token = _FENCES.set(MappingProxyType({**_FENCES.get(), (self._dsn, session_id): _Fence(epoch, holder)}))
            try:
                yield
            finally:
                with suppress(ValueError):  # exited in another context than entered: nothing to undo
                    _FENCES.reset(token)
        finally:
            await run_locks.release(key, holder)

    async def has_schema(self) -> bool:
        """Tell whether the database holds hookline's tables, without creating them (one connection, one query).

        Every other method creates or upgrades the schema first; a reader that must not
        write to a database that is not hookline's yet (`hookline sessions list`) asks this.
        """
        with self._errors.translated():
            conn = await asyncpg.connect(self._dsn, server_settings=_SETTINGS)
            try:
                return bool(await _applied(conn))
            finally:
                await close_connection(conn)

    @override
    async def run_active(self, session_id: str) -> bool:
        """Tell whether a run holds `session_id` now, in any process sharing the database.

        It reads `pg_locks` and takes no lock, so asking never makes a run starting at the
        same moment busy (a probe with `pg_try_advisory_lock` would, for its instant).
        """
        key = _lock_key(session_id) & 0xFFFF_FFFF_FFFF_FFFF
        return bool(await self._one("fetchval", sql.LOCK_HELD, key >> 32, key & 0xFFFF_FFFF))

    async def events_after(self, session_id: str, after_seq: int) -> list[Event]:
        """Return the stored events of every kind above `after_seq`, in one statement (no partial ones).

        What a follower reads on each notification: one round trip, where `events` takes
        five (a transaction, the session's existence, its pending parts). A missing session
        reads as no events.
        """
        return decode_rows(await self._one("fetch", sql.EVENTS_AFTER, session_id, after_seq))

    @override
    async def search(
        self, text: str, *, app: str | None = None, user: str | None = None, limit: int = 50
    ) -> list[SessionMatch]:
        """The sessions that mention `text`, newest first, at most `limit` (see `SessionStore.search`): one `SELECT`.

        `ILIKE` folds letters as the database's locale does (with `C.UTF-8`, accented ones too).
        """
        check_search(text, limit)
        query = sql.search(app=app is not None, user=user is not None)
        patterns = like_pattern(as_matched(text)), like_pattern(json_form(text))
        async with self._transaction(read_only=True) as conn:
            rows = await conn.fetch(query, *patterns, limit, app, user)
        return [SessionMatch(decode_session(*row[:6]), mention_at(row[6])) for row in rows]

    @override
    async def list(
        self, *, app: str | None = None, user: str | None = None, limit: int | None = None
    ) -> list[Session]:
        check_list_limit(limit)
        query = sql.list_sessions(app=app is not None, user=user is not None)
        async with self._transaction(read_only=True) as conn:
            rows = await conn.fetch(query, app, user, limit)
        return [decode_session(*row) for row in rows]


async def _kept_as_is(conn: Any) -> None:
    """A pool connection's reset: nothing to undo (asyncpg has already rolled back any transaction).

    The store's pool connections hold no session state (no LISTEN, session-level advisory
    lock, setting or cursor: those live on connections of their own), so asyncpg's default
    reset would be a round trip per transaction for nothing.
    """


async def _applied(conn: Any) -> list[str]:
    if await conn.fetchval(sql.MIGRATIONS_TABLE_EXISTS, MIGRATIONS_TABLE) is None:
        return []
    return [row["name"] for row in await conn.fetch(sql.APPLIED_MIGRATIONS)]


async def _exists(conn: Any, session_id: str, user: str | None) -> bool:
    return await conn.fetchval(sql.SESSION_EXISTS, session_id, user) is not None


async def _keep_blobs(conn: Any, session_id: str, blobs: Mapping[str, Blob], named: Sequence[str]) -> None:
    """Keep a write's `blobs`; first refuse it if its parts name bytes by `blob` alone (`named`) the session lacks.

    Run after the write has locked the session's row, so no delete of the session (and its
    bytes) comes between the check and the commit.
    """
    if named:
        missing = await conn.fetch(sql.UNHELD_BLOBS, session_id, list(named))
        if missing:
            raise unheld(session_id, [row["digest"] for row in missing])
    if blobs:
        rows = [(session_id, digest, blob.media_type, blob.data) for digest, blob in blobs.items()]
        await conn.executemany(sql.INSERT_BLOB, rows)


async def _read_events(conn: Any, session_id: str, view: View, after_seq: int) -> list[Event]:
    rows = await conn.fetch(sql.read_events(view), session_id, after_seq)
    if view != "prompt":
        rows += await conn.fetch(sql.READ_PENDING, session_id)
    return decode_rows(rows)


def _lock_key(session_id: str) -> int:
    """Return the 64-bit advisory-lock key of a session id."""
    digest = hashlib.blake2b(session_id.encode(), digest_size=8, person=b"hookline").digest()
    return int.from_bytes(digest, "big", signed=True)
