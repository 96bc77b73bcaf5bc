"""A separate OS process acting on a shared store, for test_store_processes.py.

    python store_worker.py BACKEND TARGET SESSION append COUNT TAG
        connect, print "ready", wait for a line on stdin (so workers start together), then
        append COUNT events one at a time, each with metadata {"worker": TAG, "i": i}
    python store_worker.py BACKEND TARGET SESSION hold SECONDS
        take the session's run lock, print "locked", hold it SECONDS, release it

BACKEND is sqlite (TARGET a file) or postgres (TARGET a DSN).
"""

from __future__ import annotations

import asyncio
import sys

from hookline.events import Event
from hookline.messages import TextPart
from hookline.sessions import PostgresSessionStore, SessionStore, SQLiteSessionStore


async def append(store: SessionStore, session_id: str, count: int, tag: str) -> None:
    await store.events(session_id)
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(count):
        text = f"{tag}-{i}"
        event = Event(author=tag, role="user", parts=[TextPart(text=text)], metadata={"worker": tag, "i": i})
        await store.append_event(session_id, event)


async def hold(store: SessionStore, session_id: str, seconds: float) -> None:
    async with store.run_lock(session_id, timeout=10):
        print("locked", flush=True)
        await asyncio.sleep(seconds)


async def main(backend: str, target: str, session_id: str, action: str, *args: str) -> None:
    store = SQLiteSessionStore(target) if backend == "sqlite" else PostgresSessionStore(target)
    async with store:
        if action == "append":
            await append(store, session_id, int(args[0]), args[1])
        else:
            await hold(store, session_id, float(args[0]))
    print("done", flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
