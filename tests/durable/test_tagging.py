"""`TaggedStore` forwards every call to the store it views, defaulted ones too.

`SessionStore` gives defaults to `open_for_run`, `append_and_save_state`, `hold_for_run`
and `load_blobs`; a view that left them out would run those defaults instead of the real
store's methods:
a durable run could not read an earlier image back, and its last write would be two
transactions. The stores here are real SQLite files; the durable runs go through real DBOS
(launched by `test_dbos.py`'s `dbos` fixture, on this module's own database).
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from durable.test_dbos import POLL, dbos, unique  # noqa: F401 - `dbos` is a fixture
from hookline import Event, ImagePart, Message, TextPart
from hookline.durable import WORKFLOW_KEY, DurableAgent
from hookline.durable._tagging import began
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import Blob, Session, SessionStore, SQLiteSessionStore
from hookline.sessions._tagged import TaggedStore
from hookline.sessions.base import LastWrite, RunHold

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63646078df0f0002870180eb47ba920000000049454e44ae426082"
)


class RecordingStore(SQLiteSessionStore):
    """A SQLite store that notes which of its own methods a caller reached (`calls`)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.calls: list[str] = []

    async def open_for_run(
        self, session_id: str, *, user: str | None = "default", create: bool = True, app: str = "default"
    ) -> tuple[Session, list[Event]]:
        self.calls.append("open_for_run")
        return await super().open_for_run(session_id, user=user, create=create, app=app)

    @asynccontextmanager
    async def hold_for_run(
        self, session_id: str, *, user: str | None = "default", create: bool = True, app: str = "default",
        timeout: float = 0.0,
    ) -> AsyncIterator[RunHold]:
        self.calls.append("hold_for_run")
        async with super().hold_for_run(session_id, user=user, create=create, app=app, timeout=timeout) as hold:
            yield hold._replace(finish=partial(self._finish, hold.finish))

    async def _finish(self, finish: LastWrite, events: Sequence[Event], state: dict[str, Any]) -> list[Event]:
        self.calls.append("finish")
        return await finish(events, state)

    async def get(self, session_id: str, *, user: str | None = None, with_events: bool = True) -> Session:
        self.calls.append("get")
        return await super().get(session_id, user=user, with_events=with_events)

    async def append_events(self, session_id: str, events: Sequence[Event]) -> list[Event]:
        self.calls.append("append_events")
        return await super().append_events(session_id, events)

    async def append_and_save_state(
        self, session_id: str, events: Sequence[Event], state: dict[str, Any]
    ) -> list[Event]:
        self.calls.append("append_and_save_state")
        return await super().append_and_save_state(session_id, events, state)

    async def update_state(self, session_id: str, state: dict[str, Any]) -> None:
        self.calls.append("update_state")
        await super().update_state(session_id, state)

    async def load_blobs(self, session_id: str, digests: Iterable[str]) -> dict[str, Blob]:
        self.calls.append("load_blobs")
        return await super().load_blobs(session_id, digests)


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[RecordingStore]:
    store = RecordingStore(tmp_path / "sessions.db")
    yield store
    await store.aclose()


def says(text: str) -> Event:
    return Event.from_message(Message.user(text), "user")


def test_the_view_forwards_every_method_the_base_store_gives_a_default_to() -> None:
    defaulted = {
        name
        for name, member in vars(SessionStore).items()
        if callable(member) and not name.startswith("_") and not getattr(member, "__isabstractmethod__", False)
    }
    # `append_event` is built on the tagging `append_events`; the view does not own the store it closes.
    assert defaulted - vars(TaggedStore).keys() == {"append_event", "aclose"}


@pytest.mark.anyio
@pytest.mark.usefixtures("dbos")
async def test_a_later_durable_run_sends_the_model_an_earlier_runs_image(sqlite_store: RecordingStore) -> None:
    seen: list[list[bytes | None]] = []

    def look(request: ModelRequest) -> ModelResponse:
        seen.append([p.data for m in request.messages for p in m.parts if isinstance(p, ImagePart)])
        return ModelResponse(text=f"run {len(seen)}")

    agent = DurableAgent(unique("looker"), model=FunctionModel(look), session_store=sqlite_store)
    session_id = unique("s")
    question = Message(role="user", parts=[TextPart(text="What is this?"), ImagePart(media_type="image/png", data=PNG)])

    first = await agent.run(question, session_id=session_id, poll=POLL)
    second = await agent.run("And now?", session_id=session_id, poll=POLL)

    assert (first.output, second.output) == ("run 1", "run 2")
    assert seen == [[PNG], [PNG]]  # the second run read the first's bytes back from the store
    stored_image = (await sqlite_store.events(session_id))[0].parts[1]
    assert isinstance(stored_image, ImagePart)
    assert (stored_image.data, stored_image.blob) == (None, hashlib.sha256(PNG).hexdigest())  # kept apart
    assert "load_blobs" in sqlite_store.calls
    # Each run held its session and finished with the store's own one-transaction methods.
    assert sqlite_store.calls.count("hold_for_run") == sqlite_store.calls.count("finish") == 2
    assert {"open_for_run", "update_state", "append_and_save_state"}.isdisjoint(sqlite_store.calls)
    assert all(e.metadata.get(WORKFLOW_KEY) for e in await sqlite_store.events(session_id)), "the last writes tagged"


@pytest.mark.anyio
async def test_append_and_save_state_is_the_stores_one_write_with_tagged_events(
    sqlite_store: RecordingStore,
) -> None:
    session = await sqlite_store.create(state={"old": 1})
    view = TaggedStore(sqlite_store, WORKFLOW_KEY, "wf-1")
    events = [says("hi"), says("again")]
    sqlite_store.calls.clear()

    stored = await view.append_and_save_state(session.id, events, {"new": 2})

    assert sqlite_store.calls == ["append_and_save_state"]  # not append_events, then update_state
    assert [e.metadata[WORKFLOW_KEY] for e in stored] == ["wf-1", "wf-1"]
    assert all(WORKFLOW_KEY not in e.metadata for e in events)  # the caller's events are left untagged
    saved = await sqlite_store.get(session.id)
    assert saved.state == {"new": 2}
    assert [(e.text, e.metadata) for e in saved.events] == [
        ("hi", {WORKFLOW_KEY: "wf-1"}),
        ("again", {WORKFLOW_KEY: "wf-1"}),
    ]
    appended = await view.append_events(session.id, [says("later")])
    assert appended[0].metadata == stored[0].metadata  # both writes tag alike
    assert began(await sqlite_store.events(session.id), "wf-1")


@pytest.mark.anyio
async def test_open_for_run_is_the_stores_own(sqlite_store: RecordingStore) -> None:
    existing = await sqlite_store.create(state={"k": "v"})
    await sqlite_store.append_events(existing.id, [says("earlier")])
    view = TaggedStore(sqlite_store, WORKFLOW_KEY, "wf-1")
    sqlite_store.calls.clear()

    opened, prompt = await view.open_for_run(existing.id, create=False)
    created, empty = await view.open_for_run("new-one", user="u1", app="app1")

    assert sqlite_store.calls == ["open_for_run", "open_for_run"]  # not get, create, events
    assert (opened.id, opened.state, [e.text for e in prompt]) == (existing.id, {"k": "v"}, ["earlier"])
    assert (created.id, created.user, created.app, empty) == ("new-one", "u1", "app1", [])
