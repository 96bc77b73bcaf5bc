"""The shared stores across real OS processes, and their failures on a real database.

Each worker is a separate Python process running tests/sessions/store_worker.py.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest

from hookline.errors import ConfigError, SessionBusy
from hookline.events import Event
from hookline.messages import TextPart
from hookline.sessions import PostgresSessionStore, SessionStore, SQLiteSessionStore, StoreError

pytestmark = pytest.mark.anyio

WORKER = Path(__file__).with_name("store_worker.py")
Spawn = Callable[..., subprocess.Popen[str]]


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """Only the stores several processes can share."""
    return str(request.param)


@pytest.fixture
def spawn(backend: str, target: str) -> Iterator[Spawn]:
    """Start workers on this test's store; every worker is gone at teardown."""
    started: list[subprocess.Popen[str]] = []

    def spawn_(session_id: str, *args: str) -> subprocess.Popen[str]:
        command = [sys.executable, str(WORKER), backend, target, session_id, *args]
        pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
        started.append(subprocess.Popen(command, text=True, **pipes))
        return started[-1]

    yield spawn_
    for process in started:
        process.kill()
        process.communicate()


def finish(process: subprocess.Popen[str]) -> str:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return out


def hi() -> Event:
    return Event(author="user", role="user", parts=[TextPart(text="hi")])


async def test_two_processes_append_without_lost_or_duplicate_seq(store: SessionStore, spawn: Spawn) -> None:
    session = await store.create()
    workers = [spawn(session.id, "append", "200", tag) for tag in ("a", "b")]
    for worker in workers:
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "ready"
    for worker in workers:  # both are connected: let them go at once
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()
    for worker in workers:
        finish(worker)
    events = await store.events(session.id)
    assert [e.seq for e in events] == list(range(1, 401))
    assert len({e.id for e in events}) == 400
    for tag in ("a", "b"):
        assert [e.metadata["i"] for e in events if e.author == tag] == list(range(200))


async def test_a_run_lock_held_by_another_process(store: SessionStore, spawn: Spawn) -> None:
    session = await store.create()
    holder = spawn(session.id, "hold", "60")
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "locked"
    with pytest.raises(SessionBusy, match=session.id):
        async with store.run_lock(session.id, timeout=0.3):
            pytest.fail("two processes held one session")

    holder.kill()  # a killed holder must not keep the session for long
    holder.communicate()
    started = time.monotonic()
    async with store.run_lock(session.id, timeout=10):
        assert time.monotonic() - started < 3


async def test_a_run_lock_waits_for_another_process(store: SessionStore, spawn: Spawn) -> None:
    session = await store.create()
    holder = spawn(session.id, "hold", "0.5")
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "locked"
    started = time.monotonic()
    async with store.run_lock(session.id, timeout=20):
        assert time.monotonic() - started > 0.2
    assert finish(holder).strip() == "done"


# --- SQLite failures -------------------------------------------------------------------------


def dump(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as raw:
        return list(raw.iterdump())


async def test_sqlite_refuses_a_database_from_a_newer_hookline(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    async with SQLiteSessionStore(path) as store:
        session = await store.create()
        await store.append_event(session.id, hi())
    with closing(sqlite3.connect(path)) as raw, raw:
        raw.execute("INSERT INTO _hookline_migrations VALUES ('m999_from_the_future', '2099-01-01')")
    before = dump(path)

    async with SQLiteSessionStore(path) as newer:
        for call in (newer.get(session.id), newer.append_event(session.id, hi()), newer.create()):
            with pytest.raises(StoreError, match="written by a newer hookline") as caught:
                await call
            assert str(path) in str(caught.value)
            assert "m999_from_the_future" in str(caught.value)
    assert dump(path) == before


async def test_sqlite_locked_database_is_a_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    async with SQLiteSessionStore(path, busy_timeout=0.2) as store:
        session = await store.create()
        await store.append_event(session.id, hi())
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("BEGIN EXCLUSIVE")
            other.execute("UPDATE hookline_sessions SET app = app")
            for call in (store.append_event(session.id, hi()), store.prepare_event(session.id, hi())):
                started = time.monotonic()
                with pytest.raises(StoreError, match="is locked") as caught:
                    await call
                assert time.monotonic() - started >= 0.15
                assert str(path) in str(caught.value)
                assert "busy_timeout (0.2 s)" in str(caught.value)
            other.execute("ROLLBACK")
        assert [e.seq for e in await store.events(session.id)] == [1]
        assert (await store.append_event(session.id, hi())).seq == 2


async def test_sqlite_corrupt_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.write_bytes(b"this is not a database, just bytes\n" * 200)
    async with SQLiteSessionStore(path) as store:
        with pytest.raises(StoreError, match="is not a SQLite database, or is corrupt") as caught:
            await store.create()
    assert str(path) in str(caught.value)
    assert caught.value.where == str(path)


async def test_sqlite_unopenable_path_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "no-such-folder" / "sessions.db"
    async with SQLiteSessionStore(path) as store:
        with pytest.raises(StoreError, match="cannot be opened") as caught:
            await store.list()
    assert str(path) in str(caught.value)


# --- PostgreSQL configuration and failures ---------------------------------------------------


async def test_postgres_dsn_from_the_environment(monkeypatch: pytest.MonkeyPatch, postgres_dsn: str) -> None:
    monkeypatch.setenv("HOOKLINE_DATABASE_URL", postgres_dsn)
    async with PostgresSessionStore() as store:
        session = await store.create()
        assert (await store.get(session.id)).id == session.id
    monkeypatch.delenv("HOOKLINE_DATABASE_URL")
    with pytest.raises(ConfigError, match="HOOKLINE_DATABASE_URL"):
        PostgresSessionStore()


async def test_postgres_unreachable_is_a_clear_error_without_the_password() -> None:
    async with PostgresSessionStore("postgresql://postgres:s3cret@127.0.0.1:9/nothing") as store:
        with pytest.raises(StoreError, match="cannot reach PostgreSQL database") as caught:
            await store.list()
    assert "s3cret" not in str(caught.value)
    assert "127.0.0.1:9/nothing" in str(caught.value)
