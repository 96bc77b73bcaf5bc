"""Throwaway PostgreSQL databases for the tests that need the real server.

The server is 127.0.0.1:5432 unless HOOKLINE_TEST_POSTGRES names another. A missing server
fails the test instead of skipping it: the PostgreSQL tests must run wherever the suite does.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from urllib.parse import urlsplit, urlunsplit

import asyncpg  # type: ignore[import-untyped]
import pytest

from hookline.sessions._migrations import MIGRATIONS, POSTGRES, create_migrations_table

SERVER = os.environ.get("HOOKLINE_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432")
"""The server's URL, without a database."""


async def admin(statement: str) -> None:
    """Run one statement on the server's `postgres` database."""
    connection = await asyncpg.connect(f"{SERVER}/postgres", timeout=10)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


@contextmanager
def fresh_database(prefix: str) -> Iterator[str]:
    """The URL of a new database named after `prefix`, dropped on the way out."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    try:
        asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    except (OSError, asyncpg.PostgresError) as exc:
        pytest.fail(
            f"PostgreSQL is not reachable at {SERVER} ({exc}); start it with "
            "`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`"
        )
    try:
        yield f"{SERVER}/{name}"
    finally:
        asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def with_password(url: str, password: str) -> str:
    """`url` with `password` given for its user (the test server trusts any password)."""
    parts = urlsplit(url)
    netloc = f"{parts.username or 'postgres'}:{password}@{parts.hostname}:{parts.port or 5432}"
    return urlunsplit(parts._replace(netloc=netloc))


@asynccontextmanager
async def older_database(server: str, migrations: int, prefix: str) -> AsyncIterator[tuple[str, asyncpg.Connection]]:
    """A new database as an older hookline left it (its first `migrations` only): its URL, and a connection to it.

    The database is dropped on the way out.
    """
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    control = await asyncpg.connect(f"{server}/postgres")
    await control.execute(f'CREATE DATABASE "{name}"')
    try:
        connection = await asyncpg.connect(f"{server}/{name}")
        try:
            await connection.execute(create_migrations_table(POSTGRES))
            for step in MIGRATIONS[:migrations]:
                for statement in step.statements(POSTGRES):
                    await connection.execute(statement)
                await connection.execute("INSERT INTO _hookline_migrations VALUES ($1, now())", step.name)
            yield f"{server}/{name}", connection
        finally:
            await connection.close()
    finally:
        await control.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await control.close()
