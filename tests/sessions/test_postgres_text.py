"""PostgreSQL and text of any shape (issue 10, item 9): ids it cannot store, and the upgrade from jsonb.

PostgreSQL's `jsonb` refuses U+0000, so a prompt holding NUL used to fail there (and answer
503); its parts, metadata and state are now `json` columns. What every store does with
NUL and lone surrogates is part of the store contract (`hookline.testing.store_contract`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from hookline.errors import ConfigError
from hookline.events import Event
from hookline.messages import TextPart, ToolCallPart
from hookline.sessions import PostgresSessionStore, SessionStore
from support.postgres_db import older_database

pytestmark = pytest.mark.anyio

NUL = "before\x00after"


def nul_event() -> Event:
    call = ToolCallPart(id="c1", name="write", arguments={"text": NUL, NUL: [NUL]})
    return Event(author="user", role="user", parts=[TextPart(text=NUL), call], metadata={"note": NUL, NUL: 1})


@pytest.mark.parametrize("backend", ["postgres"])
@pytest.mark.parametrize("bad", ["a\x00b", "a\ud800b"])
async def test_postgres_refuses_a_session_id_it_cannot_store_as_a_clear_error(store: SessionStore, bad: str) -> None:
    with pytest.raises(ConfigError, match="PostgreSQL cannot store this text"):
        await store.create(session_id=bad)
    with pytest.raises(ConfigError, match="PostgreSQL cannot store this text"):
        await store.get(bad)


async def test_an_id_asyncpg_cannot_encode_leaves_no_connection_broken(postgres_dsn: str) -> None:
    # asyncpg fails to encode a lone surrogate after it has sent the statement: the server
    # waited in an implicit transaction, and the pool's next transaction on that connection
    # failed ("SET TRANSACTION ISOLATION LEVEL must be called before any query").
    async with PostgresSessionStore(postgres_dsn, max_size=1) as store:
        await store.create(session_id="kept")
        bad = "a\ud800b"
        one_statements = (
            lambda: store.open_for_run(bad), lambda: store.create(session_id=bad), lambda: store.events_after(bad, 0)
        )
        for one_statement in one_statements:
            with pytest.raises(ConfigError, match="PostgreSQL cannot store this text"):
                await one_statement()
            assert (await store.get("kept")).events == []


# --- the upgrade from jsonb ------------------------------------------------------------------


@pytest.fixture
async def old_database(postgres_server: str) -> AsyncIterator[str]:
    """A database as hookline left it before migration m003: jsonb columns, with a session in it."""
    async with older_database(postgres_server, 2, "hookline_old") as (url, conn):
        state = json.dumps({"k": [1, "x"]})
        row = "INSERT INTO hookline_sessions VALUES ('old', 'default', 'default', $1, 1, now(), now())"
        await conn.execute(row, state)
        parts = json.dumps([{"type": "text", "text": "from before"}])
        await conn.execute(
            "INSERT INTO hookline_events VALUES ('old', 1, 'e1', 'message', 'user', 'user', NULL, now(), $1, '{}')",
            parts,
        )
        yield url


async def test_a_database_from_before_is_upgraded_and_keeps_its_log(old_database: str) -> None:
    async with PostgresSessionStore(old_database) as store:
        old = await store.get("old")
        assert old.state == {"k": [1, "x"]}
        assert [e.text for e in old.events] == ["from before"]
        stored = await store.append_event("old", nul_event())
        assert stored.seq == 2
        assert (await store.events("old"))[-1].parts == nul_event().parts
        async with store.run_lock("old"):
            await store.append_event("old", Event(author="user", role="user", parts=[TextPart(text="locked")]))
        assert [e.seq for e in await store.events("old")] == [1, 2, 3]
