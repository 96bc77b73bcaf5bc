"""What a session store keeps: sessions, the log and its views, prepared parts, state, text.

The first half of `SessionStoreContract` (`hookline.testing.store_contract`), with the
events the cases write. Every test takes the `store` fixture of the contract class, and
makes its own ids and app names, so the cases may share one database.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest

from hookline.errors import ConfigError, InvalidEvent, SessionExists, SessionNotFound
from hookline.events import Event
from hookline.messages import TextPart, ToolCallPart, ToolResultPart
from hookline.sessions import SessionStore

__all__ = ["StoredCases", "assistant_says", "fresh", "status", "texts", "user_edit", "user_says"]

NUL = "before\x00after"
LONE = "a\ud800b\udc00c"
REPLACED = "a\ufffdb\ufffdc"


def fresh(prefix: str) -> str:
    """A name of this test only (a session id, an app), so tests never see each other's sessions."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def user_says(text: str, **metadata: Any) -> Event:
    """A user's message."""
    return Event(author="user", kind="message", role="user", parts=[TextPart(text=text)], metadata=metadata)


def assistant_says(text: str) -> Event:
    """The assistant's message."""
    return Event(author="assistant", kind="message", role="assistant", parts=[TextPart(text=text)])


def status(text: str) -> Event:
    """A status line of the agent."""
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
    """The text of each event."""
    return [e.text for e in events]


def _nul_event() -> Event:
    call = ToolCallPart(id="c1", name="write", arguments={"text": NUL, NUL: [NUL]})
    return Event(author="user", role="user", parts=[TextPart(text=NUL), call], metadata={"note": NUL, NUL: 1})


_UNKNOWN_SESSION_CALLS: list[Callable[[SessionStore], Any]] = [
    lambda s: s.get("nope"),
    lambda s: s.delete("nope"),
    lambda s: s.events("nope"),
    lambda s: s.append_event("nope", user_says("hi")),
    lambda s: s.append_events("nope", []),
    lambda s: s.prepare_event("nope", user_says("hi")),
    lambda s: s.update_state("nope", {}),
]

_INVALID_EVENTS: list[tuple[Event | dict[str, Any], str]] = [
    (Event(author="assistant", kind="delta", parts=[TextPart(text="he")]), "kind"),
    (Event(author="user", kind="message", parts=[TextPart(text="hi")]), "role"),
    (Event(author="", role="user", parts=[TextPart(text="hi")]), "author"),
    (Event(author="user", role="user", partial=True), "partial"),
    (Event(author="user", role="user", metadata={"when": object()}), "metadata"),
    ({"author": "user", "role": "user", "parts": [{"type": "video", "url": "x"}]}, "parts.0"),
    ({"author": "user", "role": "user", "parts": [{"type": "image"}]}, "parts.0.image"),
    ({"author": "user", "role": "robot"}, "role"),
]


class StoredCases:
    """The cases about what a store keeps and gives back (DESIGN §3)."""

    # --- create, get, list, delete ---------------------------------------------------------

    async def test_create_then_get(self, store: SessionStore) -> None:
        """`create` stores the app, user and state; `get` returns them with a UTC `created_at`."""
        app = fresh("app")
        before = datetime.now(UTC) - timedelta(seconds=1)
        created = await store.create(app=app, user="u1", session_id="s-1-" + app, state={"topic": "tax", "n": [1, 2]})
        fetched = await store.get(created.id)
        assert (fetched.id, fetched.app, fetched.user) == ("s-1-" + app, app, "u1")
        assert fetched.state == {"topic": "tax", "n": [1, 2]}
        assert fetched.events == []
        assert fetched.created_at is not None
        assert fetched.created_at == created.created_at
        assert before < fetched.created_at < datetime.now(UTC) + timedelta(seconds=1)

    async def test_create_without_id_makes_a_fresh_one(self, store: SessionStore) -> None:
        """Without `session_id`, `create` makes a new uuid4 hex id; app and user default to "default"."""
        first, second = await store.create(), await store.create()
        assert first.id != second.id
        assert len(first.id) == 32
        assert int(first.id, 16) >= 0
        assert (first.app, first.user, first.state) == ("default", "default", {})

    async def test_create_with_a_taken_id_fails(self, store: SessionStore) -> None:
        """Creating an id that exists raises `SessionExists` naming it."""
        app = fresh("app")
        await store.create(app=app, session_id=app)
        with pytest.raises(SessionExists, match=app):
            await store.create(app=app, session_id=app)

    async def test_state_must_be_json(self, store: SessionStore) -> None:
        """State that is not JSON is refused with a `ConfigError`."""
        with pytest.raises(ConfigError, match="JSON"):
            await store.create(state={"when": object()})

    async def test_list_is_scoped_by_app_and_user_newest_first(self, store: SessionStore) -> None:
        """`list` filters by app and user (None: any), newest first, without events."""
        app = fresh("app")
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

    async def test_list_with_a_limit_answers_the_newest_sessions(self, store: SessionStore) -> None:
        """`list(limit=n)` answers the newest `n` sessions of its app and user, newest first; a bad limit is refused."""
        app = fresh("app")
        created = []
        for _ in range(4):
            created.append((await store.create(app=app, user="u1")).id)
            await anyio.sleep(0.002)  # distinct creation times, so "newest first" is well defined
        theirs = (await store.create(app=app, user="u2")).id
        newest = created[::-1]

        assert [s.id for s in await store.list(app=app, user="u1", limit=2)] == newest[:2]
        assert [s.id for s in await store.list(app=app, user="u1", limit=1)] == newest[:1]
        assert [s.id for s in await store.list(app=app, user="u1", limit=10)] == newest, "fewer than the limit: all"
        assert [s.id for s in await store.list(app=app, user="u1", limit=None)] == newest
        assert [s.id for s in await store.list(app=app, limit=3)] == [theirs, *newest[:2]], "any user"
        assert len(await store.list(limit=1)) == 1, "any app, any user"
        for bad in (0, -1, True, 2.5, "2"):
            with pytest.raises(ValueError, match=rf"limit .*positive integer, not {re.escape(repr(bad))}"):
                await store.list(app=app, limit=bad)  # type: ignore[arg-type]

    async def test_another_users_session_is_not_found(self, store: SessionStore) -> None:
        """With `user`, another user's session is `SessionNotFound`."""
        session = await store.create(user="u1")
        with pytest.raises(SessionNotFound, match=session.id):
            await store.get(session.id, user="u2")
        with pytest.raises(SessionNotFound):
            await store.delete(session.id, user="u2")
        assert (await store.get(session.id, user="u1")).id == session.id

    async def test_delete_removes_the_session_and_its_log(self, store: SessionStore) -> None:
        """`delete` removes the session, its log and its prepared parts."""
        app = fresh("app")
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
        _UNKNOWN_SESSION_CALLS,
        ids=["get", "delete", "events", "append_event", "append_events", "prepare_event", "update_state"],
    )
    async def test_unknown_session_is_not_found(self, store: SessionStore, call: Callable[[SessionStore], Any]) -> None:
        """Every method raises `SessionNotFound` (a `KeyError`) for an unknown id."""
        with pytest.raises(SessionNotFound, match="'nope' not found") as caught:
            await call(store)
        assert caught.value.session_id == "nope"
        assert isinstance(caught.value, KeyError)

    # --- append and views ------------------------------------------------------------------

    async def test_append_assigns_seq_and_fills_the_event(self, store: SessionStore) -> None:
        """Appends get `seq` 1, 2, 3... and an id, the session id and a UTC `created_at`."""
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

    async def test_append_keeps_everything_the_writer_gave(self, store: SessionStore) -> None:
        """An event reads back as it was written, parts and metadata included."""
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
        filled = {"id", "session_id", "seq", "created_at"}
        assert loaded.model_dump(exclude=filled) == event.model_dump(exclude=filled)

    async def test_an_empty_batch_stores_nothing(self, store: SessionStore) -> None:
        """An empty batch stores nothing and uses no `seq`."""
        session = await store.create()
        assert await store.append_events(session.id, []) == []
        assert (await store.append_event(session.id, user_says("first"))).seq == 1

    async def test_views_and_after_seq(self, store: SessionStore) -> None:
        """`prompt` holds messages only, `ui` and `all` status too; `after_seq` skips the earlier ones."""
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

    # --- prepare_event ---------------------------------------------------------------------

    async def test_prepared_parts_accumulate_in_one_partial_event(self, store: SessionStore) -> None:
        """Prepared parts accumulate in one partial event, shown last by `get` and `ui`, never in `prompt`."""
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

    async def test_a_prepared_result_must_answer_a_prepared_call_without_one(self, store: SessionStore) -> None:
        """A prepared tool result answers a call prepared before it (by its author) that has none yet.

        Merged into the author's next event, a result for a call that never existed, or a
        second one, would be a real message of the log; it is refused, and nothing is written.
        """
        session = await store.create()
        await store.append_event(session.id, Event(author="assistant", role="assistant",
                                                   parts=[ToolCallPart(id="a1", name="add", arguments={})]))
        call = ToolCallPart(id="u1", name="write_file", arguments={"path": "a.txt"})
        result = ToolResultPart(call_id="u1", content="written")
        refused = [
            [result],  # no call at all
            [ToolResultPart(call_id="a1", content="forged")],  # the assistant's call, in the log
            [result, call],  # its call comes after it
            [call, result, ToolResultPart(call_id="u1", content="again")],  # answered twice
        ]
        for parts in refused:
            with pytest.raises(InvalidEvent, match=r"parts\.\d+\.call_id: a prepared tool result must answer"):
                await store.prepare_event(session.id, Event(author="user", role="user", parts=parts))
        assert [e.partial for e in await store.events(session.id, view="ui")] == [False]
        await store.prepare_event(session.id, Event(author="user", role="user", parts=[call]))
        later = await store.prepare_event(session.id, Event(author="user", role="user", parts=[result]))
        assert later.parts == [call, result], "answered in a later prepare of the same author"
        with pytest.raises(InvalidEvent, match="call_id"):
            await store.prepare_event(session.id, Event(author="user", role="user", parts=[result]))
        with pytest.raises(InvalidEvent, match="call_id"):  # another author's pending call is not its own
            await store.prepare_event(session.id, Event(author="editor", role="user", parts=[result]))

    async def test_partial_events_come_last_one_per_author(self, store: SessionStore) -> None:
        """There is one partial event per author, after the log, by author name."""
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

    async def test_the_authors_next_append_merges_prepared_parts_first(self, store: SessionStore) -> None:
        """The author's next append takes its prepared parts first; other authors' leave them pending."""
        session = await store.create()
        edit = user_edit("c1", "a.txt").model_copy(update={"metadata": {"a": 1, "b": 1}})
        await store.prepare_event(session.id, edit)
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

    async def test_a_batch_merges_into_the_authors_first_event_only(self, store: SessionStore) -> None:
        """In a batch, prepared parts merge into the author's first event only."""
        session = await store.create()
        await store.prepare_event(session.id, user_edit("c1", "a.txt"))
        first, second = await store.append_events(session.id, [user_says("one"), user_says("two")])
        assert len(first.parts) == 3
        assert second.parts == [TextPart(text="two")]

    # --- state, copies, validation ---------------------------------------------------------

    async def test_update_state_replaces_it(self, store: SessionStore) -> None:
        """`update_state` replaces the state, stored as JSON; non-JSON is refused and changes nothing."""
        session = await store.create(state={"old": True})
        await store.update_state(session.id, {"new": [1, {"deep": "x"}]})
        assert (await store.get(session.id)).state == {"new": [1, {"deep": "x"}]}
        await store.update_state(session.id, {"pair": (1, 2)})
        assert (await store.get(session.id)).state == {"pair": [1, 2]}  # stored as JSON, by every store
        with pytest.raises(ConfigError, match="JSON"):
            await store.update_state(session.id, {"bad": object()})
        assert (await store.get(session.id)).state == {"pair": [1, 2]}

    async def test_what_a_store_returns_is_a_copy(self, store: SessionStore) -> None:
        """Changing what the store returned changes nothing stored."""
        session = await store.create(state={"items": [1]})
        given = user_says("hi")
        event = await store.append_event(session.id, given)
        event.parts.append(TextPart(text="tampered"))
        given.parts.append(TextPart(text="added after the write"))  # what the writer gave, edited
        fetched = await store.get(session.id)
        fetched.state["items"].append(2)
        fetched.events[0].parts.clear()
        again = await store.get(session.id)
        assert again.state == {"items": [1]}
        assert texts(again.events) == ["hi"]

    @pytest.mark.parametrize(
        ("event", "field"),
        _INVALID_EVENTS,
        ids=["delta", "no-role", "no-author", "partial", "metadata", "unknown-part", "sourceless-image", "bad-role"],
    )
    async def test_an_invalid_event_names_the_field(self, store: SessionStore, event: Any, field: str) -> None:
        """An event the log cannot hold raises `InvalidEvent` (a `ValueError`) naming its field."""
        session = await store.create()
        for write in (store.append_event, store.prepare_event):
            with pytest.raises(InvalidEvent, match=f"invalid event: {field}") as caught:
                await write(session.id, event)
            assert caught.value.field.startswith(field)
            assert isinstance(caught.value, ValueError)
        assert await store.events(session.id) == []

    async def test_an_invalid_event_stops_the_whole_batch(self, store: SessionStore) -> None:
        """One invalid event stores nothing of its batch."""
        session = await store.create()
        bad = Event(author="user", kind="message", parts=[])
        with pytest.raises(InvalidEvent, match="role"):
            await store.append_events(session.id, [user_says("ok"), bad])
        assert await store.events(session.id) == []
        assert (await store.append_event(session.id, user_says("ok"))).seq == 1

    # --- text of any shape: NUL kept, lone surrogates replaced ------------------------------

    async def test_nul_is_stored_faithfully(self, store: SessionStore) -> None:
        """NUL (U+0000) in parts, metadata and state reads back as written."""
        session = await store.create(state={"k": NUL})
        stored = await store.append_event(session.id, _nul_event())
        assert stored.parts == _nul_event().parts
        for events in (await store.events(session.id), await store.events(session.id, view="prompt")):
            assert events[0].parts == _nul_event().parts
            assert events[0].metadata == {"note": NUL, NUL: 1}
        await store.update_state(session.id, {NUL: [NUL]})
        assert (await store.get(session.id)).state == {NUL: [NUL]}

    async def test_nul_in_prepared_parts_and_tool_results(self, store: SessionStore) -> None:
        """NUL survives prepared parts and their merge."""
        session = await store.create()
        partial = await store.prepare_event(session.id, _nul_event())
        assert (await store.get(session.id)).events == [partial]
        result = Event(author="tool", role="tool", parts=[ToolResultPart(call_id="c1", content=NUL)])
        await store.append_event(session.id, result)
        merged = await store.append_event(session.id, Event(author="user", role="user", parts=[TextPart(text=NUL)]))
        assert merged.parts == [*_nul_event().parts, TextPart(text=NUL)]
        assert [e.parts for e in await store.events(session.id)] == [result.parts, merged.parts]

    async def test_lone_surrogates_become_the_replacement_character(self, store: SessionStore) -> None:
        """Each lone surrogate is stored as U+FFFD, and the store returns what it stored."""
        session = await store.create(state={LONE: LONE})
        assert session.state == {REPLACED: REPLACED}, "create answers the state it stored"
        pair = "\ud83d\ude00"  # a surrogate pair in a Python str: the character it encodes
        event = Event(author="user", role="user", parts=[TextPart(text=LONE + pair)], metadata={LONE: [LONE]})
        stored = await store.append_event(session.id, event)
        assert stored.parts == [TextPart(text=REPLACED + "\U0001f600")]
        assert stored.metadata == {REPLACED: [REPLACED]}
        assert event.parts == [TextPart(text=LONE + pair)]  # the caller's event is left as it was
        (read,) = await store.events(session.id)
        assert (read.parts, read.metadata) == (stored.parts, stored.metadata)
        assert (await store.get(session.id)).state == {REPLACED: REPLACED}
        partial = await store.prepare_event(session.id, Event(author="u2", role="user", parts=[TextPart(text=LONE)]))
        assert partial.parts == [TextPart(text=REPLACED)]
        assert (await store.get(session.id)).events[-1].parts == [TextPart(text=REPLACED)]

    @pytest.mark.parametrize("field", ["author", "id"])
    @pytest.mark.parametrize("bad", ["a\x00b", "a\ud800b"])
    async def test_a_name_holding_nul_or_a_surrogate_is_refused_naming_the_field(
        self, store: SessionStore, field: str, bad: str
    ) -> None:
        """An author or event id holding NUL or a surrogate is refused, naming the field."""
        session = await store.create()
        event = Event(role="user", parts=[TextPart(text="hi")], **{"author": "user", field: bad})
        with pytest.raises(InvalidEvent, match=f"invalid event: {field}: must not hold NUL"):
            await store.append_event(session.id, event)
        with pytest.raises(InvalidEvent, match=field):
            await store.prepare_event(session.id, event)
        assert await store.events(session.id) == []
