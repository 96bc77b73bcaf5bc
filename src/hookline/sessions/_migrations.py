"""The database schema of the SQL stores, as an append-only list of named migrations.

Each migration is a function from a `Dialect` to the SQL statements it runs; the stores
run the ones a database lacks, in order, each in the transaction that records its name
in `_hookline_migrations` (as llm's `migrations.py` does). Never edit or reorder a
migration that has shipped: add a new one at the end.

A database that records a migration this code does not know was written by a newer
hookline; `plan` refuses it before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from hookline.errors import StoreError

__all__ = ["MIGRATIONS", "MIGRATIONS_TABLE", "POSTGRES", "SQLITE", "Dialect", "Migration", "plan"]

MIGRATIONS_TABLE = "_hookline_migrations"
"""The table recording which migrations a database has run."""


@dataclass(frozen=True, slots=True)
class Dialect:
    """The column types that differ between the SQL backends."""

    name: str
    """"sqlite" or "postgres"."""
    json: str
    """The type of a JSON column."""
    timestamp: str
    """The type of a UTC timestamp column."""
    bigint: str
    """The type of a 64-bit integer column."""
    bytes: str
    """The type of a column of raw bytes."""


SQLITE = Dialect(name="sqlite", json="TEXT", timestamp="TEXT", bigint="INTEGER", bytes="BLOB")
"""SQLite: JSON and ISO-8601 timestamps as text."""
POSTGRES = Dialect(name="postgres", json="JSONB", timestamp="TIMESTAMPTZ", bigint="BIGINT", bytes="BYTEA")
"""PostgreSQL: JSONB and timestamptz."""


@dataclass(frozen=True, slots=True)
class Migration:
    """One named step of the schema."""

    name: str
    """The name recorded in `_hookline_migrations`."""
    statements: Callable[[Dialect], list[str]]
    """The SQL statements of this step for a dialect."""


MIGRATIONS: list[Migration] = []
"""Every migration, in the order they run."""


def migration(fn: Callable[[Dialect], list[str]]) -> Callable[[Dialect], list[str]]:
    """Add `fn` to the end of `MIGRATIONS`, named after the function."""
    MIGRATIONS.append(Migration(fn.__name__, fn))
    return fn


def create_migrations_table(dialect: Dialect) -> str:
    """Return the statement creating the table that records migrations, if missing."""
    columns = f"name TEXT PRIMARY KEY, applied_at {dialect.timestamp} NOT NULL"
    return f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} ({columns})"


def plan(applied: Iterable[str], *, where: str) -> list[Migration]:
    """Return the migrations still to run on a database that has run `applied`.

    Raises:
        StoreError: The database records migrations this hookline does not know: it was
            written by a newer hookline, and nothing may be written to it.

    """
    done = set(applied)
    unknown = sorted(done - {m.name for m in MIGRATIONS})
    if unknown:
        raise StoreError(
            f"database {where} was written by a newer hookline (unknown migrations: {', '.join(unknown)}); "
            "upgrade hookline to use it. Nothing was written.",
            where=where,
        )
    return [m for m in MIGRATIONS if m.name not in done]


@migration
def m001_sessions_and_events(d: Dialect) -> list[str]:
    """Sessions, their event log, and the parts prepared per author."""
    return [
        f"""CREATE TABLE hookline_sessions (
            id TEXT PRIMARY KEY,
            app TEXT NOT NULL,
            user_id TEXT NOT NULL,
            state {d.json} NOT NULL,
            last_seq {d.bigint} NOT NULL DEFAULT 0,
            created_at {d.timestamp} NOT NULL,
            updated_at {d.timestamp} NOT NULL)""",
        "CREATE INDEX hookline_sessions_owner ON hookline_sessions (app, user_id, created_at)",
        f"""CREATE TABLE hookline_events (
            session_id TEXT NOT NULL REFERENCES hookline_sessions (id) ON DELETE CASCADE,
            seq {d.bigint} NOT NULL,
            id TEXT NOT NULL,
            kind TEXT NOT NULL,
            author TEXT NOT NULL,
            role TEXT,
            source TEXT,
            created_at {d.timestamp} NOT NULL,
            parts {d.json} NOT NULL,
            metadata {d.json} NOT NULL,
            PRIMARY KEY (session_id, seq))""",
        # The prompt view reads message rows only: this index finds them without
        # touching the status rows around them.
        "CREATE INDEX hookline_events_kind ON hookline_events (session_id, kind, seq)",
        f"""CREATE TABLE hookline_pending (
            session_id TEXT NOT NULL REFERENCES hookline_sessions (id) ON DELETE CASCADE,
            author TEXT NOT NULL,
            id TEXT NOT NULL,
            kind TEXT NOT NULL,
            role TEXT,
            source TEXT,
            created_at {d.timestamp} NOT NULL,
            parts {d.json} NOT NULL,
            metadata {d.json} NOT NULL,
            PRIMARY KEY (session_id, author))""",
    ]


@migration
def m002_run_locks(d: Dialect) -> list[str]:
    """Run-lock leases for SQLite; PostgreSQL holds advisory locks instead."""
    if d.name == "postgres":
        return []
    return [
        """CREATE TABLE hookline_run_locks (
            session_id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            expires_at REAL NOT NULL)"""
    ]


@migration
def m003_run_fences(d: Dialect) -> list[str]:
    """PostgreSQL: the epoch that fences a session's writes to its run lock's holder.

    Each `run_lock` draws a new epoch from `hookline_lock_epochs` and stamps it on the
    session row; a write made under an older epoch is refused (see `postgres.py`).
    """
    if d.name != "postgres":
        return []
    return [
        "ALTER TABLE hookline_sessions ADD COLUMN lock_epoch BIGINT NOT NULL DEFAULT 0",
        "CREATE SEQUENCE hookline_lock_epochs",
    ]


@migration
def m004_json_text(d: Dialect) -> list[str]:
    """PostgreSQL: parts, metadata and state as `json` (kept as text), not `jsonb`.

    `jsonb` refuses the character U+0000, so a prompt holding NUL could not be stored;
    `json` keeps the text as written, NUL included. Nothing queries inside these columns,
    and reading `json` back is no slower (it skips jsonb's conversion to text). Existing
    rows are rewritten once, under the migration's lock.
    """
    if d.name != "postgres":
        return []
    to_json = "ALTER COLUMN {0} TYPE json USING {0}::json"
    both = f"{to_json.format('parts')}, {to_json.format('metadata')}"
    return [
        f"ALTER TABLE hookline_events {both}",
        f"ALTER TABLE hookline_pending {both}",
        f"ALTER TABLE hookline_sessions {to_json.format('state')}",
    ]


@migration
def m005_blobs(d: Dialect) -> list[str]:
    """The bytes of image and file parts, once per session and SHA-256 (hex), apart from the log.

    The events' parts name them by digest (`blob`); they go with their session (`ON DELETE
    CASCADE`), and the key finds a session's digests without another index.
    """
    return [
        f"""CREATE TABLE hookline_blobs (
            session_id TEXT NOT NULL REFERENCES hookline_sessions (id) ON DELETE CASCADE,
            digest TEXT NOT NULL,
            media_type TEXT NOT NULL,
            data {d.bytes} NOT NULL,
            PRIMARY KEY (session_id, digest))"""
    ]


@migration
def m006_rolled_back(d: Dialect) -> list[str]:
    """A mark on the events of a run rolled back (`SessionStore.roll_back`): the prompt view leaves them out.

    They stay in the log, marked also in their metadata (`"rolled_back": true`) for readers.
    """
    false = "false" if d.name == "postgres" else "0"
    kind = "boolean" if d.name == "postgres" else "INTEGER"
    return [f"ALTER TABLE hookline_events ADD COLUMN rolled_back {kind} NOT NULL DEFAULT {false}"]
