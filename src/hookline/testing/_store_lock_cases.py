"""A run cancelled while it takes or waits for a session's run lock leaves the session free.

Part of `SessionStoreContract` (`hookline.testing.store_contract`). A store that takes its
lock in a database can be cancelled after the database granted it but before the caller
learned so; whatever was taken must be given back, and the cancellation must still reach
the caller. These cases cancel a taker at many points and check that the session is free
at once, from the same store and from a second one on the same data (which sees a lock as
another process would, when the store's locks reach across processes).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from hookline.errors import SessionBusy
from hookline.sessions import SessionStore

__all__ = ["LockCancelCases"]

_POINTS = 12  # how many successive points of the taking a cancellation lands at
_DEADLINE = 60.0  # seconds a cancelled run gets to end


async def _hold(store: SessionStore, session_id: str) -> None:
    """A run that takes the lock and keeps it until cancelled."""
    async with store.run_lock(session_id):
        await asyncio.Event().wait()


async def _ended(task: asyncio.Task[None]) -> None:
    """Wait for `task` to end, at most `_DEADLINE` seconds; fail if it does not."""
    await asyncio.wait([task], timeout=_DEADLINE)
    if not task.done():
        task.cancel()
        raise AssertionError(f"a cancelled run_lock did not end within {_DEADLINE:g} s")


async def _assert_free(stores: list[SessionStore], session_id: str) -> None:
    for store in stores:
        async with store.run_lock(session_id, timeout=0):
            pass


class LockCancelCases:
    """The cases about cancelling a run while it takes the run lock or waits for it."""

    async def test_a_run_cancelled_while_it_takes_the_lock_leaves_the_session_free(
        self, open_store: Callable[[], SessionStore]
    ) -> None:
        """Cancelled at any point of taking the lock, a run raises `CancelledError` and holds nothing."""
        stores = [open_store(), open_store()]  # the second as another process
        session = await stores[0].create()
        for point in range(_POINTS):
            taker = asyncio.create_task(_hold(stores[0], session.id))
            for _ in range(point):
                await asyncio.sleep(0)  # let the taking go on a step further each time
            taker.cancel()
            await _ended(taker)
            assert taker.cancelled(), f"cancelled at point {point}, the run ended with {taker.exception()!r}"
            await _assert_free(stores, session.id)

    async def test_a_run_cancelled_as_the_holder_lets_go_leaves_the_session_free(
        self, open_store: Callable[[], SessionStore]
    ) -> None:
        """A waiting run cancelled at the moment the lock frees does not go on into its run."""
        stores = [open_store(), open_store()]  # the second as another process
        session = await stores[0].create()
        entered: list[str] = []

        async def wait_then_run() -> None:
            async with stores[0].run_lock(session.id, timeout=_DEADLINE):
                entered.append(session.id)

        async with stores[0].run_lock(session.id):
            waiter = asyncio.create_task(wait_then_run())
            for _ in range(_POINTS):
                await asyncio.sleep(0)  # it starts to wait
        accepted = waiter.cancel()  # right after the release: the waiter may be woken meanwhile
        await _ended(waiter)
        if accepted:  # not already through its run: the cancellation must reach it
            assert waiter.cancelled(), f"the cancelled run went on (entered: {bool(entered)})"
        await _assert_free(stores, session.id)

    async def test_run_active_tells_whether_a_run_holds_the_session_without_taking_its_lock(
        self, open_store: Callable[[], SessionStore]
    ) -> None:
        """`run_active` is true while a run holds the lock (seen from a second store too), and asking takes nothing."""
        stores = [open_store(), open_store()]  # the second as another process
        session = await stores[0].create()
        assert [await s.run_active(session.id) for s in stores] == [False, False]
        async with stores[0].run_lock(session.id):
            assert await stores[0].run_active(session.id)
            assert await stores[1].run_active(session.id) == await _shared(stores, session.id)
        assert [await s.run_active(session.id) for s in stores] == [False, False]
        if type(stores[0]).run_active is SessionStore.run_active:
            return  # the default takes the lock for an instant: a run starting then finds the session busy
        for _ in range(20):  # asked over and over, it never makes a run busy
            asking = asyncio.gather(*(stores[1].run_active(session.id) for _ in range(5)))
            async with stores[0].run_lock(session.id, timeout=0):
                pass
            await asking


async def _shared(stores: list[SessionStore], session_id: str) -> bool:
    """Whether the second store sees the first one's locks (as another process would, for a shared store)."""
    try:
        async with stores[1].run_lock(session_id, timeout=0):
            return False
    except SessionBusy:
        return True
