"""hookline's three stores run the public store contract (`hookline.testing.store_contract`).

What only one backend does (leases across processes, fencing, WAL, migrations, faults,
process exit) is tested in this folder's other modules.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hookline.sessions import InMemorySessionStore, PostgresSessionStore, SessionStore, SQLiteSessionStore
from hookline.testing.store_contract import SessionStoreContract


class TestInMemoryStore(SessionStoreContract):
    durable = False

    def create_store(self) -> SessionStore:
        return InMemorySessionStore()


class TestSQLiteStore(SessionStoreContract):
    @pytest.fixture(autouse=True)
    def _database(self, tmp_path: Path) -> None:
        self.path = tmp_path / "sessions.db"

    def create_store(self) -> SessionStore:
        return SQLiteSessionStore(self.path)


class TestPostgresStore(SessionStoreContract):
    @pytest.fixture(autouse=True)
    def _database(self, postgres_dsn: str) -> None:
        self.dsn = postgres_dsn  # one database for the test session: the cases keep to their own sessions

    def create_store(self) -> SessionStore:
        return PostgresSessionStore(self.dsn)


def test_a_subclass_without_create_store_says_what_is_missing() -> None:
    class TestHalfDone(SessionStoreContract):
        pass

    with pytest.raises(NotImplementedError, match=r"TestHalfDone must define create_store\(\)"):
        TestHalfDone().create_store()


OLDEST_FIRST = '''
from hookline.sessions import InMemorySessionStore
from hookline.testing.store_contract import SessionStoreContract


class OldestFirst(InMemorySessionStore):
    async def list(self, *, app=None, user=None, limit=None):
        return (await super().list(app=app, user=user, limit=limit))[::-1]


class TestOldestFirst(SessionStoreContract):
    durable = False

    def create_store(self):
        return OldestFirst()
'''


def test_the_contract_fails_a_store_that_breaks_it(tmp_path: Path) -> None:
    module = tmp_path / "test_oldest_first.py"
    module.write_text(OLDEST_FIRST, encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(module), "-k", "list or views"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    for case in ("test_list_is_scoped_by_app_and_user_newest", "test_list_with_a_limit_answers_the_newest"):
        assert f"FAILED test_oldest_first.py::TestOldestFirst::{case}" in done.stdout
    assert "2 failed, 1 passed" in done.stdout


def test_importing_hookline_testing_imports_no_pytest() -> None:
    probe = "import sys, hookline, hookline.testing; print(sorted(m for m in sys.modules if m.startswith('_pytest')))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"
