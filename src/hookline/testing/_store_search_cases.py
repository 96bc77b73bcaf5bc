"""The sessions that mention a text (`SessionStore.search`): what the inspector's search of the session list reads.

Part of `SessionStoreContract` (`hookline.testing.store_contract`). Each case writes sessions of
an app made for it, and searches for words only its own sessions hold, so the cases may share
one database.
"""

from __future__ import annotations

import anyio
import pytest

from hookline.events import Event
from hookline.messages import TextPart, ToolCallPart, ToolResultPart
from hookline.sessions import SessionMatch, SessionStore
from hookline.testing._store_cases import assistant_says, fresh, status, user_says

__all__ = ["SearchCases"]

_LONG = 1_200  # events of the long session: more than two pages of the default `search`


def _call(arguments: dict[str, str]) -> Event:
    return Event(author="assistant", role="assistant", parts=[ToolCallPart(id="c1", name="look", arguments=arguments)])


def _result(content: str) -> Event:
    return Event(author="look", role="tool", parts=[ToolResultPart(call_id="c1", content=content, name="look")])


async def _sessions(store: SessionStore, app: str, *logs: list[Event], user: str = "default") -> list[str]:
    """One session of `app` per log, created in order a moment apart (so "newest first" is well defined)."""
    ids = []
    for log in logs:
        session = await store.create(app=app, user=user)
        if log:
            await store.append_events(session.id, log)
        ids.append(session.id)
        await anyio.sleep(0.002)
    return ids


def _found(matches: list[SessionMatch]) -> list[tuple[str, str | None]]:
    return [(m.session.id, m.text) for m in matches]


class SearchCases:
    """The cases of `search`: what it reads, how it matches, whose sessions, in what order, how many."""

    async def test_search_reads_messages_and_tool_results_and_answers_the_first_mention(
        self, store: SessionStore
    ) -> None:
        """Messages' text and tool results' content are searched (the first mention is the text answered).

        Status lines, tool calls' arguments and prepared parts are not.
        """
        app = fresh("app")
        told, answered, _in_status, _in_arguments, prepared = await _sessions(
            store, app,
            [user_says("hello"), _call({"q": "lost key"}), _result("The KEY is under the mat"),
             assistant_says("Found the key: under the mat.")],
            [user_says("Where is my key?"), assistant_says("Which key?")],
            [user_says("hello"), status("looking for the key")],
            [user_says("hello"), _call({"q": "key"})],
            [user_says("hello")],
        )
        await store.prepare_event(prepared, Event(author="user", role="user", parts=[TextPart(text="the key")]))
        assert _found(await store.search("key", app=app)) == [
            (answered, "Where is my key?"), (told, "The KEY is under the mat")]

    async def test_search_ignores_case(self, store: SessionStore) -> None:
        """Letters match whatever their case, in the needle and in the text; the text comes back as stored."""
        app = fresh("app")
        (session_id,) = await _sessions(store, app, [assistant_says("Hello WORLD, hello")])
        for needle in ("hello world", "HELLO WORLD", "hElLo wOrLd"):
            assert _found(await store.search(needle, app=app)) == [(session_id, "Hello WORLD, hello")], needle

    async def test_search_takes_every_character_of_the_needle_literally(self, store: SessionStore) -> None:
        """`%`, `_`, backslashes, quotes and line breaks in the needle match themselves only."""
        app = fresh("app")
        sale, _plain, percent, path = await _sessions(
            store, app, [user_says("get 50%_off today")], [user_says("get 500 off, 50 Xoff")],
            [user_says("50% of it")], [user_says('open C:\\temp\\new "quoted"\nsecond line')])
        assert _found(await store.search("50%_off", app=app)) == [(sale, "get 50%_off today")]
        assert [m.session.id for m in await store.search("%", app=app)] == [percent, sale]
        assert [m.session.id for m in await store.search("_", app=app)] == [sale]
        for needle in ("\\temp", 'new "quoted"', "quoted\"\nsecond", "C:\\TEMP\\NEW"):
            assert [m.session.id for m in await store.search(needle, app=app)] == [path], needle

    async def test_search_is_scoped_by_app_and_user(self, store: SessionStore) -> None:
        """As `list` is: the sessions of `app` and `user`, None meaning any."""
        app, needle = fresh("app"), fresh("needle")
        (mine,) = await _sessions(store, app, [user_says(f"about {needle}")], user="u1")
        (theirs,) = await _sessions(store, app, [user_says(f"about {needle}")], user="u2")
        (elsewhere,) = await _sessions(store, app + "-other", [user_says(f"about {needle}")], user="u1")
        assert [m.session.id for m in await store.search(needle, app=app, user="u1")] == [mine]
        assert [m.session.id for m in await store.search(needle, app=app)] == [theirs, mine]
        assert [m.session.id for m in await store.search(needle, user="u1")] == [elsewhere, mine]
        assert [m.session.id for m in await store.search(needle)] == [elsewhere, theirs, mine]
        (found,) = await store.search(needle, app=app, user="u2")
        assert (found.session.app, found.session.user, found.session.events) == (app, "u2", [])

    async def test_search_answers_the_newest_sessions_first_at_most_limit(self, store: SessionStore) -> None:
        """Newest first, as `list`; `limit` keeps the newest that mention it."""
        app = fresh("app")
        ids = await _sessions(store, app, *([user_says(f"note {n}")] for n in range(5)), [user_says("other")])
        mentions = ids[:5]
        assert [m.session.id for m in await store.search("note", app=app)] == mentions[::-1]
        assert _found(await store.search("note", app=app, limit=2)) == [(ids[4], "note 4"), (ids[3], "note 3")]

    async def test_search_finds_ids_and_nothing_where_nothing_mentions_it(self, store: SessionStore) -> None:
        """A session whose id holds the needle is found, with no text when no message mentions it."""
        app, token = fresh("app"), fresh("Invoice")
        session = await store.create(app=app, session_id=f"{token}-march")
        await store.append_event(session.id, user_says("pay it"))
        assert _found(await store.search(f"{token}-MARCH".upper(), app=app)) == [(session.id, None)]
        assert await store.search(f"nothing says {token}", app=app) == []
        assert await store.search("pay it", app=app + "-none") == []

    async def test_a_mention_deep_in_a_long_log_is_found_as_stored(self, store: SessionStore) -> None:
        """The first mention, past many pages of log, and given back as stored (NUL and all)."""
        app = fresh("app")
        (session_id,) = await _sessions(store, app, [])
        for start in range(0, _LONG, 400):
            await store.append_events(session_id, [user_says(f"m{n}") for n in range(start, start + 400)])
        await store.append_events(session_id, [assistant_says("the answer\x00is FORTY-TWO"), user_says("forty-two!")])
        assert _found(await store.search("forty-two", app=app)) == [(session_id, "the answer\x00is FORTY-TWO")]
        assert [m.session.id for m in await store.search("ANSWER\x00IS", app=app)] == [session_id]

    async def test_a_search_needs_text_and_a_positive_limit(self, store: SessionStore) -> None:
        """`ValueError` for an empty needle or a limit that is not a positive integer."""
        with pytest.raises(ValueError, match="text to find"):
            await store.search("")
        for limit in (0, -1, True):
            with pytest.raises(ValueError, match="positive integer"):
                await store.search("x", limit=limit)
