"""Text of any shape in the stores (issue 10, item 9): NUL stored faithfully, lone surrogates replaced.

PostgreSQL's `jsonb` refuses U+0000, so a prompt holding NUL used to fail there (and answer
503); its parts, metadata and state are now `json` columns. Lone surrogates cannot be
UTF-8 encoded by any store: every store replaces each with U+FFFD, and returns what it
stored. Run on every store, so they cannot drift apart.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest

from hookline.errors import ConfigError, InvalidEvent
from hookline.events import Event
from hookline.messages import TextPart, ToolCallPart, ToolResultPart
from hookline.sessions import PostgresSessionStore, SessionStore
from hookline.sessions._migrations import MIGRATIONS, POSTGRES, create_migrations_table

pytestmark = pytest.mark.anyio

NUL = "before\x00after"
LONE = "a\ud800b\udc00c"
REPLACED = "a\ufffdb\ufffdc"


def nul_event() -> Event:
    call = ToolCallPart(id="c1", name="write", arguments={"text": NUL, NUL: [NUL]})
    return Event(author="user", role="user", parts=[TextPart(text=NUL), call], metadata={"note": NUL, NUL: 1})


async def test_nul_is_stored_faithfully(store: SessionStore) -> None:
    session = await store.create(state={"k": NUL})
    stored = await store.append_event(session.id, nul_event())
    assert stored.parts == nul_event().parts
    for events in (await store.events(session.id), await store.events(session.id, view="prompt")):
        assert events[0].parts == nul_event().parts
        assert events[0].metadata == {"note": NUL, NUL: 1}
    await store.update_state(session.id, {NUL: [NUL]})
    assert (await store.get(session.id)).state == {NUL: [NUL]}


async def test_nul_in_prepared_parts_and_tool_results(store: SessionStore) -> None:
    session = await store.create()
    partial = await store.prepare_event(session.id, nul_event())
    assert (await store.get(session.id)).events == [partial]
    result = Event(author="tool", role="tool", parts=[ToolResultPart(call_id="c1", content=NUL)])
    await store.append_event(session.id, result)
    merged = await store.append_event(session.id, Event(author="user", role="user", parts=[TextPart(text=NUL)]))
    assert merged.parts == [*nul_event().parts, TextPart(text=NUL)]
    assert [e.parts for e in await store.events(session.id)] == [result.parts, merged.parts]


async def test_lone_surrogates_become_the_replacement_character_in_every_store(store: SessionStore) -> None:
    session = await store.create(state={LONE: LONE})
    pair = "\ud83d\ude00"  # a surrogate pair in a Python str: the character it encodes
    event = Event(author="user", role="user", parts=[TextPart(text=LONE + pair)], metadata={LONE: [LONE]})
    stored = await store.append_event(session.id, event)
    assert stored.parts == [TextPart(text=REPLACED + "\U0001f600")]
    assert stored.metadata == {REPLACED: [REPLACED]}
    assert event.parts == [TextPart(text=LONE + pair)]  # the caller's event is left as it was
    (read,) = await store.events(session.id)
    assert (read.parts, read.metadata) == (stored.parts, stored.metadata)
    assert (await store.get(session.id)).state == {REPLACED: REPLACED}
    partial = await store.prepare_event(session.id, Event(author="u2", role="user", parts=[TextPart(text=LONE)]))
    assert partial.parts == [TextPart(text=REPLACED)]
    assert (await store.get(session.id)).events[-1].parts == [TextPart(text=REPLACED)]


@pytest.mark.parametrize("field", ["author", "id"])
@pytest.mark.parametrize("bad", ["a\x00b", "a\ud800b"])
async def test_a_name_holding_nul_or_a_surrogate_is_refused_naming_the_field(
    store: SessionStore, field: str, bad: str
) -> None:
    session = await store.create()
    event = Event(role="user", parts=[TextPart(text="hi")], **{"author": "user", field: bad})
    with pytest.raises(InvalidEvent, match=f"invalid event: {field}: must not hold NUL"):
        await store.append_event(session.id, event)
    with pytest.raises(InvalidEvent, match=field):
        await store.prepare_event(session.id, event)
    assert await store.events(session.id) == []


@pytest.mark.parametrize("backend", ["postgres"])
@pytest.mark.parametrize("bad", ["a\x00b", "a\ud800b"])
async def test_postgres_refuses_a_session_id_it_cannot_store_as_a_clear_error(store: SessionStore, bad: str) -> None:
    with pytest.raises(ConfigError, match="PostgreSQL cannot store this text"):
        await store.create(session_id=bad)
    with pytest.raises(ConfigError, match="PostgreSQL cannot store this text"):
        await store.get(bad)


# --- the upgrade from jsonb ------------------------------------------------------------------


@pytest.fixture
async def old_database(postgres_server: str) -> AsyncIterator[str]:
    """A database as hookline left it before migration m003: jsonb columns, with a session in it."""
    name = f"hookline_old_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(f"{postgres_server}/postgres")
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        conn = await asyncpg.connect(f"{postgres_server}/{name}")
        try:
            await conn.execute(create_migrations_table(POSTGRES))
            for step in MIGRATIONS[:2]:
                for statement in step.statements(POSTGRES):
                    await conn.execute(statement)
                await conn.execute("INSERT INTO _hookline_migrations VALUES ($1, now())", step.name)
            state = json.dumps({"k": [1, "x"]})
            row = "INSERT INTO hookline_sessions VALUES ('old', 'default', 'default', $1, 1, now(), now())"
            await conn.execute(row, state)
            parts = json.dumps([{"type": "text", "text": "from before"}])
            await conn.execute(
                "INSERT INTO hookline_events VALUES ('old', 1, 'e1', 'message', 'user', 'user', NULL, now(), $1, '{}')",
                parts,
            )
        finally:
            await conn.close()
        yield f"{postgres_server}/{name}"
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


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
