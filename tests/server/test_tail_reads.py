"""A long session's tail is read, not its whole log: for the calls paused (AG-UI, `hookline chat`), the last prompt
and the runs since it (AI SDK), the last run (a rollback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookline._cli.chat import _Chat, _pending_interruptions
from hookline.events import Event, run_end
from hookline.messages import Message
from hookline.server.log_window import last_run_bounds
from hookline.server.protocols.ag_ui import _paused_calls
from hookline.server.protocols.ai_sdk import _last_prompt, _since_last_prompt
from support.counting_store import CountingStore

from .agent import make_agent

pytestmark = pytest.mark.anyio

LONG = 3_000


async def test_agui_reads_the_last_runs_events_for_its_paused_calls(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "long.db")
    try:
        session = await store.create(session_id="long")
        await store.append_events(session.id, [Event.status("assistant", "agent", f"line {i}") for i in range(LONG)])
        result = await make_agent(store).prompt("danger zone").session(session.id)
        store.read = 0
        paused = await _paused_calls(store, session.id)
    finally:
        await store.aclose()
    assert list(paused) == [result.interruptions[0].call_id]
    assert store.read <= 1_000, "a page back to the model's last message, not the 3,000 lines before it"


async def test_ai_sdk_reads_back_a_page_for_the_last_prompt(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "long.db")
    try:
        session = await store.create(session_id="long")
        said = [Event.from_message(Message.user(f"q{i}") if i % 2 == 0 else Message.assistant(f"a{i}"), "someone")
                for i in range(LONG)]
        await store.append_events(session.id, [*said, Event.from_message(Message.user("the last one"), "user")])
        store.read = 0
        prompt = await _last_prompt(store, session.id)
        empty = await store.create(session_id="empty")
        nothing = await _last_prompt(store, empty.id)
    finally:
        await store.aclose()
    assert prompt is not None
    assert prompt.text == "the last one"
    assert nothing is None
    assert store.read <= 1_000, "the newest page, not the 3,001 messages"


async def test_ai_sdk_reads_the_runs_since_the_last_prompt_for_the_answers_to_its_calls(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "long.db")
    try:
        session = await store.create(session_id="long")
        await store.append_events(session.id, [Event.status("assistant", "agent", f"line {i}") for i in range(LONG)])
        result = await make_agent(store).prompt("danger zone").session(session.id)
        store.read = 0
        log = await _since_last_prompt(store, session.id)
    finally:
        await store.aclose()
    assert [e.text for e in log if e.role == "user"] == ["danger zone"]
    calls = {c.id for e in log if e.role == "assistant" for c in e.to_message().tool_calls}
    assert result.interruptions[0].call_id in calls
    assert store.read <= 1_100, "a page back to the prompt, and the run since it"


async def test_a_rollback_finds_the_last_run_reading_back_from_the_end(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "long.db")
    try:
        session = await store.create(session_id="long")
        await store.append_events(session.id, [Event.status("assistant", "agent", f"line {i}") for i in range(LONG)])
        agent = make_agent(store)
        await agent.prompt("hello").session(session.id)
        await agent.prompt("add 2 and 3").session(session.id)
        events = await store.events(session.id)
        store.read = 0
        bounds = await last_run_bounds(store, session.id)
        fresh = await store.create(session_id="fresh")
        none = await last_run_bounds(store, fresh.id)
    finally:
        await store.aclose()
    ends = [e for e in events if run_end(e) is not None]
    assert bounds is not None
    assert (bounds[0], bounds[1].seq) == (ends[0].seq, ends[1].seq)
    assert none is None
    assert store.read <= 1_000, "a page back to the end of the run before, not the log from its start"


async def test_chat_reads_a_page_back_for_the_calls_still_paused(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "long.db")
    try:
        session = await store.create(session_id="long")
        await store.append_events(session.id, [Event.status("assistant", "agent", f"line {i}") for i in range(LONG)])
        agent = make_agent(store)
        result = await agent.prompt("danger zone").session(session.id)
        store.read = 0
        pending = await _pending_interruptions(_Chat(agent, store, session.id, None))
    finally:
        await store.aclose()
    assert [p.call_id for p in pending] == [result.interruptions[0].call_id]
    assert store.read <= 1_000, "a page back to the model's last message, not the 3,000 lines before it"
