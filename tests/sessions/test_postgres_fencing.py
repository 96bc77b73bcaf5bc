"""PostgreSQL fencing: a run's writes land only while its run lock is its own (issue 10, item 7).

The kill trials reproduce the failure directly: a worker process holds the run lock and
appends tool results, one commit each; one commit is made slow (a deferred trigger sleeps
inside COMMIT), and the worker is SIGKILLed while that commit is in flight. Its lock
connection dies at once, but the commit still lands; a resumed holder must see it before
it decides what is missing, or it adds a second result for the same call. 20 trials by
default, 200 with HOOKLINE_FAULTS_LONG=1 (HOOKLINE_FAULTS_TRIALS=N for any other count).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg
import pytest

from hookline.errors import SessionBusy, StoreError
from hookline.events import Event
from hookline.messages import TextPart, ToolResultPart
from hookline.sessions import SessionStore
from hookline.sessions.postgres import _lock_key

pytestmark = pytest.mark.anyio

DEADLINE = 60.0
SLOW_AUTHOR = "slow-commit"
_LONG = os.environ.get("HOOKLINE_FAULTS_LONG") == "1"
TRIALS = int(os.environ.get("HOOKLINE_FAULTS_TRIALS") or (200 if _LONG else 20))


@pytest.fixture
def backend() -> str:
    return "postgres"


@pytest.fixture
async def admin(postgres_dsn: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain connection to the test database, beside the stores."""
    conn = await asyncpg.connect(postgres_dsn)
    yield conn
    await conn.close()


def says(text: str) -> Event:
    return Event(author="user", role="user", parts=[TextPart(text=text)])


def result(call_id: str) -> Event:
    return Event(author="tool", role="tool", parts=[ToolResultPart(call_id=call_id, content=f"done {call_id}")])


async def wait_until(condition: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not await condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.005)


async def lock_backend(admin: asyncpg.Connection, session_id: str) -> int:
    """The pid of the server process holding `session_id`'s run lock (its 64-bit key split in two)."""
    key = _lock_key(session_id) & 0xFFFFFFFFFFFFFFFF
    pid = await admin.fetchval(
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid::bigint = $1"
        " AND objid::bigint = $2 AND objsubid = 1"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        key >> 32,
        key & 0xFFFFFFFF,
    )
    assert pid is not None, "nobody holds the run lock"
    return int(pid)


# --- deterministic: a lost lock, a newer holder, writes in flight ---------------------------------


async def test_a_writer_whose_lock_connection_dropped_gets_store_error_and_writes_nothing(
    open_store: Callable[[], SessionStore], admin: asyncpg.Connection
) -> None:
    holder, newer = open_store(), open_store()
    session = await holder.create()
    taken, done = asyncio.Event(), asyncio.Event()

    async def take_over() -> None:
        async with newer.run_lock(session.id, timeout=DEADLINE):
            taken.set()
            await done.wait()

    async with holder.run_lock(session.id):
        await holder.append_event(session.id, says("mine"))
        await admin.execute("SELECT pg_terminate_backend($1)", await lock_backend(admin, session.id))
        newcomer = asyncio.create_task(take_over())
        await asyncio.wait_for(taken.wait(), DEADLINE)
        writes: list[Callable[[], Awaitable[object]]] = [
            lambda: holder.append_event(session.id, says("stale")),
            lambda: holder.prepare_event(session.id, says("stale")),
            lambda: holder.update_state(session.id, {"stale": True}),
        ]
        for write in writes:  # a failure of the database, worth a retry: not "busy" (issue 29, defect 5)
            with pytest.raises(StoreError, match="the connection holding this run's lock on the session dropped"):
                await write()
        done.set()
        await newcomer
    again = await holder.get(session.id)
    assert [e.text for e in again.events] == ["mine"]
    assert again.state == {}


async def test_a_holder_superseded_by_a_newer_epoch_writes_nothing(
    store: SessionStore, admin: asyncpg.Connection
) -> None:
    """The fence itself, with the old lock connection still open: what a newer `run_lock` stamps."""
    session = await store.create()
    async with store.run_lock(session.id):
        await store.append_event(session.id, says("mine"))
        await admin.execute(
            "UPDATE hookline_sessions SET lock_epoch = nextval('hookline_lock_epochs') WHERE id = $1", session.id
        )
        with pytest.raises(SessionBusy, match="lost its run lock"):
            await store.append_events(session.id, [says("stale"), says("stale too")])
    assert [e.text for e in await store.events(session.id)] == ["mine"]


async def test_a_new_holder_waits_for_a_write_in_flight_before_it_reads(
    store: SessionStore, admin: asyncpg.Connection, postgres_dsn: str
) -> None:
    session = await store.create()
    seen: list[str] = []
    entered = asyncio.Event()

    async def resume() -> None:
        async with store.run_lock(session.id, timeout=DEADLINE):
            entered.set()
            seen.extend(e.text for e in await store.events(session.id))

    async def claim_is_waiting() -> bool:
        waiting = await admin.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND query LIKE '%hookline_lock_epochs%'"
        )
        return entered.is_set() or waiting > 0

    writer = await asyncpg.connect(postgres_dsn)  # a commit in flight, as a killed run leaves it
    try:
        async with writer.transaction():
            await writer.execute("UPDATE hookline_sessions SET last_seq = 1 WHERE id = $1", session.id)
            await writer.execute(
                "INSERT INTO hookline_events (session_id, seq, id, kind, author, role, created_at, parts, metadata)"
                " VALUES ($1, 1, 'e1', 'message', 'user', 'user', now(), $2, '{}')",
                session.id,
                '[{"type": "text", "text": "landed"}]',
            )
            resumed = asyncio.create_task(resume())
            await wait_until(claim_is_waiting, "the resumed holder to take the lock")
    finally:
        await writer.close()
    await resumed
    assert seen == ["landed"]


async def test_writes_without_the_lock_still_work_while_a_run_holds_it(store: SessionStore) -> None:
    session = await store.create()
    outside: list[Event] = []
    locked, written = asyncio.Event(), asyncio.Event()

    async def user_code() -> None:  # started before the run: it holds no lock
        await locked.wait()
        outside.append(await store.prepare_event(session.id, says("edit")))
        outside.append(await store.append_event(session.id, Event(author="someone", role="user", parts=[])))
        written.set()

    task = asyncio.create_task(user_code())
    async with store.run_lock(session.id):
        locked.set()
        await asyncio.wait_for(written.wait(), DEADLINE)
        await store.append_event(session.id, says("the run's"))
    await task
    assert [e.partial for e in outside] == [True, False]
    assert [e.seq for e in await store.events(session.id, view="prompt")] == [1, 2]


async def test_a_run_may_create_its_session_under_the_lock(store: SessionStore) -> None:
    async with store.run_lock("made-under-lock"):
        await store.create(session_id="made-under-lock")
        await store.append_event("made-under-lock", says("hi"))
        await store.update_state("made-under-lock", {"k": 1})
    async with store.run_lock("made-under-lock"):
        await store.append_event("made-under-lock", says("again"))
    assert [e.text for e in await store.events("made-under-lock")] == ["hi", "again"]


# --- kill trials -----------------------------------------------------------------------------------

WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from hookline.events import Event
    from hookline.messages import ToolResultPart
    from hookline.sessions import PostgresSessionStore

    async def main(dsn, session_id, calls, slow):
        store = PostgresSessionStore(dsn)
        async with store.run_lock(session_id, timeout=60):
            for i in range(int(calls)):
                author = "slow-commit" if i == int(slow) else "tool"
                part = ToolResultPart(call_id=f"c{i}", content=f"done c{i}")
                await store.append_event(session_id, Event(author=author, role="tool", parts=[part]))
        await store.aclose()

    asyncio.run(main(*sys.argv[1:]))
    """
)
_SLOW_COMMIT = f"""
    CREATE OR REPLACE FUNCTION hookline_test_slow_commit() RETURNS trigger LANGUAGE plpgsql
        AS $$ BEGIN PERFORM pg_sleep(0.3); RETURN NULL; END $$;
    DROP TRIGGER IF EXISTS hookline_test_slow_commit ON hookline_events;
    CREATE CONSTRAINT TRIGGER hookline_test_slow_commit AFTER INSERT ON hookline_events
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.author = '{SLOW_AUTHOR}')
        EXECUTE FUNCTION hookline_test_slow_commit();
"""


@pytest.fixture
async def slow_commits(store: SessionStore, admin: asyncpg.Connection) -> AsyncIterator[None]:
    """Commits of events by SLOW_AUTHOR sleep 0.3 s inside COMMIT, after the rows are written."""
    await store.list()  # the schema exists
    await admin.execute(_SLOW_COMMIT)
    yield
    await admin.execute("DROP TRIGGER IF EXISTS hookline_test_slow_commit ON hookline_events")


@pytest.mark.slow
@pytest.mark.usefixtures("slow_commits")
async def test_a_run_killed_mid_commit_leaves_no_duplicate_results(
    store: SessionStore, admin: asyncpg.Connection, postgres_dsn: str
) -> None:
    rng = random.Random(7)
    failures = []
    for trial in range(TRIALS):
        calls = rng.randint(1, 4)
        session = await store.create()
        await kill_mid_commit(admin, postgres_dsn, session.id, calls, slow=rng.randrange(calls))
        await resume(store, session.id, calls)
        problems = check(await store.events(session.id), calls)
        if problems:
            failures.append(f"trial {trial}: {problems}")
    assert not failures, f"{len(failures)} of {TRIALS} trials broke the log: {failures[:5]}"


async def kill_mid_commit(admin: asyncpg.Connection, dsn: str, session_id: str, calls: int, slow: int) -> None:
    """Start a worker and SIGKILL it while its slow commit is in flight."""
    command = [sys.executable, "-c", WORKER, dsn, session_id, str(calls), str(slow)]
    worker = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:

        async def committing() -> bool:
            assert worker.poll() is None, "the worker ended before its slow commit"
            sleeping = await admin.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep'"
            )
            return bool(sleeping)

        await wait_until(committing, "the worker's slow commit")
        worker.send_signal(signal.SIGKILL)
    finally:
        worker.kill()
        worker.communicate()


async def resume(store: SessionStore, session_id: str, calls: int) -> None:
    """What a resumed run does: take the lock, read the log, answer the calls still unanswered."""
    async with store.run_lock(session_id, timeout=DEADLINE):
        answered = {r.call_id for e in await store.events(session_id) for r in e.to_message().tool_results}
        for i in range(calls):
            if f"c{i}" not in answered:
                await store.append_event(session_id, result(f"c{i}"))


def check(events: list[Event], calls: int) -> list[str]:
    problems = []
    if [e.seq for e in events] != list(range(1, len(events) + 1)):
        problems.append(f"seq not gap-free: {[e.seq for e in events]}")
    results = Counter(r.call_id for e in events for r in e.to_message().tool_results)
    if results != Counter(f"c{i}" for i in range(calls)):
        problems.append(f"results per call: {dict(results)}")
    return problems
