"""`/healthz` is liveness, `/readyz` readiness: it asks the store (issue 29, papercuts)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx
import pytest

from hookline.server import create_app
from hookline.sessions.postgres import PostgresSessionStore
from support.postgres_db import admin

from .agent import make_agent
from .live import TOKENS, LiveServer

pytestmark = pytest.mark.anyio

DEADLINE = 60.0


async def test_readyz_answers_without_a_token_when_the_store_answers(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(tokens=TOKENS)
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        ready = await http.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["status"] == "ok"
        assert (await http.get("/v1/sessions")).status_code == 401


async def test_a_database_dropped_then_created_again_is_ready_again_without_a_restart(postgres_url: str) -> None:
    store = PostgresSessionStore(postgres_url)
    server = LiveServer(create_app(make_agent(store), store, tokens={})).start()
    name = postgres_url.rsplit("/", 1)[1]
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            assert (await http.get("/readyz")).status_code == 200
            await admin(f'DROP DATABASE "{name}" WITH (FORCE)')
            gone = await http.get("/readyz")
            assert gone.status_code == 503
            assert gone.headers["retry-after"] == "1"
            assert gone.json()["error"] == "store_unavailable"
            assert (await http.get("/healthz")).status_code == 200, "alive all the same: no restart would help"

            await admin(f'CREATE DATABASE "{name}"')
            deadline = time.monotonic() + DEADLINE
            while (await http.get("/readyz")).status_code != 200:
                assert time.monotonic() < deadline, "never ready again"
                await asyncio.sleep(0.05)
            created = await http.post("/v1/sessions", json={})
            assert created.status_code == 201, "the tables are back"
    finally:
        server.stop()
