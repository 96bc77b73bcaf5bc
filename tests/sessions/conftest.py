"""Fixtures for the session-store tests: a `store` fixture runs a test against every store.

The store contract (test_store_contract.py) brings its own fixtures; these serve the tests
beside it (the agent on a store, the properties, processes, faults).

PostgreSQL runs for real: a throwaway database is created on 127.0.0.1:5432 for the test
session (override the server with HOOKLINE_TEST_POSTGRES) and dropped at the end. A
missing server fails the tests instead of skipping them.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from hookline.sessions import InMemorySessionStore, PostgresSessionStore, SessionStore, SQLiteSessionStore
from support.postgres_db import SERVER, fresh_database

BACKENDS = ["memory", "sqlite", "postgres"]


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The URL of the PostgreSQL server the tests use, without a database."""
    return SERVER


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """The DSN of a fresh database, dropped when the test session ends."""
    with fresh_database("hookline_test") as url:
        yield url


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def target(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Where the backend keeps its data: a file, a DSN, or nothing for memory."""
    if backend == "sqlite":
        return str(tmp_path / "sessions.db")
    if backend == "postgres":
        return str(request.getfixturevalue("postgres_dsn"))
    return ""


def make_store(backend: str, target: str) -> SessionStore:
    if backend == "sqlite":
        return SQLiteSessionStore(target)
    if backend == "postgres":
        return PostgresSessionStore(target)
    return InMemorySessionStore()


@pytest.fixture
async def open_store(backend: str, target: str) -> AsyncIterator[Callable[[], SessionStore]]:
    """Open store instances on the same data (a second instance sees what the first wrote)."""
    opened: list[SessionStore] = []

    def open_() -> SessionStore:
        opened.append(make_store(backend, target))
        return opened[-1]

    yield open_
    for store in opened:
        await store.aclose()


@pytest.fixture
def store(open_store: Callable[[], SessionStore]) -> SessionStore:
    return open_store()


@pytest.fixture
def app() -> str:
    """An app name of this test only, so `list` never sees another test's sessions."""
    return f"app-{uuid.uuid4().hex[:8]}"
