"""A long session's tail is read, not its whole log: for the calls paused (AG-UI, `hookline chat`), the messages a
client sends again (AG-UI), the last prompt and the runs since it (AI SDK), the last run (a rollback), a run of another
process (`GET /v1/runs/{id}`).

Each test writes 3,000 status lines into session "long" first, then what it reads the tail of,
and counts the events the store's reads answered (a page is 1,000)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hookline._cli.chat import _Chat, _pending_interruptions
from hookline.events import Event, run_end
from hookline.messages import Message
from hookline.result import RunResult
from hookline.server.background import RUN_KEY, _events_of_run
from hookline.server.log_window import last_run_bounds
from hookline.server.protocols.ag_ui import _known, _paused_calls
from hookline.server.protocols.ai_sdk import _last_prompt, _since_last_prompt
from support.counting_store import CountingStore

from .agent import make_agent

pytestmark = pytest.mark.anyio

SESSION = "long"
PAGE = 1_000


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[CountingStore]:
    """A store holding session "long": 3,000 status lines, as a long history before what a test adds."""
    store = CountingStore(tmp_path / "long.db")
    await store.create(session_id=SESSION)
    await store.append_events(SESSION, [Event.status("assistant", "agent", f"line {i}") for i in range(3 * PAGE)])
    yield store
    await store.aclose()


async def paused_run(store: CountingStore) -> RunResult:
    """A run paused for approval at the log's end; the reads counted from then on."""
    result = await make_agent(store).prompt("danger zone").session(SESSION)
    store.read = 0
    return result


def run_of(run_id: str, prompt: str) -> list[Event]:
    """A run's events as a run with an id writes them: each names the run."""
    events = [Event.from_message(Message.user(prompt), "user"),
              Event.from_message(Message.assistant("ok"), "assistant"),
              Event.status("assistant", "agent", "run completed", run_end="completed")]
    for event in events:
        event.metadata[RUN_KEY] = run_id
    return events


async def test_agui_reads_the_last_runs_events_for_its_paused_calls(store: CountingStore) -> None:
    result = await paused_run(store)
    assert list(await _paused_calls(store, SESSION)) == [result.interruptions[0].call_id]
    assert store.read <= PAGE, "a page back to the model's last message, not the 3,000 lines before it"


async def test_chat_reads_a_page_back_for_the_calls_still_paused(store: CountingStore) -> None:
    result = await paused_run(store)
    pending = await _pending_interruptions(_Chat(make_agent(store), store, SESSION, None))
    assert [p.call_id for p in pending] == [result.interruptions[0].call_id]
    assert store.read <= PAGE, "a page back to the model's last message, not the 3,000 lines before it"


async def test_ai_sdk_reads_the_runs_since_the_last_prompt_for_the_answers_to_its_calls(store: CountingStore) -> None:
    result = await paused_run(store)
    log = await _since_last_prompt(store, SESSION)
    assert [e.text for e in log if e.role == "user"] == ["danger zone"]
    calls = {c.id for e in log if e.role == "assistant" for c in e.to_message().tool_calls}
    assert result.interruptions[0].call_id in calls
    assert store.read <= PAGE + 100, "a page back to the prompt, and the run since it"


async def test_ai_sdk_reads_back_a_page_for_the_last_prompt(store: CountingStore) -> None:
    said = [Event.from_message(Message.user(f"q{i}") if i % 2 == 0 else Message.assistant(f"a{i}"), "someone")
            for i in range(3 * PAGE)]
    await store.append_events(SESSION, [*said, Event.from_message(Message.user("the last one"), "user")])
    store.read = 0
    prompt = await _last_prompt(store, SESSION)
    assert prompt is not None
    assert prompt.text == "the last one"
    assert store.read <= PAGE, "the newest page, not the 3,001 messages"
    await store.create(session_id="empty")
    assert await _last_prompt(store, "empty") is None


async def test_a_rollback_finds_the_last_run_reading_back_from_the_end(store: CountingStore) -> None:
    agent = make_agent(store)
    await agent.prompt("hello").session(SESSION)
    await agent.prompt("add 2 and 3").session(SESSION)
    ends = [e for e in await store.events(SESSION) if run_end(e) is not None]
    store.read = 0
    bounds = await last_run_bounds(store, SESSION)
    assert bounds is not None
    assert (bounds[0], bounds[1].seq) == (ends[0].seq, ends[1].seq)
    assert store.read <= PAGE, "a page back to the end of the run before, not the log from its start"
    await store.create(session_id="fresh")
    assert await last_run_bounds(store, "fresh") is None


async def test_a_run_of_another_process_is_read_back_from_the_end_to_the_run_before_it(store: CountingStore) -> None:
    await store.append_events(SESSION, [*run_of("long~a", "first"), *run_of("long~b", "second")])
    store.read = 0
    assert [e.text for e in await _events_of_run(store, SESSION, "long~b")] == ["second", "ok", "run completed"]
    assert store.read <= PAGE, "a page back to the run before it, not the log from its start"
    assert [e.text for e in await _events_of_run(store, SESSION, "long~a")] == ["first", "ok", "run completed"]
    assert await _events_of_run(store, SESSION, "long~c") == []


async def test_agui_reads_back_to_the_newest_message_a_client_sends_again(store: CountingStore) -> None:
    said = [Event.from_message(Message.user(f"q{i}") if i % 2 == 0 else Message.assistant(f"a{i}"), "someone")
            for i in range(3 * PAGE)]
    stored = await store.append_events(SESSION, said)
    store.read = 0
    sent = {e.id for e in stored if e.id is not None} | {"new-message"}
    known = await _known(store, SESSION, sent)
    assert known
    assert known <= sent - {"new-message"}
    assert stored[-1].id in known, "the newest message the thread holds is known"
    assert store.read <= PAGE, "the newest page, not the 3,000 messages"
    assert await _known(store, SESSION, {"never-sent"}) == set()
