"""The session list (`GET /v1/inspect/sessions`) answers the newest sessions only; its search asks the store's `search`.

The store is a real SQLite file whose reads are counted (`CountingStore`): the list, or a
search, costs the store one query, then each session it lists its two small status reads and,
for a title not known yet, a third; whatever the number of sessions and the length of their logs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookline import Event, TextPart, ToolResultPart
from hookline.server.inspect_routes import FOUND_MOST
from hookline.server.routes import CUT_HEADER

from .test_long_sessions import CountingStore, served

pytestmark = pytest.mark.anyio

SESSIONS = 40
LONG = 3_000


def says(text: str, role: str = "user") -> Event:
    return Event(author=role, kind="message", role=role, parts=[TextPart(text=text)])  # type: ignore[arg-type]


def tool_says(content: str) -> Event:
    return Event(author="look", kind="message", role="tool", parts=[ToolResultPart(call_id="c1", content=content)])


@pytest.fixture
async def store(tmp_path: Path) -> CountingStore:
    """`SESSIONS` short sessions (s00 the oldest; s07's answer mentions the needle), then one of `LONG` events."""
    store = CountingStore(tmp_path / "search.db")
    store.reads = []
    for n in range(SESSIONS):
        session = await store.create(session_id=f"s{n:02}")
        answer = f"answer {n}" + (", and the Needle is here" if n == 7 else "")
        await store.append_events(session.id, [says(f"prompt {n}"), says(answer, "assistant")])
    await store.create(session_id="long")
    for start in range(0, LONG, 1_000):
        await store.append_events("long", [says(f"m{n}") for n in range(start, start + 1_000)])
    await store.append_event("long", tool_says("found: the needle, at last"))
    return store


async def test_a_search_reads_no_log_whole_nor_any_session_it_does_not_list(store: CountingStore) -> None:
    async with served(store) as http:
        found = (await http.get("/v1/inspect/sessions", params={"q": "NEEDLE"})).json()
        assert [(s["id"], s["title"], s["snippet"]) for s in found] == [
            ("long", "m0", "found: the needle, at last"), ("s07", "prompt 7", "answer 7, and the Needle is here")]
        assert ("events", None) not in store.reads, "no log read whole"
        assert len(store.reads) <= 3 * len(found), "its tail, its first event and its title for each session listed"
        assert all(limit is not None and limit <= 50 for _, limit in store.reads)

        store.reads.clear()
        listed = (await http.get("/v1/inspect/sessions")).json()
        assert [s["id"] for s in listed] == ["long", *(f"s{n:02}" for n in reversed(range(SESSIONS)))]
        assert ("events", None) not in store.reads, "the list without a search neither"


async def test_a_search_finds_ids_and_answers_the_newest_matches_at_most(store: CountingStore) -> None:
    for n in range(FOUND_MOST + 5):
        session = await store.create(session_id=f"many-{n:03}")
        await store.append_event(session.id, says(f"a common word, number {n}"))
    async with served(store) as http:
        found = (await http.get("/v1/inspect/sessions", params={"q": "common WORD"})).json()
        assert [s["id"] for s in found] == [f"many-{n:03}" for n in reversed(range(5, FOUND_MOST + 5))]
        by_id = (await http.get("/v1/inspect/sessions", params={"q": "S1"})).json()
        assert [(s["id"], s["snippet"]) for s in by_id] == [(f"s{n}", f"s{n}") for n in range(19, 9, -1)]
        percent = await http.get("/v1/inspect/sessions", params={"q": "%"})
        assert percent.json() == [], "no session mentions '%': it is no wildcard"


async def test_the_list_answers_the_newest_sessions_only_and_says_it_left_older_ones_out(store: CountingStore) -> None:
    async with served(store) as http:
        whole = await http.get("/v1/inspect/sessions")
        assert len(whole.json()) == SESSIONS + 1
        assert CUT_HEADER not in whole.headers, "nothing left out"
    more = [(await store.create(session_id=f"more-{n:03}")).id for n in range(FOUND_MOST + 1)]
    for session_id in more[-3:]:
        await store.append_event(session_id, says(f"a common word in {session_id}"))
    async with served(store) as http:
        cut = await http.get("/v1/inspect/sessions")
        assert [s["id"] for s in cut.json()] == more[:0:-1]
        assert cut.headers[CUT_HEADER] == str(FOUND_MOST)
        assert len(store.reads) <= 3 * FOUND_MOST, "a bounded number of reads per poll"
        found = await http.get("/v1/inspect/sessions", params={"q": "common word"})
        assert [s["id"] for s in found.json()] == more[:-4:-1]
        assert CUT_HEADER not in found.headers
        many = await http.get("/v1/inspect/sessions", params={"q": "more-"})
        assert (len(many.json()), many.headers[CUT_HEADER]) == (FOUND_MOST, str(FOUND_MOST))
