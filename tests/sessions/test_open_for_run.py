"""`open_for_run` when another writer creates the same session at the same moment.

The contract cases (`hookline.testing`) cover what it returns; these cover the race its
callers used to handle themselves: a session created between the read that found nothing
and the create is read, never reported as `SessionExists`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from hookline.errors import SessionNotFound
from hookline.sessions import InMemorySessionStore, Session, SessionStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class CreatedMeanwhile(InMemorySessionStore):
    """A store on which another writer creates each session just after a `get` found it missing.

    It keeps the default `open_for_run` of `SessionStore`, as a store of your own does.
    """

    async def get(self, session_id: str, *, user: str | None = None, with_events: bool = True) -> Session:
        try:
            return await super().get(session_id, user=user, with_events=with_events)
        except SessionNotFound:
            await super().create(session_id=session_id, app="theirs", user=user or "default")
            raise


async def test_the_default_reads_a_session_created_meanwhile() -> None:
    store = CreatedMeanwhile()
    session, prompt = await store.open_for_run("s1", user="u1", app="mine")
    assert (session.id, session.app, session.user, prompt) == ("s1", "theirs", "u1", [])


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_two_stores_opening_one_new_session_at_once_share_it(open_store: Callable[[], SessionStore]) -> None:
    first, second = open_store(), open_store()  # two connections (SQLite: two threads) on one database
    ids = [f"race-{uuid.uuid4().hex[:8]}" for _ in range(100)]

    async def open_all(store: SessionStore) -> list[Any]:
        return [await store.open_for_run(session_id, user="u1") for session_id in ids]

    mine, theirs = await asyncio.gather(open_all(first), open_all(second))
    for (a, prompt_a), (b, prompt_b) in zip(mine, theirs, strict=True):
        assert a == b, "both got the one session, as it was created"
        assert prompt_a == prompt_b == []
    assert {s.id for s in await first.list(user="u1")} >= set(ids)
