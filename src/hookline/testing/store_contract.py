"""`SessionStoreContract`: the test suite every session store passes, for yours to run too.

hookline's three stores (in memory, SQLite, PostgreSQL) run this same suite, so a backend
of your own that passes it behaves as they do: `seq` assigned without gaps, the views,
prepared parts merged into their author's next event, copies handed out, the errors
(`SessionNotFound`, `SessionExists`, `InvalidEvent`, `SessionBusy`), NUL kept and lone
surrogates replaced, the bytes of images and files kept once per session (`load_blobs`;
a store that keeps them in the log instead passes too: a part may come back with its
`data` where ours come back with `blob`; a write naming bytes by `blob` alone that the
session lacks is refused), one run at a time per session (a run cancelled
while it takes the lock or waits for it leaves the session free), the log read a page at a
time, the sessions that mention a text (`search`), and the agent running, pausing and
resuming on it. As eventsourcing ships its recorder test cases, subclass the contract in
a pytest module and say how to make your store:

```python
import pytest

from hookline.testing.store_contract import SessionStoreContract
from my_package import MyStore


class TestMyStore(SessionStoreContract):
    @pytest.fixture(autouse=True)
    def _database(self, tmp_path):
        self.path = tmp_path / "sessions.db"     # this test's data

    def create_store(self) -> MyStore:
        return MyStore(self.path)
```

pytest collects the cases as methods of `TestMyStore`; your own tests (of what only your
backend does) go beside it. Each case opens its store through `create_store()` and closes
it (`aclose()`) at the end. The cases make their own session ids and app names, so they
may share one database, as hookline's PostgreSQL tests do; only `list` and `search` read
across sessions, and then only those of an app name made for the test, or words only the
test's sessions hold.

The cases run under pytest with anyio's plugin (installed with anyio, a hookline
dependency), on asyncio. Importing this module needs pytest; `import hookline` and
`import hookline.testing` never import it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import ClassVar

try:
    import pytest
except ImportError as exc:  # pragma: no cover - depends on what is installed
    raise ImportError("hookline.testing.store_contract runs under pytest: pip install pytest") from exc

from hookline.sessions import SessionStore
from hookline.testing._store_blob_cases import BlobCases
from hookline.testing._store_cases import StoredCases, texts, user_edit, user_says
from hookline.testing._store_lock_cases import LockCancelCases
from hookline.testing._store_page_cases import PageCases
from hookline.testing._store_run_cases import RunCases
from hookline.testing._store_search_cases import SearchCases

__all__ = ["SessionStoreContract"]


class SessionStoreContract(StoredCases, BlobCases, RunCases, LockCancelCases, PageCases, SearchCases):
    """The contract of `SessionStore`, as pytest test cases: subclass it and define `create_store()`.

    Not collected itself (its name does not start with `Test`); a subclass named
    `Test...` is. Override `durable` for a store that keeps nothing between instances.
    """

    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.anyio]

    durable: ClassVar[bool] = True
    """Whether a second store from `create_store()` reads what a first one wrote and closed
    (a database: True; a store in process memory: False, and the durability case is skipped)."""

    def create_store(self) -> SessionStore:
        """Return a new store on this test's data; every call of one test reaches the same data.

        Raises:
            NotImplementedError: The subclass did not define it.

        """
        raise NotImplementedError(f"{type(self).__name__} must define create_store() to return the store to test")

    @pytest.fixture
    def anyio_backend(self) -> str:
        """The stores run on asyncio."""
        return "asyncio"

    @pytest.fixture
    async def open_store(self) -> AsyncIterator[Callable[[], SessionStore]]:
        """A function that opens `create_store()`'s stores; every one is closed at the end of the test."""
        opened: list[SessionStore] = []

        def open_() -> SessionStore:
            opened.append(self.create_store())
            return opened[-1]

        yield open_
        for store in opened:
            await store.aclose()

    @pytest.fixture
    def store(self, open_store: Callable[[], SessionStore]) -> SessionStore:
        """The store each case runs against."""
        return open_store()

    async def test_prepared_parts_and_log_are_durable(self, open_store: Callable[[], SessionStore]) -> None:
        """A new store instance reads the log, state and prepared parts an earlier one wrote."""
        if not self.durable:
            pytest.skip("this store keeps nothing between instances (durable = False)")
        writer = open_store()
        session = await writer.create(user="u1", state={"k": "v"})
        await writer.append_event(session.id, user_says("hi"))
        partial = await writer.prepare_event(session.id, user_edit("c1", "a.txt"))
        await writer.aclose()

        reader = open_store()
        reopened = await reader.get(session.id, user="u1")
        assert reopened.state == {"k": "v"}
        assert texts(reopened.events[:1]) == ["hi"]
        assert reopened.events[-1] == partial
        merged = await reader.append_event(session.id, user_says("go"))
        assert merged.seq == 2
        assert len(merged.parts) == 3
