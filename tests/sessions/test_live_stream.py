"""`.stream()` with a session store is live: what user code reports while it runs comes at once.

Against every store (SQLite files and the real PostgreSQL included): a tool's progress, log
records, a hook's lines and a sub-agent's lines reach `.stream()` while the tool or hook
runs, before they are stored (`seq` None, the `id` they keep); the stream keeps the log's
order; `stored_copies=True` also gives each one's stored copy at the flush; and a cancel
mid-answer keeps the text streamed so far, marked cut off, which the next prompt sees.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

import pytest

from hookline import Agent, Event, RunContext, State, ToolCallPart, hook, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse, ModelStreamEvent, ResponseDone, TextDelta
from hookline.sessions import SessionStore
from support.waiting import DEADLINE, await_until

pytestmark = pytest.mark.anyio

logger = logging.getLogger("tests.live")


@tool
async def work(steps: int, seconds: float, ctx: RunContext[None]) -> str:
    """Work in steps, reporting each (a status line with when it was made, a partial result, a log record)."""
    for i in range(1, steps + 1):
        ctx.status(f"step {i}", made=time.monotonic())
        ctx.partial(i / steps)
        logger.warning("logged step %d", i)
        await asyncio.sleep(seconds / steps)
    return "worked"


@hook
def note(state: State, ctx: RunContext[None]) -> None:
    ctx.status(f"hook at {state.point.value}")


def _script(request: ModelRequest) -> ModelResponse:
    if request.messages[-1].role == "tool":
        return ModelResponse(text="done")
    return ModelResponse(tool_calls=[ToolCallPart(id="w1", name="work", arguments={"steps": 4, "seconds": 2.0})])


def _agent(store: SessionStore, **options: object) -> Agent:
    return Agent("worker", model=FunctionModel(_script), tools=[work], session_store=store, **options)  # type: ignore[arg-type]


async def _timed(stream: AsyncIterator[Event]) -> list[tuple[float, Event]]:
    return [(time.monotonic(), event) async for event in stream]


async def test_a_tools_progress_comes_while_it_runs_before_it_is_stored(store: SessionStore) -> None:
    request = _agent(store).prompt("work").session("s-live")
    events = await _timed(request.stream())
    steps = [(at, e) for at, e in events if e.kind == "status" and e.text.startswith("step ")]
    assert [e.text for _, e in steps] == ["step 1", "step 2", "step 3", "step 4"]
    made = [e.metadata["made"] for _, e in steps]
    for (arrived, _), next_made in zip(steps, [*made[1:], float("inf")], strict=True):
        assert arrived < next_made, "a step came only after the tool had gone on to the next one"
    assert all(e.seq is None and e.id for _, e in steps), "live: before it is stored, with the id it keeps"
    partials = [e for _, e in events if e.metadata.get("partial_result")]
    logged = [e for _, e in events if e.text.startswith("warning: logged step")]
    assert [e.text for e in partials] == ["0.25", "0.5", "0.75", "1.0"]
    assert len(logged) == 4
    assert all(e.seq is None for e in partials + logged)
    log = {e.id: e for e in await store.events("s-live")}
    assert all(log[e.id].text == e.text and log[e.id].seq for _, e in steps), "stored at the next flush, same id"


async def test_the_stream_keeps_the_logs_order_when_hooks_speak_behind_a_message(store: SessionStore) -> None:
    hooks = {point: [note] for point in ("after_llm", "after_tool", "before_llm", "on_exit")}
    request = _agent(store, hooks=hooks).prompt("work").session("s-order")
    streamed = [e for e in [e async for e in request.stream()] if e.kind != "delta"]
    log = [e for e in await store.events("s-order") if e.kind != "marker"]
    assert [e.id for e in streamed] == [e.id for e in log], "each event once, in the log's order"
    early = [e for e in streamed if e.seq is None]
    assert any(e.kind == "message" for e in early), "a message recorded before a hook's line went out with it"
    assert {e.text for e in early if e.kind == "status"} >= {"hook at after_llm", "hook at after_tool"}


async def test_stored_copies_come_too_when_asked(store: SessionStore) -> None:
    request = _agent(store).prompt("work").session("s-copies")
    events = [e async for e in request.stream(stored_copies=True)]
    live = {e.id: e for e in events if e.kind == "status" and e.seq is None}
    copies = {e.id: e for e in events if e.seq is not None and e.id in live}
    assert set(copies) == set(live), "each live event comes again once stored"
    assert all(events.index(live[i]) < events.index(copies[i]) for i in live)
    assert [e.seq for e in events if e.seq is not None] == sorted(e.seq for e in events if e.seq is not None)


# -- a stopped answer ---------------------------------------------------------------------------


class SlowTalker(FunctionModel):
    """Streams its answer one word every 20 ms (and records what each call was asked)."""

    def __init__(self) -> None:
        self.asked: list[ModelRequest] = []
        super().__init__(self._answer)

    def _answer(self, request: ModelRequest) -> ModelResponse:
        self.asked.append(request)
        talk = request.messages[-1].text == "talk"
        return ModelResponse(text=" ".join(f"w{i}" for i in range(200)) if talk else "ok")

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        response = await self.request(request)
        for word in response.text.split(" "):
            await asyncio.sleep(0.02)
            yield TextDelta(word + " ")
        yield ResponseDone(response)


async def test_a_cancelled_answer_keeps_its_text_marked_cut_off_and_the_next_prompt_sees_it(
    store: SessionStore,
) -> None:
    model = SlowTalker()
    agent = Agent("talker", model=model, session_store=store)
    request = agent.prompt("talk").session("s-cut")
    said: list[str] = []

    async def read() -> None:
        async for event in request.stream():
            if event.kind == "delta":
                said.append(event.text)

    reading = asyncio.create_task(read())
    await await_until(lambda: len(said) >= 5, "five words streamed")
    assert request.cancel()
    await asyncio.wait_for(reading, DEADLINE)
    assert request.result is not None
    assert request.result.stop_reason == "cancelled"
    text = "".join(said)
    assert request.result.output == text
    answers = [e for e in await store.events("s-cut", view="ui") if e.role == "assistant"]
    assert [(e.text, e.metadata) for e in answers] == [(text, {"cut_off": True})]
    await agent.prompt("go on").session("s-cut")
    assert [(m.role, m.text) for m in model.asked[-1].messages] == [("user", "talk"), ("assistant", text),
                                                                     ("user", "go on")]


async def test_a_sub_agents_lines_reach_the_callers_stream_while_its_tool_runs(store: SessionStore) -> None:
    helper = Agent("helper", model=FunctionModel(_script), tools=[work])
    lead_script = [ModelResponse(tool_calls=[ToolCallPart(id="h1", name="ask_helper", arguments={"input": "go"})]),
                   ModelResponse(text="thanks")]
    lead = Agent("lead", model=FunctionModel(lambda request: lead_script[len(request.messages) // 3]),
                 tools=[helper.as_tool("ask_helper", "Ask the helper")], session_store=store)
    events = await _timed(lead.prompt("delegate").session("s-sub").stream())
    steps = [(at, e) for at, e in events if e.metadata.get("agent") == "helper" and "made" in e.metadata]
    assert [e.text for _, e in steps] == [f"helper: step {i}" for i in range(1, 5)]
    made = [e.metadata["made"] for _, e in steps]
    arrived = [at for at, _ in steps]
    assert all(a < m for a, m in zip(arrived, [*made[1:], float("inf")], strict=True)), "each line before the next"
    assert all(e.seq is None for _, e in steps)
    forwarded = [e for _, e in events if e.metadata.get("agent") == "helper"]
    assert {e.metadata["agent_call_id"] for e in forwarded} == {"h1"}, "the caller's call that runs the sub-agent"
    assert not any("run_end" in e.metadata for e in forwarded), "the sub-agent's end is not the caller's"


async def test_an_answers_deltas_carry_the_id_its_stored_message_keeps(store: SessionStore) -> None:
    agent = Agent("talker", model=FunctionModel(lambda request: ModelResponse(text="hello there")), session_store=store)
    events = [e async for e in agent.prompt("hi").session("s-ids").stream()]
    (delta,) = [e for e in events if e.kind == "delta"]
    (answer,) = [e for e in events if e.role == "assistant"]
    assert delta.id is not None
    assert delta.id == answer.id
    assert [e.id for e in await store.events("s-ids") if e.role == "assistant"] == [delta.id]
