"""The PostgreSQL store's connections: one asyncpg pool and one `RunLocks` per event loop, closed when that loop ends.

asyncpg's connections belong to the event loop that opened them, so a store used from
several loops (a server's, a `run_sync` runner's) keeps a pool for each. Each pool closes
when its loop shuts its async generators down (`asyncio.run` returning, the `run_sync`
runner closing), through a generator started when the pool opened: so a script that never
calls `aclose()` still exits at once and cleanly.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type information

from hookline.sessions._postgres_locks import RunLocks

__all__ = ["LoopPools", "close_connection"]

_CLOSE_TIMEOUT = 2.0


class _LoopPool:
    """One event loop's pool and run locks, and the async generator that closes them when that loop ends."""

    __slots__ = ("closer", "lock", "pool", "run_locks")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.pool: Any = None
        self.run_locks: RunLocks | None = None
        self.closer: AsyncGenerator[None, None] | None = None


class LoopPools:
    """The pools of one database, one per event loop, opened on first use.

    Args:
        open_pool: Opens a pool (in the running loop).
        connect: Opens one connection, for the run locks' holder.
    """

    def __init__(self, open_pool: Callable[[], Awaitable[Any]], connect: Callable[[], Awaitable[Any]]) -> None:
        self._open_pool = open_pool
        self._connect = connect
        self._loops: dict[asyncio.AbstractEventLoop, _LoopPool] = {}
        self._guard = threading.Lock()

    async def pool(self) -> Any:
        """The running loop's pool, opened now if it is not yet."""
        loop = asyncio.get_running_loop()
        slot = self._loops.get(loop)
        if slot is not None and slot.pool is not None:
            return slot.pool
        with self._guard:
            slot = self._loops.setdefault(loop, _LoopPool())
        async with slot.lock:
            if slot.pool is None:
                pool = await self._open_pool()
                closer = self._close_at_loop_end(loop, slot)
                await anext(closer)  # started: the loop now closes it as it shuts down
                slot.pool, slot.closer = pool, closer
                slot.run_locks = RunLocks(self._connect, close_connection)
        return slot.pool

    async def run_locks(self) -> RunLocks:
        """The running loop's holder of run locks (its pool opened first: the schema then exists)."""
        await self.pool()
        run_locks = self._loops[asyncio.get_running_loop()].run_locks
        assert run_locks is not None  # set with the pool
        return run_locks

    async def aclose(self) -> None:
        """Close the running loop's pool (the next use opens it again); other loops' close when they end."""
        with self._guard:
            slot = self._loops.get(asyncio.get_running_loop())
        if slot is not None and slot.closer is not None:
            closer, slot.closer = slot.closer, None
            await closer.aclose()

    async def _close_at_loop_end(self, loop: asyncio.AbstractEventLoop, slot: _LoopPool) -> AsyncGenerator[None, None]:
        """Yield once, then close `slot`'s pool: at `aclose()`, or when `loop` shuts its generators down."""
        try:
            yield
        finally:
            with self._guard:
                if self._loops.get(loop) is slot:
                    del self._loops[loop]
            pool, slot.pool = slot.pool, None
            run_locks, slot.run_locks = slot.run_locks, None
            if run_locks is not None:
                await run_locks.aclose()
            if pool is not None:
                await _close_pool(pool)


async def _close_pool(pool: Any) -> None:
    """Close `pool` gracefully, or cut its connections if that takes longer than a moment."""
    try:
        await asyncio.wait_for(pool.close(), _CLOSE_TIMEOUT)
    except (TimeoutError, OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
        pool.terminate()


async def close_connection(conn: Any) -> None:
    """Close a connection; one already lost is simply dropped."""
    if conn.is_closed():
        return
    try:
        await conn.close(timeout=_CLOSE_TIMEOUT)
    except (TimeoutError, OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
        conn.terminate()
