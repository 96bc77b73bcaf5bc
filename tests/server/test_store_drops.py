"""A PostgreSQL connection that drops is a 503 with `Retry-After`, never a 500 or a 409 (issue 29, defect 5).

The run's lock lives on one connection per event loop (`sessions/_postgres_locks.py`): here a
tool kills that connection's backend mid-run, as a database restart or a network cut would.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest

from hookline import Agent, ToolCallPart, tool
from hookline.errors import StoreError
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.server import create_app
from hookline.sessions._postgres_dsn import describe, secrets
from hookline.sessions._postgres_errors import DriverErrors
from hookline.sessions.postgres import PostgresSessionStore

from .api import new_session
from .live import LiveServer

pytestmark = pytest.mark.anyio

_LOCK_HOLDERS = (
    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
    " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


def cutting_agent(url: str) -> Agent:
    @tool
    async def cut() -> str:
        """Kill the backend that holds the run's lock, and wait until it is gone."""
        admin = await asyncpg.connect(url)
        try:
            for row in await admin.fetch(_LOCK_HOLDERS):
                await admin.execute("SELECT pg_terminate_backend($1)", row["pid"])
            while await admin.fetch(_LOCK_HOLDERS):
                await asyncio.sleep(0.01)
        finally:
            await admin.close()
        await asyncio.sleep(0.2)  # the server's client notices its socket closed
        return "cut"

    def script(request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if last.role == "user" and last.text == "cut":
            return ModelResponse(tool_calls=[ToolCallPart(id="cut-1", name="cut", arguments={})])
        return ModelResponse(text="fine")

    return Agent("cutter", model=FunctionModel(script), tools=[cut])


@pytest.fixture
async def pg_client(postgres_url: str) -> AsyncIterator[httpx.AsyncClient]:
    store = PostgresSessionStore(postgres_url)
    server = LiveServer(create_app(cutting_agent(postgres_url), store, tokens={})).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            yield http
    finally:
        server.stop()


async def test_a_run_whose_lock_connection_died_answers_503_with_retry_after(pg_client: httpx.AsyncClient) -> None:
    session_id = await new_session(pg_client)
    cut = await pg_client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "cut"})
    assert cut.status_code == 503, cut.text
    assert cut.headers["retry-after"] == "1"
    assert cut.json()["error"] == "store_unavailable"
    again = await pg_client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "again"})
    assert again.status_code == 200, "nothing holds the session: the retry runs"
    assert again.json()["output"] == "fine"


async def test_asyncpgs_internal_client_error_is_a_store_error(postgres_url: str) -> None:
    """What asyncpg raises when a pooled connection dropped mid-statement is the store's failure, not a bug."""
    errors = DriverErrors(describe(postgres_url), secrets(postgres_url))
    with pytest.raises(StoreError, match="cannot reach PostgreSQL database"), errors.translated():
        raise asyncpg.InternalClientError("PoolConnectionHolder.connect() called while another connection exists")
