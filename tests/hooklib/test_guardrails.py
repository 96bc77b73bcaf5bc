"""Guardrails (issue 27, part 2): input (before, or beside, the first model call), output (an answer
held back) and tool (reject with a message, or stop). A trip is an event naming the guardrail and its
reason; a stop ends the run with `stop_reason="guardrail"`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hookline import Agent, Event, HookError, Message, ToolCallPart, tool
from hookline.events import run_end
from hookline.hooklib import InputGuardrail, OutputGuardrail, ToolGuardrail
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.models.base import ModelStreamEvent, ResponseDone, TextDelta
from hookline.sessions import SQLiteSessionStore
from support.run_paths import PATHS, run_by

pytestmark = pytest.mark.anyio

ANSWER = "the answer is forty two"


class SlowWords(FunctionModel):
    """Streams its answer a word at a time, `delay` apart, noting each word it made and whether it was cancelled."""

    def __init__(self, text: str = ANSWER, delay: float = 0.02) -> None:
        super().__init__(lambda request: ModelResponse(text=text), name="slow-words")
        self.delay, self.made, self.cancelled, self.calls = delay, [], False, 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        self.calls += 1
        response = await self.request(request)
        try:
            for word in response.text.split(" "):
                await asyncio.sleep(self.delay)
                self.made.append(word)
                yield TextDelta(word + " ")
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        yield ResponseDone(response)


def emails(prompt: Message) -> str | None:
    return "the prompt holds an email address" if "@" in prompt.text else None


def _trips(events: list[Event]) -> list[dict[str, Any]]:
    return [e.metadata["guardrail"] for e in events if "guardrail" in e.metadata]


def _assistant(events: list[Event]) -> list[Event]:
    return [e for e in events if e.kind == "delta" or (e.kind == "message" and e.role == "assistant")]


# -- input ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
async def test_an_input_guardrail_stops_the_run_before_the_model_is_called(path: str, tmp_path: Path) -> None:
    model = SlowWords()
    store = SQLiteSessionStore(tmp_path / "s.db")
    agent = Agent(model=model, hooks={"before_llm": [InputGuardrail(emails)]}, session_store=store)
    result, streamed = await run_by(path, agent.prompt("mail bob@example.com").session("s"))

    assert (result.stop_reason, result.output) == ("guardrail", "")
    assert model.calls == 0
    log = await store.events("s", view="all")
    assert _trips(log) == [{"name": "emails", "reason": "the prompt holds an email address", "action": "stop",
                            "kind": "input"}]
    (line,) = [e for e in log if "guardrail" in e.metadata]
    assert (line.kind, line.text) == ("status", "guardrail emails tripped: the prompt holds an email address")
    assert run_end(log[-1]) == "guardrail"
    assert _assistant(log) == []
    if path == "stream":
        assert _trips(streamed) == _trips(log), "a front end sees the trip"
    await store.aclose()


async def test_an_input_guardrail_that_passes_lets_the_run_go_on_and_checks_only_the_first_call() -> None:
    seen: list[str] = []

    async def note(prompt: Message) -> None:
        seen.append(prompt.text)

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    def script(request: ModelRequest) -> ModelResponse:
        if request.messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCallPart(id="c1", name="add", arguments={"a": 1, "b": 2})])
        return ModelResponse(text="3")

    agent = Agent(model=FunctionModel(script), tools=[add], hooks={"before_llm": [InputGuardrail(note)]})
    result = await agent.prompt("1+2?")
    assert (result.stop_reason, result.output) == ("completed", "3")
    assert seen == ["1+2?"], "two model calls, one check"


async def test_a_parallel_input_guardrail_that_trips_cancels_the_model_before_its_answer_reaches_anyone(
    tmp_path: Path,
) -> None:
    model = SlowWords(delay=0.2)

    async def slow_judge(prompt: Message) -> str | None:
        while not model.made:  # the model has made a word meanwhile
            await asyncio.sleep(0.01)
        return "a slow judge refused it"

    store = SQLiteSessionStore(tmp_path / "s.db")
    agent = Agent(model=model, session_store=store,
                  hooks={"before_llm": [InputGuardrail(slow_judge, name="judge", parallel=True)]})
    request = agent.prompt("hello").session("s")
    streamed = [e async for e in request.stream()]

    assert request.result is not None
    assert request.result.stop_reason == "guardrail"
    assert model.made, "the model was answering while the judge ran"
    assert model.cancelled, "the model call was cancelled when the guardrail tripped"
    assert len(model.made) < len(ANSWER.split(" "))
    assert _assistant(streamed) == [], "no delta and no answer reached the watcher"
    log = await store.events("s", view="all")
    assert _assistant(log) == [], "nothing of the answer was kept (no cut-off message)"
    assert _trips(log) == [{"name": "judge", "reason": "a slow judge refused it", "action": "stop", "kind": "input"}]
    assert run_end(log[-1]) == "guardrail"
    await store.aclose()


async def test_a_parallel_input_guardrail_that_passes_lets_the_held_text_out_in_order() -> None:
    model = SlowWords(delay=0.01)
    deltas: list[str] = []
    seen_when_passed: list[int] = []

    async def judge(prompt: Message) -> None:
        while len(model.made) < 3:  # the model has made words, and a reader had the time to get them
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.02)
        seen_when_passed.append(len(deltas))

    agent = Agent(model=model, hooks={"before_llm": [InputGuardrail(judge, parallel=True)]})
    request = agent.prompt("hello")
    async for event in request.stream():
        if event.kind == "delta":
            deltas.append(event.text)

    assert request.result is not None
    assert request.result.output == ANSWER
    assert "".join(deltas) == ANSWER + " ", "every word, in order"
    assert seen_when_passed == [0], "no delta reached the reader before the judge passed"


async def test_a_parallel_check_that_fails_fails_the_run_and_cancels_the_model() -> None:
    model = SlowWords(delay=0.05)

    async def broken(prompt: Message) -> str | None:
        await asyncio.sleep(0.01)
        raise RuntimeError("the judge is down")

    agent = Agent(model=model, hooks={"before_llm": [InputGuardrail(broken, parallel=True)]})
    with pytest.raises(HookError, match="the judge is down"):
        _ = [e async for e in agent.prompt("hello").stream()]
    assert model.cancelled


async def test_a_parallel_input_guardrail_without_a_stream() -> None:
    async def judge(prompt: Message) -> str | None:
        await asyncio.sleep(0.01)
        return "no"

    model = SlowWords()
    agent = Agent(model=model, hooks={"before_llm": [InputGuardrail(judge, parallel=True)]})
    result = await agent.prompt("hello")
    assert (result.stop_reason, result.messages[-1].role) == ("guardrail", "user")


# -- output -----------------------------------------------------------------------------------------


def secrets(answer: Message) -> str | None:
    return "the answer names a number" if "forty" in answer.text else None


@pytest.mark.parametrize("path", PATHS)
async def test_an_output_guardrail_holds_the_answer_back(path: str, tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db")
    agent = Agent(model=SlowWords(delay=0), hooks={"after_llm": [OutputGuardrail(secrets)]}, session_store=store)
    result, streamed = await run_by(path, agent.prompt("what is it?").session("s"))

    assert (result.stop_reason, result.output) == ("guardrail", "")
    assert [m.role for m in result.messages] == ["user"]
    log = await store.events("s", view="all")
    assert _assistant(log) == [], "the log never saw it"
    assert _assistant(streamed) == [], "nor a stream"
    assert _trips(log) == [{"name": "secrets", "reason": "the answer names a number", "action": "stop",
                            "kind": "output"}]
    assert run_end(log[-1]) == "guardrail"
    again = await Agent(model=FunctionModel(lambda r: ModelResponse(text="ok")), session_store=store).prompt(
        "next").session("s")
    assert again.output == "ok", "the session goes on after a held-back answer"
    await store.aclose()


async def test_an_output_guardrail_that_passes_streams_the_answer_whole_once_checked() -> None:
    agent = Agent(model=SlowWords(delay=0), hooks={"after_llm": [OutputGuardrail(lambda m: None, name="fine")]})
    request = agent.prompt("hi")
    kinds = [e.kind for e in await _events(request)]
    assert kinds.count("delta") == len(ANSWER.split(" "))
    first_delta = kinds.index("delta")
    assert "message" in kinds[first_delta:], "the answer is stored after its text went out"


async def test_an_output_guardrail_with_a_live_stream_lets_the_text_out_and_still_holds_the_message() -> None:
    agent = Agent(model=SlowWords(delay=0), hooks={"after_llm": [OutputGuardrail(secrets, hold_stream=False)]})
    request = agent.prompt("hi")
    events = await _events(request)
    assert [e for e in events if e.kind == "delta"], "deltas streamed live"
    assert not [e for e in events if e.kind == "message" and e.role == "assistant"]
    assert request.result is not None
    assert request.result.stop_reason == "guardrail"


async def _events(request: Any) -> list[Event]:
    return [e async for e in request.stream()]


# -- tools ------------------------------------------------------------------------------------------


ran: list[str] = []


@tool
def delete(path: str) -> str:
    """Delete a file."""
    ran.append(path)
    return f"deleted {path}"


def outside_tmp(call: ToolCallPart) -> str | None:
    path = call.arguments.get("path", "") if isinstance(call.arguments, dict) else ""
    return None if path.startswith("/tmp/") else f"{path} is outside /tmp"


def deleting(request: ModelRequest) -> ModelResponse:
    if request.messages[-1].role == "user":
        calls = [ToolCallPart(id="c1", name="delete", arguments={"path": "/etc/passwd"}),
                 ToolCallPart(id="c2", name="delete", arguments={"path": "/tmp/x"})]
        return ModelResponse(tool_calls=calls)
    return ModelResponse(text=" | ".join(r.content for m in request.messages for r in m.tool_results))


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


@pytest.mark.parametrize("path", PATHS)
async def test_a_tool_guardrail_rejects_a_call_with_a_message_to_the_model(path: str) -> None:
    agent = Agent(model=FunctionModel(deleting), tools=[delete],
                  hooks={"before_tool": [ToolGuardrail(outside_tmp, ["delete"])]})
    result, streamed = await run_by(path, agent.prompt("clean"))

    assert result.stop_reason == "completed"
    assert ran == ["/tmp/x"]
    assert result.output == ("the call to delete was refused by guardrail outside_tmp: /etc/passwd is outside /tmp"
                             " | deleted /tmp/x")
    if path == "stream":
        assert _trips(streamed) == [{"name": "outside_tmp", "reason": "/etc/passwd is outside /tmp",
                                     "action": "reject", "kind": "tool", "call_id": "c1", "tool": "delete"}]


async def test_a_tool_guardrail_that_stops_the_run_runs_none_of_its_calls(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db")

    async def outside(call: ToolCallPart) -> str | None:
        return outside_tmp(call)

    agent = Agent(model=FunctionModel(deleting), tools=[delete], session_store=store,
                  hooks={"before_tool": [ToolGuardrail(outside, on_trip="stop", name="paths")]})
    result = await agent.prompt("clean").session("s")

    assert result.stop_reason == "guardrail"
    assert ran == []
    log = await store.events("s", view="all")
    assert [t["action"] for t in _trips(log)] == ["stop"]
    assert run_end(log[-1]) == "guardrail"
    results = [r for e in log if e.kind == "message" for r in e.to_message().tool_results]
    assert [r.call_id for r in results] == ["c1", "c2"]
    assert all(r.is_error for r in results)
    await store.aclose()


def test_bad_guardrails_are_refused() -> None:
    from hookline import ConfigError

    with pytest.raises(ConfigError, match="needs a check function"):
        InputGuardrail("no")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="'reject' or 'stop'"):
        ToolGuardrail(outside_tmp, on_trip="ask")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="list of tool names"):
        ToolGuardrail(outside_tmp, "delete")


async def test_a_check_that_returns_something_else_fails_the_run() -> None:
    agent = Agent(model=SlowWords(), hooks={"before_llm": [InputGuardrail(lambda m: True, name="bad")]})
    with pytest.raises(HookError, match="returns None or a reason"):
        await agent.prompt("hi")
