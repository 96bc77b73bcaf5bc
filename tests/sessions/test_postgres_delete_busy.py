"""PostgreSQL: a session a run in another process holds cannot be deleted (issue 10, item 12).

The same within one process is a case of the shipped store contract, which runs on PostgreSQL too.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hookline.errors import SessionBusy, SessionNotFound
from hookline.sessions import SessionStore

pytestmark = pytest.mark.anyio

WORKER = Path(__file__).with_name("store_worker.py")
DEADLINE = 60.0


@pytest.fixture
def backend() -> str:
    return "postgres"


@pytest.fixture
def holder(postgres_dsn: str) -> Iterator[list[subprocess.Popen[str]]]:
    """Worker processes holding run locks; every one is killed at teardown."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        process.kill()
        process.communicate()


def hold_in_another_process(dsn: str, session_id: str, started: list[subprocess.Popen[str]]) -> subprocess.Popen[str]:
    command = [sys.executable, str(WORKER), "postgres", dsn, session_id, "hold", "600"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started.append(process)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "locked", process.stderr.read() if process.stderr else ""
    return process


async def test_delete_while_another_process_runs_the_session_is_busy(
    store: SessionStore, postgres_dsn: str, holder: list[subprocess.Popen[str]]
) -> None:
    session = await store.create()
    process = hold_in_another_process(postgres_dsn, session.id, holder)
    with pytest.raises(SessionBusy, match="a run holds it"):
        await store.delete(session.id)
    assert (await store.get(session.id)).id == session.id

    process.kill()  # the run's process dies: PostgreSQL drops its lock with its connection
    process.communicate()
    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            await store.delete(session.id)
            break
        except SessionBusy:
            assert time.monotonic() < deadline, "the dead run's lock was never released"
            await asyncio.sleep(0.01)
    with pytest.raises(SessionNotFound):
        await store.get(session.id)


async def test_delete_of_a_missing_session_is_not_found_even_if_its_id_is_locked(store: SessionStore) -> None:
    async with store.run_lock("never-created"):
        with pytest.raises(SessionNotFound):
            await store.delete("never-created")


async def test_a_run_waits_for_nothing_after_a_delete(store: SessionStore) -> None:
    """The delete's hold on the lock ends with its transaction: a run may start at once."""
    session = await store.create()
    await store.delete(session.id)
    async with store.run_lock(session.id, timeout=0):
        pass
