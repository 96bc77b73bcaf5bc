"""Run locks on PostgreSQL: one connection per event loop holds every run lock its runs take.

A session-level advisory lock lives as long as the connection that took it, so a process
that dies frees its locks at once. Opening a connection for each run made that connection
the cost of a run (a connect and a close, a few milliseconds, and one server backend per
running run); one connection holding them all costs two short statements per run.

Two things the shared connection changes. Advisory locks nest on one connection (taking a
key twice succeeds twice), so the keys held here are also kept in memory and a second run of
this process on a held session waits as one from another process would. And when the
connection drops, every lock on it goes at once: the runs that held them are fenced out by
their next write (see `postgres.py`), and the next run opens a new connection.

A run cancelled while the server answers its `pg_try_advisory_lock` may have been granted
the lock all the same (asyncpg drops the answer), and nothing but that connection's end
would free it: so the lock is given back whenever its taker does not learn the answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["RunLocks"]

_TAKE = "SELECT pg_try_advisory_lock($1)"
_RELEASE = "SELECT pg_advisory_unlock($1)"


class RunLocks:
    """The run locks of one event loop, on one connection opened when first needed.

    Args:
        connect: Opens a new connection (the store's DSN and settings).
        close: Closes a connection, dropping one already lost.

    """

    def __init__(self, connect: Callable[[], Awaitable[Any]], close: Callable[[Any], Awaitable[None]]) -> None:
        self._connect = connect
        self._close = close
        self._conn: Any = None
        self._statement = asyncio.Lock()  # a connection runs one statement at a time
        self._held: dict[int, Any] = {}  # key -> the connection holding it

    async def take(self, key: int) -> Any | None:
        """Take `key` if it is free in every process; return the connection that holds it, else None.

        A caller cancelled (or failing) while the server answers gives the lock back, in
        case it was granted, before its exception goes on.
        """
        asked: Any = None  # the connection asked for `key`, until it answers
        try:
            async with self._statement:
                conn = await self._connection()
                if self._held.get(key) is conn:
                    return None
                # Marked held while asked, so that `release` gives back a lock granted unseen.
                self._held[key] = asked = conn
                taken = await conn.fetchval(_TAKE, key)
                asked = None
                if not taken:
                    del self._held[key]
                    return None
                return conn
        except BaseException:
            if asked is not None:
                await self.release(key, asked)
            raise

    async def release(self, key: int, conn: Any) -> None:
        """Give `key` back; it runs to its end even when the caller is cancelled, and never fails."""
        await asyncio.shield(self._release(key, conn))

    async def _release(self, key: int, conn: Any) -> None:
        async with self._statement:
            holder = self._held.get(key)
            if holder is None or holder is not conn:  # lost with an older connection: nothing to give back
                return
            del self._held[key]
            try:
                if not holder.is_closed():
                    await holder.fetchval(_RELEASE, key)
            except Exception:
                # The lock may still be held: drop the connection, and with it every lock
                # (their runs are fenced out), rather than keep a session busy until this
                # process ends. The caller has nothing left to act on.
                holder.terminate()
            except BaseException:
                holder.terminate()
                raise

    async def _connection(self) -> Any:
        if self._conn is None or self._conn.is_closed():
            self._conn = await self._connect()
        return self._conn

    async def aclose(self) -> None:
        """Close the connection, which frees every lock still on it."""
        conn, self._conn = self._conn, None
        self._held.clear()
        if conn is not None:
            await self._close(conn)
