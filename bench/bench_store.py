"""Benchmark the SQL session stores: append latency, and loading the prompt view of long logs.

    python bench/bench_store.py            # 2000 appends; logs of 10,000 and 100,000 events
    python bench/bench_store.py --small    # a quick smoke run (200 appends; logs 10x shorter)

Append latency is measured one event per `append_event` call, as the loop writes them.
The prompt view is loaded from logs where most events are status lines: its cost should
follow the messages it returns, not the length of the log. PostgreSQL runs in a throwaway
database on the server given by --postgres (default: HOOKLINE_BENCH_POSTGRES, else
postgresql://postgres@127.0.0.1:5432), dropped at the end; --no-postgres skips it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg

from hookline.events import Event
from hookline.messages import TextPart, ToolCallPart, ToolResultPart
from hookline.sessions import PostgresSessionStore, SessionStore, SQLiteSessionStore

Row = tuple[str, str, str, str, str, str]
HEADER: Row = ("store", "operation", "log events", "returned", "p50 ms", "p99 ms")


def message(i: int) -> Event:
    """A message of a realistic size: user, assistant tool call, tool result, in turn."""
    if i % 3 == 0:
        return Event(author="user", role="user", parts=[TextPart(text=f"question {i}: " + "lorem ipsum " * 8)])
    if i % 3 == 1:
        call = ToolCallPart(id=f"c{i}", name="search", arguments={"query": f"topic {i}", "limit": 5})
        return Event(author="assistant", role="assistant", parts=[TextPart(text="Let me look."), call])
    result = ToolResultPart(call_id=f"c{i - 1}", content="result " * 40, name="search")
    return Event(author="search", role="tool", parts=[result])


def status(i: int) -> Event:
    return Event.status("assistant", "agent", f"turn {i}: calling model", turn=i)


def log(events: int, messages: int) -> list[Event]:
    """A log of `events` events, `messages` of them messages spread evenly among status lines."""
    every = events // messages
    return [message(i) if i % every == 0 else status(i) for i in range(events)]


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def row(store: str, operation: str, size: int, returned: int, samples: list[float]) -> Row:
    p50, p99 = (percentile(samples, q) * 1000 for q in (0.5, 0.99))
    return (store, operation, f"{size:,}", f"{returned:,}", f"{p50:.3f}", f"{p99:.3f}")


async def bench_appends(name: str, store: SessionStore, count: int) -> Row:
    session = await store.create()
    await store.append_event(session.id, message(0))  # connect and warm up outside the timing
    samples = []
    for i in range(count):
        event = message(i) if i % 2 else status(i)
        started = time.perf_counter()
        await store.append_event(session.id, event)
        samples.append(time.perf_counter() - started)
    return row(name, "append_event", count, 1, samples)


async def bench_view(name: str, store: SessionStore, size: int, messages: int, ui: bool) -> list[Row]:
    session = await store.create()
    events = log(size, messages)
    for start in range(0, size, 1000):
        await store.append_events(session.id, events[start : start + 1000])
    rows = []
    for view in ("prompt", "ui") if ui else ("prompt",):
        samples = []
        for _ in range(5):
            started = time.perf_counter()
            loaded = await store.events(session.id, view=view)
            samples.append(time.perf_counter() - started)
        rows.append(row(name, f"events(view={view!r})", size, len(loaded), samples))
    return rows


async def bench_store(name: str, open_store: Callable[[], SessionStore], small: bool) -> list[Row]:
    scale = 10 if small else 1
    async with open_store() as store:
        rows = [await bench_appends(name, store, 2000 // scale)]
        rows += await bench_view(name, store, 10_000 // scale, 1_000 // scale, ui=False)
        rows += await bench_view(name, store, 100_000 // scale, 10_000 // scale, ui=True)
        rows += await bench_view(name, store, 100_000 // scale, 1_000 // scale, ui=False)
    return rows


@asynccontextmanager
async def throwaway_database(server: str) -> AsyncIterator[str]:
    name = f"hookline_bench_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(f"{server}/postgres")
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        yield f"{server}/{name}"
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


def table(rows: list[Row]) -> str:
    lines = [HEADER, tuple("---" for _ in HEADER), *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


async def main(small: bool, postgres: str | None) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        rows += await bench_store("sqlite", lambda: SQLiteSessionStore(path), small)
    if postgres:
        async with throwaway_database(postgres) as dsn:
            rows += await bench_store("postgres", lambda: PostgresSessionStore(dsn), small)
    print(table(rows))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="a quick smoke run")
    default_server = os.environ.get("HOOKLINE_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--postgres", default=default_server, help="PostgreSQL server URL, without a database")
    parser.add_argument("--no-postgres", action="store_true", help="benchmark SQLite only")
    args = parser.parse_args()
    asyncio.run(main(args.small, None if args.no_postgres else args.postgres))
