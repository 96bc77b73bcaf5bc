"""`SQLiteSessionStore.hold_for_run`: the lease and the first read in one transaction, the release with the last write.

Issue 28 (the server's CPU per run): a run's lease took a transaction of its own at each
end, beside its first read and its last write. Now one transaction takes the lease (after
the owner check) and reads the session, and the last write gives the lease back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hookline import Agent, Event, Message
from hookline.errors import SessionBusy, SessionNotFound
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SQLiteSessionStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class CountingStore(SQLiteSessionStore):
    """A SQLite store that counts the jobs its thread runs (each one a transaction or one read).

    The small writes made on the calling thread's own connection are counted apart
    (`_inline.commits`).
    """

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.jobs = 0

    async def _run(self, job: Any, **options: Any) -> Any:
        self.jobs += 1
        return await super()._run(job, **options)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[CountingStore]:
    opened = CountingStore(tmp_path / "s.db")
    yield opened
    await opened.aclose()


def says(text: str) -> Event:
    return Event.from_message(Message.user(text), "user")


async def test_the_last_write_gives_the_lease_back(store: CountingStore) -> None:
    session = await store.create()
    async with store.hold_for_run(session.id) as hold:
        await hold.finish([says("done")], {"k": 1})
        assert not await store.run_active(session.id), "free from the last write on, before the block ends"
        async with store.hold_for_run(session.id):  # another run may start at once
            pass


async def test_another_users_session_is_not_found_even_while_held(store: CountingStore) -> None:
    session = await store.create(user="u1")
    async with store.hold_for_run(session.id, user="u1"):
        with pytest.raises(SessionNotFound):
            async with store.hold_for_run(session.id, user="u2", create=False):
                pass
        with pytest.raises(SessionBusy):
            async with store.hold_for_run(session.id, user="u1", create=False):
                pass


async def test_a_run_takes_three_transactions_two_of_them_without_the_stores_thread(store: CountingStore) -> None:
    def answer(request: ModelRequest) -> ModelResponse:
        return ModelResponse(text="hi")

    agent = Agent("a", model=FunctionModel(answer), session_store=store)
    session = await store.create()
    assert store._inline is not None
    jobs, small_writes = store.jobs, store._inline.commits
    await agent.prompt("hello").session(session.id, create=False)
    # hold (lease + read) in the store's thread; the model call's flush (the prompt with it)
    # and the last write (+ release) on this thread's own connection
    assert (store.jobs - jobs, store._inline.commits - small_writes) == (1, 2)
