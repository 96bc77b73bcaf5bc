"""`LoopClients`: an SDK client for each event loop a model is used on.

An httpx connection pool belongs to the event loop it was opened on. A model used from two
loops — `run_sync` in one place, `asyncio.run` in another — needs a client for each, or
its second loop gets "Event loop is closed" from the first loop's connections.

Each client is closed on its own loop when that loop shuts down (`asyncio.run` ending,
or `run_sync`'s loop at interpreter exit), so a script that never calls `aclose()`
still exits without "unclosed transport" warnings. The hook for that is an async
generator started on the loop: asyncio closes every such generator in
`shutdown_asyncgens()`, while the loop still runs, and its `finally` closes the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncGenerator, Callable
from typing import Generic, Protocol, TypeVar

__all__ = ["LoopClients"]


class _Closeable(Protocol):
    async def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=_Closeable)


class LoopClients(Generic[ClientT]):
    """One client per event loop; the first is made up front, so bad settings fail at once.

    Args:
        make: Builds a client.
        close_client: Whether closing a client is ours to do (False when it wraps an HTTP
            client the caller passed in and closes).
    """

    __slots__ = ("_by_loop", "_close_client", "_make", "_spare", "client")

    def __init__(self, make: Callable[[], ClientT], *, close_client: bool = True) -> None:
        self._make = make
        self._close_client = close_client
        self.client = make()
        """The client made last (the first one until a loop uses it): for inspection."""
        self._spare: ClientT | None = self.client
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopClient[ClientT]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self) -> ClientT:
        """The client of the running loop (made on first use in that loop)."""
        loop = asyncio.get_running_loop()
        entry = self._by_loop.get(loop)
        if entry is None:
            if self._spare is not None:
                client, self._spare = self._spare, None
            else:
                client = self.client = self._make()
            entry = self._by_loop[loop] = _LoopClient(client, self._close_client, self._forget(loop))
        return entry.client

    def _forget(self, loop: asyncio.AbstractEventLoop) -> Callable[[_Closeable], None]:
        # Weakly: an entry must not keep its loop, or this object, alive.
        by_loop, key = weakref.ref(self._by_loop), weakref.ref(loop)

        def forget(client: _Closeable) -> None:
            clients, known = by_loop(), key()
            if clients is None or known is None:
                return
            entry = clients.get(known)
            if entry is not None and entry.client is client:  # not a newer client of that loop
                del clients[known]

        return forget

    async def aclose(self) -> None:
        """Close the running loop's client (unless its HTTP client is the caller's) and forget it."""
        entry = self._by_loop.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry.aclose()


class _LoopClient(Generic[ClientT]):
    """A client, and the async generator that closes it when its loop shuts down."""

    __slots__ = ("client", "closer")

    def __init__(self, client: ClientT, close_client: bool, forget: Callable[[_Closeable], None]) -> None:
        self.client = client
        self.closer = _closer(client, close_client, forget)
        # Run it to its `yield` now: that registers it with the running loop's
        # `shutdown_asyncgens()` and needs no await, as nothing before the yield awaits.
        with contextlib.suppress(StopIteration):
            self.closer.asend(None).__await__().send(None)

    async def aclose(self) -> None:
        await self.closer.aclose()


async def _closer(
    client: _Closeable, close_client: bool, forget: Callable[[_Closeable], None]
) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        # The generator holds its loop (asyncio's finalizer hook): once done, let go of it.
        forget(client)
        if close_client:
            await client.close()
