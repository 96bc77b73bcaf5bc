"""The trace context: tools see their `execute_tool` span, runs nest where they run, nothing leaks."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode, Tracer

from hookline import Agent, Event, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SQLiteSessionStore
from hookline.tracing import Instrumentation

from .scripts import answer, call, script
from .spans import Spans

pytestmark = pytest.mark.anyio


def tools_starting_spans(tracer: Tracer) -> list[Any]:
    """A sync tool, an async tool and a tool run in a worker thread, each starting a span of its own."""

    @tool
    def sync_tool() -> str:
        """Runs on the event loop."""
        with tracer.start_as_current_span("inside sync_tool"):
            return "ok"

    @tool
    async def async_tool() -> str:
        """Awaits."""
        with tracer.start_as_current_span("inside async_tool"):
            await asyncio.sleep(0)  # suspends: the span must stay current across an await
            return "ok"

    @tool(thread=True)
    def thread_tool() -> str:
        """Runs in a worker thread."""
        with tracer.start_as_current_span("inside thread_tool"):
            return "ok"

    return [sync_tool, async_tool, thread_tool]


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_a_span_a_tool_starts_is_a_child_of_its_execute_tool(
    traced: Instrumentation, spans: Spans, user_tracer: Tracer, concurrency: int
) -> None:
    from hookline import ToolCallPart

    calls = [ToolCallPart(id=f"c{i}", name=name, arguments={}) for i, name in
             enumerate(["sync_tool", "async_tool", "thread_tool"])]
    model = script(ModelResponse(tool_calls=calls), answer("done"))
    agent = Agent(name="a", model=model, tools=tools_starting_spans(user_tracer), tool_concurrency=concurrency)
    await agent.prompt("go")

    for name in ("sync_tool", "async_tool", "thread_tool"):
        assert spans.parent_of(spans.one(f"inside {name}")) == spans.one(f"execute_tool {name}")
        assert spans.parent_of(spans.one(f"execute_tool {name}")) == spans.one("invoke_agent a")


async def test_a_run_is_a_child_of_the_callers_span(traced: Instrumentation, spans: Spans, user_tracer: Tracer) -> None:
    agent = Agent(name="a", model=script(answer("1"), answer("2")))
    with user_tracer.start_as_current_span("request handler") as outer:
        await agent.prompt("one")
        assert trace.get_current_span() is outer
    await agent.prompt("two")

    first, second = spans.named("invoke_agent a")
    assert spans.parent_of(first) == spans.one("request handler")
    assert second.parent is None
    assert trace.get_current_span() is trace.INVALID_SPAN


def test_run_sync_takes_the_callers_span_every_time(traced: Instrumentation, spans: Spans, user_tracer: Tracer) -> None:
    agent = Agent(name="a", model=script(answer("1"), answer("2"), answer("3")))
    with user_tracer.start_as_current_span("job A"):
        agent.prompt("one").run_sync()
    agent.prompt("two").run_sync()
    with user_tracer.start_as_current_span("job B"):
        agent.prompt("three").run_sync()

    runs = spans.named("invoke_agent a")
    assert [p.name if (p := spans.parent_of(r)) else None for r in runs] == ["job A", None, "job B"]


async def test_two_concurrent_runs_never_mix_contexts(
    traced: Instrumentation, spans: Spans, user_tracer: Tracer
) -> None:
    arrived: list[str] = []
    both_in = asyncio.Event()

    @tool
    async def wait_for_the_other(who: str) -> str:
        """Waits until both runs are inside this tool."""
        with user_tracer.start_as_current_span(f"inside {who}"):
            arrived.append(who)
            if len(arrived) == 2:
                both_in.set()
            await asyncio.wait_for(both_in.wait(), timeout=30)
            return who

    def agent(name: str) -> Agent:
        model = script(call(f"{name}1", "wait_for_the_other", who=name), answer(name))
        return Agent(name=name, model=model, tools=[wait_for_the_other])

    await asyncio.gather(agent("left").prompt("go"), agent("right").prompt("go"))

    assert sorted(arrived) == ["left", "right"]
    for name in ("left", "right"):
        run = spans.one(f"invoke_agent {name}")
        tool_span = spans.parent_of(spans.one(f"inside {name}"))
        assert tool_span is not None
        assert tool_span.name == "execute_tool wait_for_the_other"
        assert spans.parent_of(tool_span) == run
        assert (tool_span.attributes or {})["gen_ai.tool.call.id"] == f"{name}1"
        assert run.parent is None
    assert spans.one("invoke_agent left").context.trace_id != spans.one("invoke_agent right").context.trace_id


async def test_a_stream_closed_early_leaks_no_context(
    traced: Instrumentation, spans: Spans, user_tracer: Tracer
) -> None:
    started = asyncio.Event()

    async def slow(request: ModelRequest) -> ModelResponse:
        started.set()
        await asyncio.Event().wait()
        return answer("never")

    agent = Agent(name="a", model=FunctionModel(slow))
    with user_tracer.start_as_current_span("consumer") as outer:
        stream = agent.prompt("go").stream()
        first: Event = await anext(stream)
        assert first.kind == "message"
        await asyncio.wait_for(started.wait(), timeout=30)  # the run is inside its chat span now
        assert trace.get_current_span() is outer
        await stream.aclose()
        assert trace.get_current_span() is outer
    assert trace.get_current_span() is trace.INVALID_SPAN

    run, chat = spans.one("invoke_agent a"), spans.one("chat function")  # both ended
    assert spans.parent_of(run) == spans.one("consumer")
    assert spans.parent_of(chat) == run
    for span in (run, chat):
        assert span.status.status_code is StatusCode.ERROR
        assert (span.attributes or {})["error.type"] == "cancelled"


async def test_a_stream_consumed_whole_keeps_the_consumers_span(
    traced: Instrumentation, spans: Spans, user_tracer: Tracer
) -> None:
    agent = Agent(name="a", model=script(call("c1", "noop"), answer("done")), tools=[])
    with user_tracer.start_as_current_span("consumer") as outer:
        async for _ in agent.prompt("go").stream():
            assert trace.get_current_span() is outer
        assert trace.get_current_span() is outer

    run = spans.one("invoke_agent a")
    assert spans.parent_of(run) == spans.one("consumer")
    assert [s.name for s in spans.children(run)] == ["chat function", "execute_tool noop", "chat function"]


async def test_an_agent_used_as_a_tool_runs_under_its_execute_tool(traced: Instrumentation, spans: Spans) -> None:
    inner = Agent(name="researcher", model=script(answer("42")))
    outer = Agent(name="lead", model=script(call("c1", "research", input="meaning?"), answer("It is 42.")),
                  tools=[inner.as_tool("research", "Ask the researcher")])
    await outer.prompt("go")

    tool_span = spans.one("execute_tool research")
    inner_run = spans.one("invoke_agent researcher")
    assert spans.parent_of(inner_run) == tool_span
    assert spans.parent_of(tool_span) == spans.one("invoke_agent lead")
    assert [s.name for s in spans.children(inner_run)] == ["chat function"]


async def test_a_sub_agent_in_its_child_session_runs_under_its_execute_tool(
    traced: Instrumentation, spans: Spans, tmp_path: Path
) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db")
    inner = Agent(name="researcher", model=script(answer("42")))
    outer = Agent(name="lead", model=script(call("c1", "research", input="meaning?"), answer("It is 42.")),
                  tools=[inner.as_tool("research", "Ask the researcher")], session_store=store)
    await outer.prompt("go").session("s")

    assert sorted(s.id for s in await store.list()) == ["s", "s.c1"]  # the child session exists
    inner_run = spans.one("invoke_agent researcher")
    assert spans.parent_of(inner_run) == spans.one("execute_tool research")
    assert [s.name for s in spans.children(inner_run)] == ["chat function"]


async def test_a_cancelled_run_records_why_it_stopped(traced: Instrumentation, spans: Spans) -> None:
    started = asyncio.Event()

    async def slow(request: ModelRequest) -> ModelResponse:
        started.set()
        await asyncio.Event().wait()
        return answer("never")

    request = Agent(name="a", model=FunctionModel(slow)).prompt("go")
    task = asyncio.ensure_future(request)
    await asyncio.wait_for(started.wait(), timeout=30)
    assert request.cancel()
    result = await asyncio.wait_for(task, timeout=30)

    assert result.stop_reason == "cancelled"
    run = spans.one("invoke_agent a")
    assert (run.attributes or {})["hookline.run.stop_reason"] == "cancelled"
    assert run.status.status_code is StatusCode.UNSET  # the caller asked for it: not a failure of the run
    assert (spans.one("chat function").attributes or {})["error.type"] == "cancelled"
