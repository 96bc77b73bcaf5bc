"""Fixtures of the DBOS suite: a throwaway PostgreSQL database for the session store and DBOS.

A missing server fails the tests instead of skipping them (`tests/support/postgres_db.py`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.postgres_db import fresh_database


@pytest.fixture(scope="module")
def dsn() -> Iterator[str]:
    """The DSN of a fresh database (hookline's tables and DBOS's schema), dropped after the module."""
    with fresh_database("hookline_durable") as url:
        yield url
