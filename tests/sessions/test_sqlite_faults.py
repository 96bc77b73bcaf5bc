"""SQLite store faults: a failed commit and a full disk, caused for real in the database or the OS.

Each fault must surface as a `StoreError` naming the file and the cause, leave nothing
half-written (seq stays gap-free, a failed batch adds none of its events), and the
store must work again once the cause is gone, on the same connection.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path

import pytest

from hookline.errors import StoreError
from hookline.events import Event
from hookline.messages import TextPart
from hookline.sessions import SQLiteSessionStore

pytestmark = pytest.mark.anyio


def said(text: str, author: str = "user") -> Event:
    return Event(author=author, role="user", parts=[TextPart(text=text)])


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "sessions.db"


@pytest.fixture
async def store(db_path: Path) -> AsyncIterator[SQLiteSessionStore]:
    async with SQLiteSessionStore(db_path) as store:
        yield store


async def texts(store: SQLiteSessionStore, session_id: str) -> list[str]:
    """The texts of the log (pending parts last), checking that its seqs have no gap."""
    events = await store.events(session_id)
    logged = [e.seq for e in events if not e.partial]
    assert logged == list(range(1, len(logged) + 1))
    return [e.text for e in events]


async def fill(store: SQLiteSessionStore, session_id: str, text: str) -> tuple[int, StoreError]:
    """Append `text` until the store fails; return how many went in, and the error."""
    for count in range(1000):
        try:
            await store.append_event(session_id, said(text))
        except StoreError as exc:
            return count, exc
    pytest.fail("the store never filled up")


# --- a failed commit -------------------------------------------------------------------------

# The database itself refuses the commit: a deferred foreign key, broken by a trigger on
# the events of author "doomed", is checked only at COMMIT, which then fails and leaves
# the transaction open.
FAILING_COMMIT = """
CREATE TABLE fault_target (id INTEGER PRIMARY KEY);
CREATE TABLE fault_ref (ref INTEGER REFERENCES fault_target (id) DEFERRABLE INITIALLY DEFERRED);
CREATE TRIGGER fault_on_commit AFTER INSERT ON hookline_events WHEN NEW.author = 'doomed'
BEGIN INSERT INTO fault_ref VALUES (1); END;
"""


async def test_a_failed_commit_is_a_clear_error_and_keeps_nothing(store: SQLiteSessionStore, db_path: Path) -> None:
    session = await store.create()
    await store.append_event(session.id, said("before"))
    await store.prepare_event(session.id, said("prepared", author="doomed"))
    with closing(sqlite3.connect(db_path)) as raw:
        raw.executescript(FAILING_COMMIT)

    for _ in range(2):  # twice: the first failure must not leave its transaction open
        with pytest.raises(StoreError, match="FOREIGN KEY constraint failed") as caught:
            await store.append_events(session.id, [said("one"), said("two", author="doomed"), said("three")])
        assert str(db_path) in str(caught.value)

    assert await texts(store, session.id) == ["before", "prepared"]  # the prepared parts are still pending
    assert (await store.append_event(session.id, said("after"))).seq == 2
    with closing(sqlite3.connect(db_path)) as raw:
        raw.execute("DROP TRIGGER fault_on_commit")
    merged = await store.append_event(session.id, said("now", author="doomed"))
    assert (merged.seq, merged.text) == (3, "preparednow")
    assert await texts(store, session.id) == ["before", "after", "preparednow"]


async def test_a_failed_release_does_not_keep_the_session_held(store: SQLiteSessionStore, db_path: Path) -> None:
    session = await store.create()
    with closing(sqlite3.connect(db_path)) as raw:
        raw.executescript(FAILING_COMMIT)
    async with store.run_lock(session.id):
        await store.append_event(session.id, said("ran"))
        with closing(sqlite3.connect(db_path)) as raw:  # the release will fail at its COMMIT
            raw.execute(
                "CREATE TRIGGER fault_on_release AFTER DELETE ON hookline_run_locks"
                " BEGIN INSERT INTO fault_ref VALUES (1); END"
            )
    # The run's outcome stands (the failed release raised nothing); the lease is still there.
    with closing(sqlite3.connect(db_path)) as raw:
        assert raw.execute("SELECT count(*) FROM hookline_run_locks").fetchone() == (1,)
        raw.execute("DROP TRIGGER fault_on_release")

    async with store.run_lock(session.id, timeout=0):  # not SessionBusy: the stale lease went first
        pass
    await store.delete(session.id)
    with closing(sqlite3.connect(db_path)) as raw:
        assert raw.execute("SELECT count(*) FROM hookline_run_locks").fetchone() == (0,)


async def test_delete_clears_a_lease_this_store_failed_to_release(store: SQLiteSessionStore, db_path: Path) -> None:
    session = await store.create()
    with closing(sqlite3.connect(db_path)) as raw:
        raw.executescript(FAILING_COMMIT)
    async with store.run_lock(session.id):
        with closing(sqlite3.connect(db_path)) as raw:
            raw.execute(
                "CREATE TRIGGER fault_on_release AFTER DELETE ON hookline_run_locks"
                " BEGIN INSERT INTO fault_ref VALUES (1); END"
            )
    with closing(sqlite3.connect(db_path)) as raw:
        raw.execute("DROP TRIGGER fault_on_release")
    await store.delete(session.id)  # not SessionBusy: no run holds it


# --- a full disk -----------------------------------------------------------------------------


async def cap_pages(store: SQLiteSessionStore, pages: int) -> None:
    for small in (False, True):
        await store._transaction(lambda db: db.execute(f"PRAGMA max_page_count = {pages}").fetchall(), small=small)


async def test_a_full_database_is_a_clear_error_and_recovers(store: SQLiteSessionStore, db_path: Path) -> None:
    session = await store.create()
    await store.append_event(session.id, said("first"))
    # `max_page_count` caps the file for one connection only: set it on the store's thread's
    # own, and on the one this thread writes small writes on.
    (pages,) = (await store._transaction(lambda db: db.execute("PRAGMA page_count").fetchall(), read_only=True))[0]
    await cap_pages(store, pages + 4)

    big = "x" * 6000
    filled, error = await fill(store, session.id, big)
    stored = filled + 1
    assert filled > 0  # it filled up after a while, not at once
    message = str(error)
    assert str(db_path) in message
    assert "the disk is full" in message
    assert "nothing of this write was saved" in message
    with pytest.raises(StoreError, match="the disk is full"):
        await store.append_events(session.id, [said("a"), said(big), said(big)])
    assert len(await texts(store, session.id)) == stored

    await cap_pages(store, 1073741823)
    assert (await store.append_event(session.id, said("after"))).seq == stored + 1
    assert (await texts(store, session.id))[-1] == "after"


# A real full disk: a 1 MiB tmpfs mounted in a private mount namespace (unshare, no root
# needed), gone with the process. The script fills it, then frees the space it had set
# aside, and reports what it saw as JSON.
FILL_THE_DISK = """
import asyncio, json, os, sys
from hookline.errors import StoreError
from hookline.events import Event
from hookline.messages import TextPart
from hookline.sessions import SQLiteSessionStore

folder = sys.argv[1]

def said(text):
    return Event(author="user", role="user", parts=[TextPart(text=text)])

async def main():
    store = SQLiteSessionStore(os.path.join(folder, "sessions.db"))
    session = await store.create()
    with open(os.path.join(folder, "reserve"), "wb") as reserve:
        reserve.write(b"r" * 256 * 1024)
    stored, errors = 0, []
    for i in range(1000):
        try:
            await store.append_event(session.id, said(f"{i}:" + "x" * 8000))
            stored += 1
        except StoreError as exc:
            errors.append(str(exc))
            break
    try:
        await store.append_events(session.id, [said("batch:" + "x" * 8000)] * 3)  # more than the append that failed
    except StoreError as exc:
        errors.append(str(exc))
    seqs_full = [e.seq for e in await store.events(session.id)]
    os.remove(os.path.join(folder, "reserve"))
    after = (await store.append_event(session.id, said("after"))).seq
    seqs = [e.seq for e in await store.events(session.id)]
    await store.aclose()
    print(json.dumps({"stored": stored, "errors": errors, "seqs_full": seqs_full, "after": after, "seqs": seqs}))

asyncio.run(main())
"""


def in_tiny_tmpfs(folder: Path, command: list[str]) -> list[str]:
    """`command` run with a 1 MiB tmpfs mounted on `folder`, seen by that process alone."""
    mount = f'mount -t tmpfs -o size=1m tmpfs {folder} && exec "$@"'
    return ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", mount, "sh", *command]


def test_a_full_disk_is_a_clear_error_and_recovers(tmp_path: Path) -> None:
    folder = tmp_path / "tiny"
    folder.mkdir()
    probe = subprocess.run(in_tiny_tmpfs(folder, ["true"]), capture_output=True, text=True, check=False)
    if shutil.which("unshare") is None or probe.returncode != 0:
        pytest.skip(f"cannot mount a private tmpfs (unshare: {probe.stderr.strip() or 'missing'})")
    script = tmp_path / "fill.py"
    script.write_text(textwrap.dedent(FILL_THE_DISK))
    done = subprocess.run(
        in_tiny_tmpfs(folder, [sys.executable, str(script), str(folder)]),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    seen = json.loads(done.stdout)

    assert seen["stored"] > 10  # the disk filled up after a while, not at once
    assert len(seen["errors"]) == 2
    for error in seen["errors"]:
        assert str(folder / "sessions.db") in error
        assert "the disk is full" in error
    assert seen["seqs_full"] == list(range(1, seen["stored"] + 1))  # the failed batch added nothing
    assert seen["after"] == seen["stored"] + 1
    assert seen["seqs"] == list(range(1, seen["stored"] + 2))


# --- cancellation ----------------------------------------------------------------------------


async def test_a_cancelled_append_returns_at_once_and_is_not_saved(db_path: Path) -> None:
    async with SQLiteSessionStore(db_path, busy_timeout=30) as store:
        session = await store.create()
        await store.append_event(session.id, said("before"))
        with closing(sqlite3.connect(db_path, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")  # another process writes: the append waits for it
            started = time.monotonic()
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(store.append_event(session.id, said("cancelled")), 0.3)
            assert time.monotonic() - started < 5  # not busy_timeout: the caller is not held up
            other.execute("COMMIT")
        # The abandoned transaction got the lock once the other writer let go, and rolled back.
        assert (await store.append_event(session.id, said("after"))).seq == 2
        assert await texts(store, session.id) == ["before", "after"]


OPEN_AT_ONCE = textwrap.dedent("""
    import asyncio, sys, time
    from hookline.sessions import SQLiteSessionStore

    async def main():
        start = float(sys.argv[2])
        while time.time() < start:
            time.sleep(0.0005)
        await SQLiteSessionStore(sys.argv[1]).create()

    asyncio.run(main())
""")


def test_processes_opening_a_new_file_at_once_all_get_it(tmp_path: Path) -> None:
    """Turning a new file to WAL fails at once, not after busy_timeout, while another process does it too."""
    script = tmp_path / "open.py"
    script.write_text(OPEN_AT_ONCE)
    for trial in range(8):
        path, start = tmp_path / f"t{trial}.db", time.time() + 0.5
        children = [subprocess.Popen([sys.executable, str(script), str(path), str(start)], stderr=subprocess.PIPE)
                    for _ in range(6)]
        errors = [child.communicate(timeout=60)[1].decode() for child in children]
        assert all(child.returncode == 0 for child in children), next(e for e in errors if e)
