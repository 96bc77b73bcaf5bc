"""The PostgreSQL bus (`Notifier`) cancelled in the very step that what it waits for comes: it stays cancelled.

On Python 3.11, `asyncio.wait_for` returns the awaited result when its caller is cancelled
in the loop step where that result arrives, and the cancellation is lost. Here, against
the real server, a send cancelled as the connection comes up must send nothing (a
cancelled cancel request reached no run), and a notifier closed as its connection drops
must stop rather than connect again (and `aclose` must end).
"""

from __future__ import annotations

import asyncio

import pytest

from hookline.sessions._notify import Notifier
from support.waiting import DEADLINE, assert_cancelled, await_until

pytestmark = pytest.mark.anyio


async def test_a_send_cancelled_as_the_connection_comes_up_sends_nothing(postgres_dsn: str) -> None:
    heard: list[str] = []
    last_heard = asyncio.Event()
    listener = Notifier(postgres_dsn, where="listener")
    listener.on_control = lambda verb, session_id: (heard.append(f"{verb} {session_id}"), last_heard.set())
    sender = Notifier(postgres_dsn, where="sender")
    listener.start()
    sender.start()
    try:
        assert await listener.wait_connected(DEADLINE)
        assert await sender.wait_connected(DEADLINE)
        sender._ready.clear()  # as between a lost connection and the next one: a send waits for it
        sending = asyncio.create_task(sender.send("cancel", "s1", timeout=DEADLINE))
        await await_until(lambda: sender._ready._waiters, "the send waits for the connection")
        sender._ready.set()  # the connection is up (as `_hold` says it) ...
        sending.cancel()  # ... in the step the request sending it is cancelled
        await assert_cancelled(sending)
        await sender.send("ack", "s2", timeout=DEADLINE)
        await asyncio.wait_for(last_heard.wait(), DEADLINE)
        # Notifications arrive in commit order: a cancel sent would have come first.
        assert heard == ["ack s2"]
    finally:
        await sender.aclose()
        await listener.aclose()


async def test_a_notifier_closed_as_its_connection_drops_stops_and_connects_no_more(postgres_dsn: str) -> None:
    notifier = Notifier(postgres_dsn, where="test")
    reconnected = asyncio.Event()
    notifier.on_reconnect = reconnected.set
    notifier.start()
    supervisor = notifier._task
    assert supervisor is not None
    assert await notifier.wait_connected(DEADLINE)
    notifier._conn.terminate()  # the connection drops: its termination listener wakes the supervisor next step ...
    closing = asyncio.create_task(notifier.aclose())  # ... and in that step, `aclose` cancels the supervisor
    back = asyncio.create_task(reconnected.wait())
    try:
        await asyncio.wait([closing, back], timeout=DEADLINE, return_when=asyncio.FIRST_COMPLETED)
        assert not reconnected.is_set(), "the closed notifier connected again"
        assert closing.done(), "aclose never ended"
        assert supervisor.cancelled()
        assert not notifier.connected
    finally:
        back.cancel()
        supervisor.cancel()
        await asyncio.gather(closing, back, return_exceptions=True)
