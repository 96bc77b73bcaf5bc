"""`LoopClients`: an SDK client for each event loop a model is used on.

An httpx connection pool belongs to the event loop it was opened on. A model used from two
loops — `run_sync` in one place, `asyncio.run` in another — needs a client for each, or
its second loop gets "Event loop is closed" from the first loop's connections.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

__all__ = ["LoopClients"]


class _Closeable(Protocol):
    async def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=_Closeable)


class LoopClients(Generic[ClientT]):
    """One client per event loop; the first is made up front, so bad settings fail at once.

    Args:
        make: Builds a client.
    """

    __slots__ = ("_by_loop", "_make", "_spare", "client")

    def __init__(self, make: Callable[[], ClientT]) -> None:
        self._make = make
        self.client = make()
        """The client made last (the first one until a loop uses it): for inspection."""
        self._spare: ClientT | None = self.client
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ClientT] = weakref.WeakKeyDictionary()

    def get(self) -> ClientT:
        """The client of the running loop (made on first use in that loop)."""
        loop = asyncio.get_running_loop()
        client = self._by_loop.get(loop)
        if client is None:
            if self._spare is not None:
                client, self._spare = self._spare, None
            else:
                client = self.client = self._make()
            self._by_loop[loop] = client
        return client

    async def aclose(self, *, close_client: bool) -> None:
        """Forget the running loop's client, and close it unless its HTTP client is the caller's."""
        client = self._by_loop.pop(asyncio.get_running_loop(), None)
        if client is not None and close_client:
            await client.close()
