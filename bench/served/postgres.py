"""A throwaway PostgreSQL database for one measured server (127.0.0.1:5432, or HOOKLINE_BENCH_POSTGRES)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable

SERVER = os.environ.get("HOOKLINE_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432")


async def _admin(statement: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    connection = await asyncpg.connect(f"{SERVER}/postgres", timeout=10)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


def fresh_database() -> tuple[str, Callable[[], None]]:
    """The URL of a new database, and the function that drops it."""
    name = f"hookline_served_{uuid.uuid4().hex[:10]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    return f"{SERVER}/{name}", lambda: asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
