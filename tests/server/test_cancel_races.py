"""A server task cancelled in the very step that what it waits for comes stays cancelled.

On Python 3.11, `asyncio.wait_for` returns the awaited result when its caller is cancelled
in the loop step where that result arrives, and the cancellation is lost. Each test here
brings that step about (it completes the awaited thing and cancels the waiter with no
await between) and checks that the waiter stops, and that what it guarded does not happen:
an SSE stream whose client left writes no more frames; a watcher whose last reader left
reads the log no more.
"""

from __future__ import annotations

import asyncio

import pytest

from hookline import Event
from hookline.server.hub import SessionHub
from hookline.server.relay import Relay
from hookline.server.runs import RunManager
from hookline.server.sse import subscription_frames
from hookline.server.watcher import LogWatcher
from hookline.sessions import InMemorySessionStore
from support.waiting import DEADLINE, assert_cancelled, await_until

pytestmark = pytest.mark.anyio


def say(text: str) -> Event:
    return Event.status("agent", "agent", text)


async def test_an_sse_stream_cancelled_as_an_event_comes_writes_it_not_and_leaves_the_run() -> None:
    hub = SessionHub("s", limit=100, on_idle=lambda hub: None)
    hub.run_started()
    subscription = hub.subscribe()
    frames = subscription_frames(subscription, keepalive=DEADLINE)

    async def next_frame() -> bytes:
        return await anext(frames)

    reading = asyncio.create_task(next_frame())
    await await_until(lambda: subscription._wake._waiters, "the stream waits for the run's next event")
    hub.publish(say("thinking"))
    reading.cancel()  # in the same step: the stream's client left, or the server stops
    await assert_cancelled(reading)
    assert not hub.readers, "the cancelled stream still reads the run"
    with pytest.raises(StopAsyncIteration):
        await anext(frames)


async def test_a_watcher_whose_last_reader_leaves_as_an_append_is_announced_reads_the_log_no_more() -> None:
    store = InMemorySessionStore()
    runs = RunManager()
    relay = Relay(store, runs)
    await store.create(session_id="s")
    async with store.run_lock("s"):  # a run holds the session (another process's, for all the watcher knows)
        hub = runs.hub("s")
        hub.run_started()
        reader = hub.subscribe()
        watcher = LogWatcher(hub, read=relay.read, run_active=relay.run_active, running_here=lambda _: False,
                             idle=DEADLINE, poll=None, on_stop=lambda _: None)
        try:
            await await_until(lambda: watcher._wake._waiters, "the watcher waits for news of the run")
            appended = await store.append_event("s", say("thinking"))
            assert appended.seq is not None
            watcher.announced(appended.seq)
            reader.close()  # in the same step: its last reader left, so the watcher stops
            await await_until(lambda: watcher._task.done() or watcher.cursor > 0, "the watcher stops, or reads on")
            assert watcher.cursor == 0, "the stopped watcher read the log again"
            assert watcher._task.done()
        finally:
            watcher.stop()
