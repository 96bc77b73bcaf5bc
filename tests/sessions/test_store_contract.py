"""One contract suite, run against every session store (DESIGN §3)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest

from hookline.errors import ConfigError, SessionBusy, SessionNotFound
from hookline.events import Event
from hookline.messages import TextPart, ToolCallPart, ToolResultPart
from hookline.sessions import InvalidEvent, SessionExists, SessionStore

pytestmark = pytest.mark.anyio


def user_says(text: str, **metadata: Any) -> Event:
    return Event(author="user", kind="message", role="user", parts=[TextPart(text=text)], metadata=metadata)


def assistant_says(text: str) -> Event:
    return Event(author="assistant", kind="message", role="assistant", parts=[TextPart(text=text)])


def status(text: str) -> Event:
    return Event.status("assistant", "agent", text)


def user_edit(call_id: str, path: str) -> Event:
    """A user's file edit, recorded as a `write_file` tool call and its result."""
    return Event(
        author="user",
        role="user",
        parts=[
            ToolCallPart(id=call_id, name="write_file", arguments={"path": path}),
            ToolResultPart(call_id=call_id, content="ok", name="write_file"),
        ],
    )


def texts(events: list[Event]) -> list[str]:
    return [e.text for e in events]


# --- create, get, list, delete -------------------------------------------------------------


async def test_create_then_get(store: SessionStore, app: str) -> None:
    before = datetime.now(UTC) - timedelta(seconds=1)
    created = await store.create(app=app, user="u1", session_id="s-1-" + app, state={"topic": "tax", "n": [1, 2]})
    fetched = await store.get(created.id)
    assert (fetched.id, fetched.app, fetched.user) == ("s-1-" + app, app, "u1")
    assert fetched.state == {"topic": "tax", "n": [1, 2]}
    assert fetched.events == []
    assert fetched.created_at is not None
    assert fetched.created_at == created.created_at
    assert before < fetched.created_at < datetime.now(UTC) + timedelta(seconds=1)


async def test_create_without_id_makes_a_fresh_one(store: SessionStore) -> None:
    first, second = await store.create(), await store.create()
    assert first.id != second.id
    assert len(first.id) == 32
    assert int(first.id, 16) >= 0
    assert (first.app, first.user, first.state) == ("default", "default", {})


async def test_create_with_a_taken_id_fails(store: SessionStore, app: str) -> None:
    await store.create(app=app, session_id=app)
    with pytest.raises(SessionExists, match=app):
        await store.create(app=app, session_id=app)


async def test_state_must_be_json(store: SessionStore) -> None:
    with pytest.raises(ConfigError, match="JSON"):
        await store.create(state={"when": object()})


async def test_list_is_scoped_by_app_and_user_newest_first(store: SessionStore, app: str) -> None:
    mine = []
    for _ in range(3):
        mine.append((await store.create(app=app, user="u1")).id)
        await anyio.sleep(0.002)  # distinct creation times, so "newest first" is well defined
    theirs = (await store.create(app=app, user="u2")).id
    elsewhere = (await store.create(app=app + "-other", user="u1")).id

    listed = await store.list(app=app, user="u1")
    assert [s.id for s in listed] == mine[::-1]
    assert all(s.events == [] and s.user == "u1" for s in listed)
    assert {s.id for s in await store.list(app=app)} == {*mine, theirs}
    assert [s.id for s in await store.list(app=app, user="u2")] == [theirs]
    assert elsewhere in {s.id for s in await store.list(user="u1")}
    assert theirs not in {s.id for s in await store.list(user="u1")}


async def test_another_users_session_is_not_found(store: SessionStore, app: str) -> None:
    session = await store.create(app=app, user="u1")
    with pytest.raises(SessionNotFound, match=session.id):
        await store.get(session.id, user="u2")
    with pytest.raises(SessionNotFound):
        await store.delete(session.id, user="u2")
    assert (await store.get(session.id, user="u1")).id == session.id


async def test_delete_removes_the_session_and_its_log(store: SessionStore, app: str) -> None:
    session = await store.create(app=app, user="u1")
    await store.append_event(session.id, user_says("hi"))
    await store.prepare_event(session.id, user_edit("c1", "a.txt"))
    await store.delete(session.id, user="u1")
    assert await store.list(app=app) == []
    for call in (store.get(session.id), store.events(session.id), store.delete(session.id)):
        with pytest.raises(SessionNotFound):
            await call


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.get("nope"),
        lambda s: s.delete("nope"),
        lambda s: s.events("nope"),
        lambda s: s.append_event("nope", user_says("hi")),
        lambda s: s.append_events("nope", []),
        lambda s: s.prepare_event("nope", user_says("hi")),
        lambda s: s.update_state("nope", {}),
    ],
    ids=["get", "delete", "events", "append_event", "append_events", "prepare_event", "update_state"],
)
async def test_unknown_session_is_not_found(store: SessionStore, call: Callable[[SessionStore], Any]) -> None:
    with pytest.raises(SessionNotFound, match="'nope' not found") as caught:
        await call(store)
    assert caught.value.session_id == "nope"
    assert isinstance(caught.value, KeyError)


# --- append and views ----------------------------------------------------------------------


async def test_append_assigns_seq_and_fills_the_event(store: SessionStore) -> None:
    session = await store.create()
    one = await store.append_event(session.id, user_says("one"))
    two, three = await store.append_events(session.id, [status("thinking"), assistant_says("three")])
    four = await store.append_event(session.id, user_says("four"))
    stored = [one, two, three, four]
    assert [e.seq for e in stored] == [1, 2, 3, 4]
    assert {e.session_id for e in stored} == {session.id}
    assert len({e.id for e in stored}) == 4
    assert all(e.id for e in stored)
    assert all(e.created_at is not None and e.created_at.utcoffset() == timedelta(0) for e in stored)
    assert not any(e.partial for e in stored)
    assert await store.events(session.id, view="all") == stored


async def test_append_keeps_everything_the_writer_gave(store: SessionStore) -> None:
    session = await store.create()
    event = Event(
        author="add",
        kind="message",
        role="tool",
        parts=[ToolResultPart(call_id="c9", content='{"sum": 5}', is_error=True, name="add")],
        metadata={"duration_ms": 12.5, "nested": {"a": [1, None, "ü"]}},
    )
    stored = await store.append_event(session.id, event)
    (loaded,) = await store.events(session.id)
    assert loaded == stored
    assert loaded.model_dump(exclude={"id", "session_id", "seq", "created_at"}) == event.model_dump(
        exclude={"id", "session_id", "seq", "created_at"}
    )


async def test_an_empty_batch_stores_nothing(store: SessionStore) -> None:
    session = await store.create()
    assert await store.append_events(session.id, []) == []
    assert (await store.append_event(session.id, user_says("first"))).seq == 1


async def test_views_and_after_seq(store: SessionStore) -> None:
    session = await store.create()
    await store.append_events(
        session.id, [user_says("q"), status("calling model"), assistant_says("a"), status("done"), user_says("q2")]
    )
    assert texts(await store.events(session.id, view="prompt")) == ["q", "a", "q2"]
    assert texts(await store.events(session.id, view="ui")) == ["q", "calling model", "a", "done", "q2"]
    assert [e.seq for e in await store.events(session.id, view="all", after_seq=3)] == [4, 5]
    assert [e.seq for e in await store.events(session.id, view="prompt", after_seq=2)] == [3, 5]
    assert await store.events(session.id, view="ui", after_seq=5) == []
    with pytest.raises(ValueError, match="unknown view 'everything'"):
        await store.events(session.id, view="everything")  # type: ignore[arg-type]


# --- prepare_event ---------------------------------------------------------------------------


async def test_prepared_parts_accumulate_in_one_partial_event(store: SessionStore) -> None:
    session = await store.create()
    await store.append_event(session.id, assistant_says("edit the files"))
    first = await store.prepare_event(session.id, user_edit("c1", "a.txt"))
    second = await store.prepare_event(session.id, user_edit("c2", "b.txt"))
    assert first.partial
    assert second.partial
    assert second.id == first.id
    assert [p.type for p in second.parts] == ["tool_call", "tool_result", "tool_call", "tool_result"]

    shown = (await store.get(session.id)).events
    assert [e.partial for e in shown] == [False, True]
    assert shown[-1].parts == second.parts
    assert shown[-1].author == "user"
    assert shown[-1].seq is None
    assert shown[-1] == (await store.events(session.id, view="ui"))[-1]
    assert texts(await store.events(session.id, view="prompt")) == ["edit the files"]


async def test_partial_events_come_last_one_per_author(store: SessionStore) -> None:
    session = await store.create()
    await store.prepare_event(session.id, user_edit("c1", "a.txt"))
    await store.prepare_event(session.id, Event(author="reviewer", role="user", parts=[TextPart(text="lgtm")]))
    await store.prepare_event(session.id, user_edit("c2", "b.txt"))
    await store.append_event(session.id, status("waiting"))

    ui = await store.events(session.id, view="ui")
    assert [(e.author, e.partial) for e in ui] == [("assistant", False), ("reviewer", True), ("user", True)]
    assert len(ui[-1].parts) == 4
    assert ui == await store.events(session.id, view="all")
    assert ui == (await store.get(session.id)).events
    assert await store.events(session.id, view="prompt") == []


async def test_the_authors_next_append_merges_prepared_parts_first(store: SessionStore) -> None:
    session = await store.create()
    await store.prepare_event(session.id, user_edit("c1", "a.txt").model_copy(update={"metadata": {"a": 1, "b": 1}}))
    await store.prepare_event(session.id, Event(author="reviewer", role="user", parts=[TextPart(text="lgtm")]))
    other = await store.append_event(session.id, assistant_says("noted"))
    assert other.parts == [TextPart(text="noted")]
    assert [e.author for e in await store.events(session.id, view="ui") if e.partial] == ["reviewer", "user"]

    merged = await store.append_event(session.id, user_says("now run the tests", b=2))
    assert [p.type for p in merged.parts] == ["tool_call", "tool_result", "text"]
    assert merged.text == "now run the tests"
    assert merged.metadata == {"a": 1, "b": 2}
    assert not merged.partial
    assert merged.seq == 2

    ui = await store.events(session.id, view="ui")
    assert [(e.author, e.partial) for e in ui] == [("assistant", False), ("user", False), ("reviewer", True)]
    assert ui[1] == merged
    assert (await store.events(session.id, view="prompt"))[-1] == merged
    again = await store.append_event(session.id, user_says("and again"))
    assert again.parts == [TextPart(text="and again")]


async def test_a_batch_merges_into_the_authors_first_event_only(store: SessionStore) -> None:
    session = await store.create()
    await store.prepare_event(session.id, user_edit("c1", "a.txt"))
    first, second = await store.append_events(session.id, [user_says("one"), user_says("two")])
    assert len(first.parts) == 3
    assert second.parts == [TextPart(text="two")]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_prepared_parts_and_log_are_durable(open_store: Callable[[], SessionStore]) -> None:
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


# --- state, copies, validation -----------------------------------------------------------------


async def test_update_state_replaces_it(store: SessionStore) -> None:
    session = await store.create(state={"old": True})
    await store.update_state(session.id, {"new": [1, {"deep": "x"}]})
    assert (await store.get(session.id)).state == {"new": [1, {"deep": "x"}]}
    await store.update_state(session.id, {"pair": (1, 2)})
    assert (await store.get(session.id)).state == {"pair": [1, 2]}  # stored as JSON, by every store
    with pytest.raises(ConfigError, match="JSON"):
        await store.update_state(session.id, {"bad": object()})
    assert (await store.get(session.id)).state == {"pair": [1, 2]}


async def test_what_a_store_returns_is_a_copy(store: SessionStore) -> None:
    session = await store.create(state={"items": [1]})
    event = await store.append_event(session.id, user_says("hi"))
    event.parts.append(TextPart(text="tampered"))
    fetched = await store.get(session.id)
    fetched.state["items"].append(2)
    fetched.events[0].parts.clear()
    again = await store.get(session.id)
    assert again.state == {"items": [1]}
    assert texts(again.events) == ["hi"]


@pytest.mark.parametrize(
    ("event", "field"),
    [
        (Event(author="assistant", kind="delta", parts=[TextPart(text="he")]), "kind"),
        (Event(author="user", kind="message", parts=[TextPart(text="hi")]), "role"),
        (Event(author="", role="user", parts=[TextPart(text="hi")]), "author"),
        (Event(author="user", role="user", partial=True), "partial"),
        (Event(author="user", role="user", metadata={"when": object()}), "metadata"),
        ({"author": "user", "role": "user", "parts": [{"type": "image", "url": "x"}]}, "parts.0"),
        ({"author": "user", "role": "robot"}, "role"),
    ],
    ids=["delta", "no-role", "no-author", "partial", "metadata", "unknown-part", "bad-role"],
)
async def test_an_invalid_event_names_the_field(store: SessionStore, event: Any, field: str) -> None:
    session = await store.create()
    for write in (store.append_event, store.prepare_event):
        with pytest.raises(InvalidEvent, match=f"invalid event: {field}") as caught:
            await write(session.id, event)
        assert caught.value.field.startswith(field)
        assert isinstance(caught.value, ValueError)
    assert await store.events(session.id) == []


async def test_an_invalid_event_stops_the_whole_batch(store: SessionStore) -> None:
    session = await store.create()
    bad = Event(author="user", kind="message", parts=[])
    with pytest.raises(InvalidEvent, match="role"):
        await store.append_events(session.id, [user_says("ok"), bad])
    assert await store.events(session.id) == []
    assert (await store.append_event(session.id, user_says("ok"))).seq == 1


# --- run_lock --------------------------------------------------------------------------------


async def test_run_lock_gives_one_run_at_a_time(store: SessionStore) -> None:
    session = await store.create()
    async with store.run_lock(session.id):
        with pytest.raises(SessionBusy, match=session.id):
            async with store.run_lock(session.id):
                pytest.fail("a second run got the lock")
        started = time.monotonic()
        with pytest.raises(SessionBusy, match=r"waited 0\.2 s"):
            async with store.run_lock(session.id, timeout=0.2):
                pytest.fail("a second run got the lock")
        assert time.monotonic() - started >= 0.19
        async with store.run_lock(session.id + "-other"):
            pass  # other sessions are not held
    async with store.run_lock(session.id):
        pass  # released at exit


async def test_run_lock_waits_for_the_holder(store: SessionStore) -> None:
    session = await store.create()
    order: list[str] = []

    async def first() -> None:
        async with store.run_lock(session.id):
            order.append("first in")
            await anyio.sleep(0.2)
            order.append("first out")

    async with anyio.create_task_group() as tg:
        tg.start_soon(first)
        await anyio.sleep(0.05)
        async with store.run_lock(session.id, timeout=5):
            order.append("second in")
    assert order == ["first in", "first out", "second in"]


async def test_run_lock_is_released_when_the_run_fails(store: SessionStore) -> None:
    session = await store.create()
    with pytest.raises(RuntimeError, match="boom"):
        async with store.run_lock(session.id):
            raise RuntimeError("boom")
    async with store.run_lock(session.id):
        pass
