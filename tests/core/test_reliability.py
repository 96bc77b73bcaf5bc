"""The loop keeps its promises when things go wrong (issue 10): a run that died while the
model answered is asked again, status options mean what they say, a failed append or a
broken hook leaves a valid log and names the real cause, tool results of any shape reach
the model, runs can be cancelled, and resumption answers truthfully."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import anyio
import pytest

from hookline import (
    Agent,
    ConfigError,
    Event,
    HookError,
    Message,
    State,
    StatusOptions,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    hook,
    tool,
)
from hookline._run.resume import DIED_REASON
from hookline.errors import StoreError
from hookline.events import select_view
from hookline.sessions import InMemorySessionStore, SessionStore

from .invariant import conversation_error
from .scripted import Script, add, answer, call, calls

pytestmark = pytest.mark.anyio


async def prompt_view(store: SessionStore, session_id: str) -> list[Message]:
    return [e.to_message() for e in await store.events(session_id, view="prompt")]


async def statuses(store: SessionStore, session_id: str) -> list[str]:
    return [e.text for e in await store.events(session_id, view="ui") if e.kind == "status"]


@hook
def pause(state: State) -> None:
    """Pause every call for approval."""
    for pending in state.tool_calls:
        state.interrupt(pending.id, "approve first")


# -- death while the model answered ------------------------------------------------------------


async def test_resume_asks_the_model_again_when_its_answer_was_never_recorded() -> None:
    store = InMemorySessionStore()
    await store.create(session_id="s")
    # What a process killed while the model answered leaves behind: the prompt, "calling model".
    await store.append_events("s", [Event.from_message(Message.user("2+3?"), "user"),
                                    Event.status("assistant", "agent", "turn 1: calling model")])
    script = Script(calls(call("c1", "add", a=2, b=3)), answer("5"))
    agent = Agent(model=script.model, tools=[add], session_store=store)

    result = await agent.resume("s")

    assert result.stop_reason == "completed"
    assert result.output == "5"
    assert script.count == 2
    assert conversation_error(await prompt_view(store, "s")) is None


async def test_resume_after_the_results_were_recorded_asks_the_model_for_its_answer() -> None:
    store = InMemorySessionStore()
    await store.create(session_id="s")
    await store.append_events("s", [
        Event.from_message(Message.user("2+3?"), "user"),
        Event.from_message(Message(role="assistant", parts=[call("c1", "add", a=2, b=3)]), "assistant"),
        Event.from_message(Message(role="tool", parts=[ToolResultPart(call_id="c1", content="5", name="add")]), "add"),
    ])
    script = Script(answer("5"))
    result = await Agent(model=script.model, tools=[add], session_store=store).resume("s")
    assert (result.stop_reason, result.output, script.count) == ("completed", "5", 1)


# -- status options ---------------------------------------------------------------------------


async def test_tool_status_off_writes_no_tool_status_but_keeps_the_start_on_record() -> None:
    store = InMemorySessionStore()
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("3"))
    agent = Agent(model=script.model, tools=[add], session_store=store, status=StatusOptions(tool=False))

    await agent.prompt("1+2?").session("s")

    ui = await store.events("s", view="ui")
    assert [e for e in ui if e.kind == "status" and e.source == "tool"] == []
    assert all(e.kind != "marker" for e in ui)
    markers = [e for e in await store.events("s", view="all") if e.kind == "marker"]
    assert [(m.metadata["call_id"], m.metadata["started"]) for m in markers] == [("c1", True)]


async def test_a_call_that_died_with_tool_status_off_comes_back_as_an_interruption() -> None:
    store = InMemorySessionStore()
    await store.create(session_id="s")
    await store.append_events("s", [
        Event.from_message(Message.user("1+2?"), "user"),
        Event.from_message(Message(role="assistant", parts=[call("c1", "add", a=1, b=2)]), "assistant"),
        Event.marker("add", call_id="c1", started=True),
    ])
    agent = Agent(model=Script().model, tools=[add], session_store=store, status=StatusOptions(tool=False))
    result = await agent.resume("s")
    assert result.stop_reason == "interrupted"
    assert [(i.call_id, i.reason) for i in result.interruptions] == [("c1", DIED_REASON)]


async def test_the_stream_never_yields_markers() -> None:
    store = InMemorySessionStore()
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("3"))
    agent = Agent(model=script.model, tools=[add], session_store=store, status=StatusOptions(tool=False))
    kinds = {e.kind async for e in agent.prompt("1+2?").session("s").stream()}
    assert "marker" not in kinds


# -- failures leave a valid log and name the real cause ----------------------------------------


class FailingStore(InMemorySessionStore):
    """An in-memory store whose n-th append fails once, as a full disk or a lost connection would."""

    def __init__(self, fail_on: int) -> None:
        super().__init__()
        self.appends = 0
        self.fail_on = fail_on

    async def append_events(self, session_id: str, events: Sequence[Event]) -> list[Event]:
        self.appends += 1
        if self.appends == self.fail_on:
            raise StoreError("the disk is full")
        return await super().append_events(session_id, events)


async def test_a_failed_append_stops_the_run_and_leaves_no_orphan_result() -> None:
    store = FailingStore(fail_on=2)  # 1: the prompt with "calling model", 2: the calls before tools run
    ran: list[int] = []

    @tool
    def record(n: int) -> int:
        """Record n."""
        ran.append(n)
        return n

    script = Script(calls(call("c1", "record", n=1)), answer("done"))
    agent = Agent(model=script.model, tools=[record], session_store=store)

    with pytest.raises(StoreError, match="disk is full"):
        await agent.prompt("go").session("s")

    assert ran == [], "no tool runs while its start is not on record"
    assert conversation_error(await prompt_view(store, "s")) is None
    assert (await statuses(store, "s"))[-1] == "run failed"


async def test_a_hook_that_puts_a_non_message_in_the_conversation_gets_a_hook_error() -> None:
    @hook
    def garble(state: State) -> None:
        state.messages.append("not a message")  # type: ignore[arg-type]

    store = InMemorySessionStore()
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("3"))
    agent = Agent(model=script.model, tools=[add], session_store=store, hooks={"after_tool": [garble]})

    with pytest.raises(HookError, match="garble") as raised:
        await agent.prompt("1+2?").session("s")

    assert "not a Message" in str(raised.value)
    assert conversation_error(await prompt_view(store, "s")) is None


async def test_an_in_place_edit_that_breaks_the_conversation_names_the_hook() -> None:
    @hook
    def sneak_a_call(state: State) -> None:
        state.messages[-1].parts.append(ToolCallPart(id="ghost", name="add", arguments={}))

    script = Script(answer("hi"))
    agent = Agent(model=script.model, tools=[add], hooks={"before_llm": [sneak_a_call]})

    with pytest.raises(HookError, match="sneak_a_call") as raised:
        await agent.prompt("hello")

    assert raised.value.point == "before_llm"
    assert script.count == 0, "the model never gets a broken conversation"


async def test_state_that_cannot_be_saved_fails_the_run_before_it_is_logged_as_completed() -> None:
    @hook
    def cyclic(state: State) -> None:
        loop: dict[str, Any] = {}
        loop["self"] = loop
        state.data["loop"] = loop

    store = InMemorySessionStore()
    agent = Agent(model=Script(answer("hi")).model, session_store=store, hooks={"after_llm": [cyclic]})

    with pytest.raises(ConfigError, match="session state"):
        await agent.prompt("hello").session("s")

    assert (await statuses(store, "s"))[-1] == "run failed"


# -- tool results of any shape -----------------------------------------------------------------


class Unprintable:
    def __str__(self) -> str:
        raise ValueError("no")

    __repr__ = __str__


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("a\x00b", "a\x00b", id="nul"),
        pytest.param("x\ud800y", "x\\ud800y", id="lone-surrogate"),
        pytest.param(Unprintable(), "<a Unprintable that cannot be shown as text: ValueError: no>", id="unprintable"),
    ],
)
async def test_any_tool_result_reaches_the_model_and_the_log(value: Any, expected: str) -> None:
    @tool
    def odd() -> Any:
        """Return something odd."""
        return value

    store = InMemorySessionStore()
    script = Script(calls(call("c1", "odd")), answer("ok"))
    result = await Agent(model=script.model, tools=[odd], session_store=store).prompt("go").session("s")

    assert result.stop_reason == "completed"
    (part,) = script.results(2)
    assert part.content == expected
    stored = [p for m in await prompt_view(store, "s") for p in m.tool_results]
    assert [p.content for p in stored] == [expected]


async def test_a_cyclic_tool_result_is_sent_as_text() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)

    @tool
    def loop() -> Any:
        """Return a list that holds itself."""
        return cycle

    script = Script(calls(call("c1", "loop")), answer("ok"))
    result = await Agent(model=script.model, tools=[loop]).prompt("go")
    assert result.stop_reason == "completed"
    assert script.results(2)[0].content == "[[...]]"


# -- cancellation ------------------------------------------------------------------------------


def slow_tool(started: asyncio.Event | threading.Event) -> Any:
    @tool
    async def slow(seconds: float) -> str:
        """Work for `seconds`: far longer than a test lets it, so only a cancel ends it."""
        started.set()
        await asyncio.sleep(seconds)  # the tool's work
        return "slept"

    return slow


async def test_cancel_stops_a_running_tool_and_returns_a_cancelled_result() -> None:
    started = asyncio.Event()
    store = InMemorySessionStore()
    script = Script(calls(call("c1", "slow", seconds=60)), answer("never"))
    request = Agent(model=script.model, tools=[slow_tool(started)], session_store=store).prompt("go").session("s")

    task = asyncio.ensure_future(request)
    await started.wait()
    assert request.cancel() is True
    with anyio.fail_after(2):
        result = await task

    assert result.stop_reason == "cancelled"
    log = await store.events("s", view="all")
    assert conversation_error([e.to_message() for e in select_view(log, "prompt")]) is None
    (closing,) = [p for e in log for p in e.parts if getattr(p, "call_id", None) == "c1"]
    assert "cancelled while this call ran" in closing.content
    assert log[-1].text == "run cancelled"
    assert request.cancel() is False, "nothing runs any more"


async def test_cancelling_the_task_records_the_cancellation_and_propagates() -> None:
    started = asyncio.Event()
    store = InMemorySessionStore()
    script = Script(calls(call("c1", "slow", seconds=60)), answer("never"))
    agent = Agent(model=script.model, tools=[slow_tool(started)], session_store=store)

    task = asyncio.ensure_future(agent.prompt("go").session("s"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert (await statuses(store, "s"))[-1] == "run cancelled"
    assert conversation_error(await prompt_view(store, "s")) is None


def test_cancel_from_another_thread_stops_run_sync() -> None:
    started = threading.Event()
    script = Script(calls(call("c1", "slow", seconds=60)), answer("never"))
    request = Agent(model=script.model, tools=[slow_tool(started)]).prompt("go")
    results: list[Any] = []
    worker = threading.Thread(target=lambda: results.append(request.run_sync()))
    worker.start()
    assert started.wait(30)
    request.cancel()
    worker.join(30)
    assert not worker.is_alive()
    assert results[0].stop_reason == "cancelled"


# -- resumption answers ------------------------------------------------------------------------


async def test_resume_refuses_approvals_for_calls_the_session_never_made() -> None:
    store = InMemorySessionStore()
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("3"))
    agent = Agent(model=script.model, tools=[add], session_store=store, hooks={"before_tool": [pause]})
    await agent.prompt("1+2?").session("s")
    before = await store.events("s", view="all")

    with pytest.raises(ConfigError, match=r"'c9'.*awaiting a decision: c1"):
        await agent.resume("s", approvals={"c9": True})

    assert await store.events("s", view="all") == before


async def test_a_new_prompt_after_an_empty_resume_says_a_started_call_may_have_run() -> None:
    store = InMemorySessionStore()
    await store.create(session_id="s")
    await store.append_events("s", [
        Event.from_message(Message.user("1+2?"), "user"),
        Event.from_message(Message(role="assistant", parts=[call("c1", "add", a=1, b=2)]), "assistant"),
        Event.status("add", "tool", "running add(a=1, b=2)", call_id="c1", started=True),
    ])
    script = Script(answer("fine"))
    agent = Agent(model=script.model, tools=[add], session_store=store)

    paused = await agent.resume("s", approvals={})
    assert [i.reason for i in paused.interruptions] == [DIED_REASON]
    await agent.prompt("never mind").session("s")

    assert [r.content for r in script.results(1)] == [DIED_REASON]


async def test_resume_without_a_user_finds_the_session_by_id() -> None:
    store = InMemorySessionStore()
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("3"))
    agent = Agent(model=script.model, tools=[add], session_store=store, hooks={"before_tool": [pause]})
    await agent.prompt("1+2?").session("s", user="u1")

    agent = Agent(model=script.model, tools=[add], session_store=store)
    result = await agent.resume("s", approvals={"c1": True})

    assert (result.stop_reason, result.output) == ("completed", "3")


# -- user-authored tool calls ------------------------------------------------------------------


async def test_a_users_own_tool_calls_reach_the_model_as_text() -> None:
    store = InMemorySessionStore()
    await store.create(session_id="s")
    edit = ToolCallPart(id="edit-1", name="write_file", arguments={"path": "notes.md"})
    await store.prepare_event("s", Event(author="user", kind="message", role="user", parts=[edit]))
    script = Script(answer("noted"), answer("still noted"))
    agent = Agent(model=script.model, session_store=store)

    await agent.prompt("I edited a file").session("s")
    await agent.prompt("and?").session("s")

    for number in (1, 2):
        first = script.requests[number - 1].messages[0]
        assert all(isinstance(p, TextPart) for p in first.parts)
        assert first.text.startswith('The user called write_file({"path": "notes.md"}).')
    stored = (await store.events("s", view="prompt"))[0]
    assert [p.type for p in stored.parts] == ["tool_call", "text"], "the log keeps the structured parts"


async def test_resume_of_a_session_that_never_ran_is_refused_and_records_nothing() -> None:
    store = InMemorySessionStore()
    await store.create(session_id="s")
    agent = Agent(model=Script().model, session_store=store)
    with pytest.raises(ConfigError, match="nothing to resume"):
        await agent.resume("s")
    assert await store.events("s", view="all") == []


async def test_resuming_a_completed_run_records_nothing() -> None:
    store = InMemorySessionStore()
    agent = Agent(model=Script(answer("hi")).model, session_store=store)
    await agent.prompt("hello").session("s")
    before = await store.events("s", view="all")

    result = await agent.resume("s", approvals={})

    assert (result.stop_reason, result.output) == ("completed", "hi")
    assert await store.events("s", view="all") == before


async def test_a_resumed_run_numbers_its_turns_on() -> None:
    store = InMemorySessionStore()
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("3"))
    agent = Agent(model=script.model, tools=[add], session_store=store, hooks={"before_tool": [pause]})
    await agent.prompt("1+2?").session("s")

    await Agent(model=script.model, tools=[add], session_store=store).resume("s", approvals={"c1": True})

    turns = [line for line in await statuses(store, "s") if line.endswith("calling model")]
    assert turns == ["turn 1: calling model", "turn 2: calling model"]


async def test_a_hook_that_edits_a_part_in_place_gets_a_hook_error_and_the_log_stays_valid() -> None:
    @hook
    def rename_call(state: State) -> None:
        state.tool_call.id = "x"  # type: ignore[union-attr]

    store = InMemorySessionStore()
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("3"))
    agent = Agent(model=script.model, tools=[add], session_store=store, hooks={"after_tool": [rename_call]})

    with pytest.raises(HookError, match=r"(?s)rename_call.*frozen"):
        await agent.prompt("1+2?").session("s")

    assert conversation_error(await prompt_view(store, "s")) is None


async def test_a_cancelled_turn_keeps_the_results_of_the_calls_that_finished() -> None:
    started = asyncio.Event()

    @tool
    async def quick() -> str:
        """Answer at once."""
        return "quick done"

    store = InMemorySessionStore()
    script = Script(calls(call("c1", "quick"), call("c2", "slow", seconds=60)), answer("never"))
    request = Agent(model=script.model, tools=[quick, slow_tool(started)], session_store=store).prompt("go")
    task = asyncio.ensure_future(request.session("s"))
    await started.wait()
    request.cancel()
    result = await task

    assert result.stop_reason == "cancelled"
    contents = {r.call_id: r.content for m in await prompt_view(store, "s") for r in m.tool_results}
    assert contents["c1"] == "quick done"
    assert "cancelled while this call ran" in contents["c2"]
