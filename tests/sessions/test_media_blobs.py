"""Images and files in hookline's own stores (issue 13, item 2): bytes kept once per session, never in the log.

The store contract accepts a store that keeps the bytes in the log (parts come back with
their `data`); hookline's three stores must not: every part they give back carries `blob`
and no `data`, their log rows hold no base64 of the bytes, and the bytes live once per
session and digest in a table of their own, deleted with the session.
"""

from __future__ import annotations

import base64
import hashlib
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import closing
from pathlib import Path

import asyncpg
import pytest

from hookline.events import Event
from hookline.messages import FilePart, ImagePart, Part, TextPart, ToolResultPart, without_validation
from hookline.sessions import InMemorySessionStore, PostgresSessionStore, SessionStore, SQLiteSessionStore
from hookline.sessions._migrations import MIGRATIONS, SQLITE, create_migrations_table
from hookline.sessions.base import Blob, Session
from hookline.testing.store_contract import SessionStoreContract
from hookline.types import View
from support.postgres_db import older_database

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
PDF = b"%PDF-1.7\n" + bytes(range(255, -1, -1)) * 4
PNG_DIGEST = hashlib.sha256(PNG).hexdigest()
PDF_DIGEST = hashlib.sha256(PDF).hexdigest()
SQL_BACKENDS = pytest.mark.parametrize("backend", ["sqlite", "postgres"])


def shows(*media: ImagePart | FilePart) -> Event:
    return Event(author="user", role="user", parts=[TextPart(text="look"), *media])


def returns(*attachments: ImagePart | FilePart) -> Event:
    result = ToolResultPart(call_id="c1", content="done", name="render", attachments=attachments)
    return Event(author="render", role="tool", parts=[result])


def media_of(events: Iterable[Event]) -> list[ImagePart | FilePart]:
    """Every media part of `events`, top-level or attached to a tool result."""
    found: list[ImagePart | FilePart] = []
    for event in events:
        for part in event.parts:
            if isinstance(part, ImagePart | FilePart):
                found.append(part)
            elif isinstance(part, ToolResultPart):
                found.extend(part.attachments)
    return found


async def a_session_with_media(store: SessionStore) -> tuple[str, list[Event]]:
    """A session holding the image twice (two events), the PDF attached to a tool result, the image prepared."""
    session = await store.create()
    returned = await store.append_events(session.id, [shows(ImagePart(media_type="image/png", data=PNG))])
    returned.append(await store.append_event(session.id, returns(FilePart(media_type="application/pdf", data=PDF))))
    returned.append(await store.append_event(session.id, shows(ImagePart(media_type="image/png", data=PNG))))
    returned.append(await store.prepare_event(session.id, shows(ImagePart(media_type="image/png", data=PNG))))
    return session.id, returned


# --- every store: reads carry the digest, never the bytes --------------------------------------


async def test_every_read_carries_the_digest_and_no_bytes(store: SessionStore) -> None:
    session_id, returned = await a_session_with_media(store)
    reads = [returned, await store.events(session_id, view="all"), (await store.get(session_id)).events]
    reads.append(await store.events(session_id, view="prompt"))
    for events in reads:
        media = media_of(events)
        assert media, "the media parts went missing"
        assert all(p.data is None for p in media), media
        assert {p.blob for p in media} == {PNG_DIGEST, PDF_DIGEST}
    assert len(media_of(reads[1])) == 4  # the image twice, the PDF, the prepared image
    loaded = await store.load_blobs(session_id, [PNG_DIGEST, PDF_DIGEST])
    assert loaded == {PNG_DIGEST: Blob("image/png", PNG), PDF_DIGEST: Blob("application/pdf", PDF)}


async def test_load_blobs_of_an_unknown_session_is_empty(store: SessionStore) -> None:
    assert await store.load_blobs("no-such-session", [PNG_DIGEST]) == {}


async def test_one_digest_given_as_a_str_is_refused_saying_how_to_pass_it(store: SessionStore) -> None:
    session_id, _ = await a_session_with_media(store)
    with pytest.raises(TypeError, match=r"not one str: pass \[part.blob\]"):
        await store.load_blobs(session_id, PNG_DIGEST)


async def test_the_digest_is_that_of_the_bytes_whatever_blob_the_part_claimed(store: SessionStore) -> None:
    session = await store.create()
    claimed = without_validation(ImagePart, {"type": "image", "media_type": "image/png", "data": PNG, "url": None,
                                             "blob": "0" * 64})
    stored = await store.append_event(session.id, shows(claimed))
    assert media_of([stored])[0].blob == PNG_DIGEST
    assert await store.load_blobs(session.id, ["0" * 64]) == {}


async def test_the_bytes_of_a_subclass_of_a_media_part_are_taken_out_too(store: SessionStore) -> None:
    session = await store.create()
    stored = await store.append_event(session.id, shows(Screenshot(media_type="image/png", data=PNG)))
    (read,) = await store.events(session.id)
    for part in (stored.parts[1], read.parts[1]):
        assert isinstance(part, ImagePart)
        assert (part.data, part.blob) == (None, PNG_DIGEST)
    assert await store.load_blobs(session.id, [PNG_DIGEST]) == {PNG_DIGEST: Blob("image/png", PNG)}


class Screenshot(ImagePart):
    """An image part of a user's own (the store checks media by isinstance, not by exact type)."""


# --- the SQL stores: the rows ----------------------------------------------------------------


async def rows(backend: str, target: str, query: str, session_id: str) -> list[tuple[object, ...]]:
    """The rows of `query` (one `?` parameter, the session id) read from the database itself."""
    if backend == "sqlite":
        with closing(sqlite3.connect(target)) as raw:
            return list(raw.execute(query, (session_id,)))
    conn = await asyncpg.connect(target)
    try:
        return [tuple(row) for row in await conn.fetch(query.replace("?", "$1"), session_id)]
    finally:
        await conn.close()


@SQL_BACKENDS
async def test_the_log_rows_hold_the_digest_and_no_base64(backend: str, target: str, store: SessionStore) -> None:
    session_id, _ = await a_session_with_media(store)
    parts = []
    for table in ("hookline_events", "hookline_pending"):
        query = f"SELECT parts FROM {table} WHERE session_id = ?"
        parts += [str(row[0]) for row in await rows(backend, target, query, session_id)]
    assert len(parts) == 4
    logged = "".join(parts)
    for raw in (PNG, PDF):
        assert base64.b64encode(raw).decode()[:40] not in logged
    assert logged.count(PNG_DIGEST) == 3
    assert logged.count(PDF_DIGEST) == 1


@SQL_BACKENDS
async def test_the_bytes_are_one_row_per_session_and_digest(backend: str, target: str, store: SessionStore) -> None:
    session_id, _ = await a_session_with_media(store)
    other_id, _ = await a_session_with_media(store)
    query = "SELECT digest, media_type, data FROM hookline_blobs WHERE session_id = ? ORDER BY media_type"
    expected = [(PDF_DIGEST, "application/pdf", PDF), (PNG_DIGEST, "image/png", PNG)]
    stored = await rows(backend, target, query, session_id)
    assert [(d, m, bytes(data)) for d, m, data in stored] == expected  # type: ignore[call-overload]
    assert len(await rows(backend, target, query, other_id)) == 2

    await store.delete(session_id)
    assert await rows(backend, target, query, session_id) == []
    assert len(await rows(backend, target, query, other_id)) == 2


@SQL_BACKENDS
async def test_the_bytes_outlive_their_writer(backend: str, open_store: Callable[[], SessionStore]) -> None:
    writer = open_store()
    session_id, _ = await a_session_with_media(writer)
    await writer.aclose()
    reader = open_store()
    assert await reader.load_blobs(session_id, [PDF_DIGEST]) == {PDF_DIGEST: Blob("application/pdf", PDF)}


# --- a database from before blobs gains their table --------------------------------------------


async def test_a_sqlite_database_from_before_blobs_gains_their_table(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path)) as raw, raw:
        raw.execute(create_migrations_table(SQLITE))
        for step in MIGRATIONS[:4]:
            for statement in step.statements(SQLITE):
                raw.execute(statement)
            raw.execute("INSERT INTO _hookline_migrations VALUES (?, '2025-01-01')", (step.name,))
    async with SQLiteSessionStore(path) as store:
        session = await store.create()
        await store.append_event(session.id, shows(ImagePart(media_type="image/png", data=PNG)))
        assert await store.load_blobs(session.id, [PNG_DIGEST]) == {PNG_DIGEST: Blob("image/png", PNG)}
    with closing(sqlite3.connect(path)) as raw:
        assert "m005_blobs" in [row[0] for row in raw.execute("SELECT name FROM _hookline_migrations")]


@pytest.fixture
async def database_before_blobs(postgres_server: str) -> AsyncIterator[str]:
    """A PostgreSQL database as hookline left it before migration m005."""
    async with older_database(postgres_server, 4, "hookline_preblob") as (url, _):
        yield url


async def test_a_postgres_database_from_before_blobs_gains_their_table(database_before_blobs: str) -> None:
    async with PostgresSessionStore(database_before_blobs) as store:
        session = await store.create()
        await store.append_event(session.id, returns(FilePart(media_type="application/pdf", data=PDF)))
        assert await store.load_blobs(session.id, [PDF_DIGEST]) == {PDF_DIGEST: Blob("application/pdf", PDF)}


# --- the contract: a store keeping bytes in the log passes, one losing them fails --------------


class InlineStore(InMemorySessionStore):
    """A store as a third party might write one: parts come back with their bytes, and `load_blobs` holds none."""

    async def append_events(self, session_id: str, events: Sequence[Event]) -> list[Event]:
        return [await self._inline(session_id, e) for e in await super().append_events(session_id, events)]

    async def prepare_event(self, session_id: str, event: Event) -> Event:
        return await self._inline(session_id, await super().prepare_event(session_id, event))

    async def events(self, session_id: str, *, view: View = "all", after_seq: int = 0) -> list[Event]:
        read = await super().events(session_id, view=view, after_seq=after_seq)
        return [await self._inline(session_id, e) for e in read]

    async def get(self, session_id: str, *, user: str | None = None, with_events: bool = True) -> Session:
        session = await super().get(session_id, user=user, with_events=with_events)
        session.events = [await self._inline(session_id, e) for e in session.events]
        return session

    async def load_blobs(self, session_id: str, digests: Iterable[str]) -> dict[str, Blob]:
        return {}

    async def _inline(self, session_id: str, event: Event) -> Event:
        blobs = await super().load_blobs(session_id, [p.blob for p in media_of([event]) if p.blob])
        return event.model_copy(update={"parts": [_with_bytes(p, blobs) for p in event.parts]})


def _with_bytes(part: Part, blobs: dict[str, Blob]) -> Part:
    if isinstance(part, ToolResultPart):
        return part.model_copy(update={"attachments": tuple(_with_bytes(m, blobs) for m in part.attachments)})
    if isinstance(part, ImagePart | FilePart) and part.blob in blobs:
        return part.model_copy(update={"data": blobs[part.blob].data, "blob": None})
    return part


class TestAStoreKeepingBytesInTheLogPassesTheContract(SessionStoreContract):
    durable = False

    def create_store(self) -> SessionStore:
        return InlineStore()


LOSES_BYTES = '''
from hookline.sessions import InMemorySessionStore
from hookline.testing.store_contract import SessionStoreContract


class LosesBytes(InMemorySessionStore):
    async def load_blobs(self, session_id, digests):
        return {}


class TestLosesBytes(SessionStoreContract):
    durable = False

    def create_store(self):
        return LosesBytes()
'''


def test_the_contract_fails_a_store_that_loses_the_bytes(tmp_path: Path) -> None:
    module = tmp_path / "test_loses_bytes.py"
    module.write_text(LOSES_BYTES, encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(module),
               "-k", "kept_by_digest or kept_once or url_part"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    failed = "FAILED test_loses_bytes.py::TestLosesBytes::test_an_image_in_a_user_message_is_kept_by_digest"
    assert failed in done.stdout
    assert "3 failed, 1 passed" in done.stdout
