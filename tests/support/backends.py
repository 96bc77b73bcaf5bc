"""Store fixtures for the tests of issue 27 (sub-agents, compaction, replay): in memory, a SQLite file, and a
fresh PostgreSQL database. A test package's conftest imports them (`from backends import backend, shared, store`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from hookline.sessions import InMemorySessionStore, PostgresSessionStore, SessionStore, SQLiteSessionStore
from support.postgres_db import fresh_database

__all__ = ["backend", "open_store", "shared", "store"]


def _backend(kind: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    if kind == "postgres":
        with fresh_database("hookline_subagents") as url:
            yield "postgres", url
    else:
        yield kind, str(tmp_path / "s.db")


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(kind, where): each backend a child session can live in (a fresh database for PostgreSQL)."""
    yield from _backend(request.param, tmp_path)


@pytest.fixture(params=["sqlite", "postgres"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(kind, where): each backend that processes share."""
    yield from _backend(request.param, tmp_path)


def open_store(kind: str, where: str) -> SessionStore:
    """A store of the backend `kind` ("memory", "sqlite", "postgres") at `where`."""
    if kind == "postgres":
        return PostgresSessionStore(where)
    if kind == "sqlite":
        return SQLiteSessionStore(where)
    return InMemorySessionStore()


@pytest.fixture
async def store(backend: tuple[str, str]) -> AsyncIterator[SessionStore]:
    """A store of `backend`, closed after the test."""
    async with open_store(*backend) as made:
        yield made
