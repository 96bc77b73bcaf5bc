"""How long the inspector's session list takes to answer (`GET /v1/inspect/sessions`), on SQLite and PostgreSQL.

    python bench/bench_session_list.py            # 60 sessions, 30 requests per store
    python bench/bench_session_list.py --small    # a quick smoke run (10 requests)

The list answers the 50 newest sessions, each with its title and status: three small reads and
a check of its run lock per session, so its time follows the store's round trips. The app is
driven in process (httpx's ASGI transport); PostgreSQL runs in a throwaway database on the
server given by --postgres (default: HOOKLINE_BENCH_POSTGRES, else
postgresql://postgres@127.0.0.1:5432), dropped at the end; --no-postgres skips it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from bench_store import throwaway_database

from hookline import Agent
from hookline.events import Event
from hookline.messages import Message
from hookline.models import FunctionModel, ModelResponse
from hookline.server import create_app
from hookline.sessions import PostgresSessionStore, SessionStore, SQLiteSessionStore

SESSIONS = 60


async def bench(name: str, store: SessionStore, requests: int) -> str:
    """The list's median and fastest answer over `requests` requests, as a line of the report."""
    agent = Agent(model=FunctionModel(lambda request: ModelResponse(text="hi")), session_store=store)
    app = create_app(agent, store, tokens={})
    async with app.router.lifespan_context(app):
        for i in range(SESSIONS):
            session = await store.create(session_id=f"s{i}")
            await store.append_events(session.id, [Event.from_message(Message.user(f"question {i}"), "user"),
                                                   Event.from_message(Message.assistant("an answer"), "assistant")])
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://bench") as http:
            times = []
            for _ in range(requests):
                started = time.perf_counter()
                answer = await http.get("/v1/inspect/sessions")
                times.append((time.perf_counter() - started) * 1000)
                assert answer.status_code == 200, answer.text
    await store.aclose()
    return f"{name}: {statistics.median(times):.1f} ms median, {min(times):.1f} ms fastest ({requests} requests)"


async def main(small: bool, postgres: str | None) -> None:
    requests = 10 if small else 30
    with tempfile.TemporaryDirectory() as folder:
        print(await bench("sqlite", SQLiteSessionStore(Path(folder) / "bench.db"), requests))
    if postgres is not None:
        async with throwaway_database(postgres) as dsn:
            print(await bench("postgres", PostgresSessionStore(dsn), requests))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a quick smoke run")
    parser.add_argument("--postgres", default=os.environ.get("HOOKLINE_BENCH_POSTGRES",
                                                             "postgresql://postgres@127.0.0.1:5432"))
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.small, None if arguments.no_postgres else arguments.postgres))
