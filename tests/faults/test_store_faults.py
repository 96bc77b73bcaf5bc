"""A commit that fails mid-run fails the run with a clear `StoreError`; the log stays valid and usable.

Two real failed commits: on SQLite, the disk "fills up" while a tool runs (the process's
file-size limit is lowered to what the files hold, so the next write() fails as on a full
disk; see disk_full_worker.py); on PostgreSQL, a deferred constraint trigger makes COMMIT
fail with SQLSTATE 53100 (disk_full), as the server does when it cannot extend a file. For
each:

- the run raises `StoreError`, naming the store's file (SQLite) and never its DSN (PostgreSQL);
- what was committed stays, the log is valid (calls whose results were lost stay open, as
  after a crash) and nothing of the failed batch is stored;
- once space is back, a later run on the same session, through the same store, completes,
  and the whole log is a valid conversation.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest

from hookline import Agent, ToolCallPart, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import PostgresSessionStore, SessionStore, SQLiteSessionStore, StoreError

from ._harness import HERE, POSTGRES_SERVER, Worker, admin, assistant_texts, log_problems

pytestmark = [pytest.mark.faults, pytest.mark.anyio]

BIG = 200_000

DISK_FULL_SQL = """
CREATE TABLE fault_switch (disk_full boolean NOT NULL);
INSERT INTO fault_switch VALUES (false);
CREATE FUNCTION fault_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT disk_full FROM fault_switch) THEN
        RAISE EXCEPTION USING ERRCODE = 'disk_full',
            MESSAGE = 'could not extend file "base/16384/24576": No space left on device';
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER fault_events AFTER INSERT ON hookline_events
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fault_disk_full();
CREATE CONSTRAINT TRIGGER fault_sessions AFTER UPDATE ON hookline_sessions
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fault_disk_full();
"""


def test_sqlite_disk_full_mid_run_fails_cleanly_and_the_session_goes_on(tmp_path: Path) -> None:
    db = tmp_path / "full.db"
    worker = Worker(HERE / "disk_full_worker.py", str(db), "s", stderr=tmp_path / "worker.err")
    try:
        report = worker.result(timeout=120)
    finally:
        worker.stop()
    full = report["full"]
    assert full.get("type") == "StoreError", f"a failed commit must raise StoreError, not {full}"
    assert str(db) in full["message"], "the error names the database file"
    assert "disk" in full["message"].lower(), f"the error says what is wrong: {full['message']}"
    assert report["while_full"]["problems"] == [], "the log broke when the disk filled up"
    assert report["first"] == {"output": "done 1"}
    assert report["third"] == {"output": "done 3"}, "a run on the same store after space came back failed"
    asyncio.run(check_after(SQLiteSessionStore(db), "s"))


@pytest.fixture
def scratch_dsn() -> Iterator[str]:
    """A database of this test only (it gets triggers no other test should meet)."""
    name = f"hookline_faults_{uuid.uuid4().hex[:12]}"
    asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    yield f"{POSTGRES_SERVER}/{name}"
    asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
async def switch(scratch_dsn: str) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(scratch_dsn)
    yield conn
    await conn.close()


def script(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    turn = sum(1 for m in request.messages if m.role == "user")
    if last.role == "user":
        return ModelResponse(tool_calls=[ToolCallPart(id=f"c{turn}", name="note", arguments={"text": last.text})])
    return ModelResponse(text=f"done {turn}")


async def test_postgres_failed_commit_mid_run_fails_cleanly_and_the_session_goes_on(
    scratch_dsn: str, switch: asyncpg.Connection
) -> None:
    @tool
    async def note(text: str) -> str:
        """Note `text`; "fill" fills the disk while it runs."""
        if text != "fill":
            return f"noted {text}"
        await switch.execute("UPDATE fault_switch SET disk_full = true")
        return "x" * BIG

    async with PostgresSessionStore(scratch_dsn) as store:
        agent = Agent(name="noter", model=FunctionModel(script), tools=[note], session_store=store)
        assert (await agent.prompt("first").session("s")).output == "done 1"
        await switch.execute(DISK_FULL_SQL)
        with pytest.raises(StoreError) as caught:
            await agent.prompt("fill").session("s")
        message = str(caught.value)
        assert scratch_dsn not in message
        assert "postgresql://" not in message, f"the error carries a DSN: {message}"
        assert log_problems(await store.events("s", view="all"), complete=False) == []
        await switch.execute("UPDATE fault_switch SET disk_full = false")  # space is back
        assert (await agent.prompt("third").session("s")).output == "done 3"
    await check_after(PostgresSessionStore(scratch_dsn), "s")


async def check_after(store: SessionStore, session_id: str) -> None:
    """The log read afresh: valid, both good runs whole, nothing of the lost result stored."""
    async with store:
        log = await store.events(session_id, view="all")
    assert log_problems(log) == []
    assert assistant_texts(log) == ["", "done 1", "", "", "done 3"]
    assert not any("x" * 1000 in e.model_dump_json() for e in log), "the result that did not fit was stored"
