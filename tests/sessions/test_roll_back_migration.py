"""Databases written before `roll_back` (migration m006) gain its mark; their events stay in the prompt view."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from hookline import Event, Message
from hookline.sessions import PostgresSessionStore, SessionStore, SQLiteSessionStore
from hookline.sessions._migrations import MIGRATIONS, SQLITE, create_migrations_table
from support.postgres_db import older_database

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _older_log_still_reads(store: SessionStore) -> None:
    session = await store.create()
    await store.append_events(session.id, [Event.from_message(Message.user(t), "user") for t in ("a", "b")])
    assert [e.text for e in await store.events(session.id, view="prompt")] == ["a", "b"]
    assert await store.roll_back(session.id, after_seq=1, through_seq=2) == 1
    assert [e.text for e in await store.events(session.id, view="prompt")] == ["a"]


async def test_a_sqlite_database_from_before_roll_back_gains_it(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path)) as raw, raw:
        raw.execute(create_migrations_table(SQLITE))
        for step in MIGRATIONS[:5]:
            for statement in step.statements(SQLITE):
                raw.execute(statement)
            raw.execute("INSERT INTO _hookline_migrations VALUES (?, '2025-01-01')", (step.name,))
    async with SQLiteSessionStore(path) as store:
        await _older_log_still_reads(store)


async def test_a_postgres_database_from_before_roll_back_gains_it(postgres_server: str) -> None:
    async with older_database(postgres_server, 5, "hookline_prerollback") as (url, _):
        store = PostgresSessionStore(url)
        try:
            await _older_log_still_reads(store)
        finally:
            await store.aclose()
