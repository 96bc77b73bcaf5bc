"""Fixtures of the fault suite. The helpers live in `_harness.py`.

PostgreSQL runs for real: a throwaway database is created on 127.0.0.1:5432 for the test
session (override the server with HOOKLINE_TEST_POSTGRES) and dropped at the end. A
missing server fails the tests instead of skipping them.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import asyncpg
import pytest

from ._harness import POSTGRES_SERVER, admin


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """The DSN of a fresh database, dropped when the test session ends."""
    name = f"hookline_faults_{uuid.uuid4().hex[:12]}"
    try:
        asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    except (OSError, asyncpg.PostgresError) as exc:
        pytest.fail(
            f"PostgreSQL is not reachable at {POSTGRES_SERVER} ({exc}); start it with "
            "`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`"
        )
    yield f"{POSTGRES_SERVER}/{name}"
    asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
