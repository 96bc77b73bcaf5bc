"""Fixtures of the fault suite. The helpers live in `_harness.py`.

PostgreSQL runs for real: a throwaway database is created for the test session and dropped
at the end; a missing server fails the tests instead of skipping them (`tests/support/postgres_db.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.postgres_db import fresh_database


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """The DSN of a fresh database, dropped when the test session ends."""
    with fresh_database("hookline_faults") as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """The store a test runs on; every such test runs on both."""
    return str(request.param)


@pytest.fixture
def target(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Where the backend keeps its data: a SQLite file, or a fresh PostgreSQL database."""
    if backend == "sqlite":
        return str(tmp_path / "sessions.db")
    return str(request.getfixturevalue("postgres_dsn"))
