#!/usr/bin/env python3
"""hookline's adapter for the add-loop benchmark (bench/harness.py).

    .venv/bin/python bench/bench_hookline.py --T 10 --phases seq   # = bench/harness.py hookline ...

`BENCH_FEATURES` (comma-separated) turns features on, to measure what each costs:

- `hooks`: one no-op sync hook at each of the seven hook points;
- `stream`: consume `.stream()` instead of awaiting the request;
- `nostatus`: `StatusOptions(agent=False, llm=False, tool=False)` (status events are only built
  when something receives them: a stream or a session);
- `memory`: each run in a fresh session of an `InMemorySessionStore`;
- `tracing`: OpenTelemetry spans on (the SDK, a `SimpleSpanProcessor`, an in-memory exporter);
  `tracing-content` adds `include_content=True`;
- `metrics`: OpenTelemetry metrics alone (the SDK's `MeterProvider`, an in-memory reader);
- `tracing-nosdk`: `hookline.instrument()` called, but no OpenTelemetry SDK configured (what a
  library that instruments hookline for its users costs an application without an SDK);
- `guardrails`: an input, an output and a tool guardrail whose checks pass (the input one
  before the first model call); `guardrails-parallel`: the same, the input one beside it;
- `compaction`: a `Compaction` hook at `before_llm` and `after_llm` that never fires
  (a message and a token trigger, both out of reach);
- `subagent`: the scenario's agent runs as a sub-agent (`as_tool`) of a lead agent that calls it
  once and answers with its output: two more model calls per run, and in `seqdb` a child
  session per run;
- `handoff`: a front agent hands the conversation to the scenario's agent (`Team`), which
  answers it: one more model call and one more run per run, in a session (in memory in `seq`).

The `seqdb` phase persists each run to a fresh session of a `SQLiteSessionStore` file
(synchronous=NORMAL; with `sqlite-full` in `BENCH_FEATURES`, synchronous=FULL: an fsync per commit).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from itertools import count
from typing import Any

from harness import Runner, Setup, main
from scenario import SYSTEM_PROMPT, USER_PROMPT, check_run, fake_decision

import hookline
from hookline import Agent, HookPoint, RunResult, State, StatusOptions, ToolCallPart, hook
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SessionStore
from hookline.usage import Usage

NAME = "hookline"
PERSISTS = True
FEATURES = ("hooks", "stream", "nostatus", "memory", "tracing", "tracing-content", "metrics", "tracing-nosdk",
            "sqlite-full", "guardrails", "guardrails-parallel", "compaction", "subagent", "handoff")


def version() -> str:
    """hookline's version."""
    return hookline.__version__


def features() -> set[str]:
    """The features `BENCH_FEATURES` turns on; an unknown one stops the benchmark."""
    asked = {f for f in os.environ.get("BENCH_FEATURES", "").split(",") if f}
    if unknown := asked - set(FEATURES):
        raise SystemExit(f"unknown BENCH_FEATURES {', '.join(sorted(unknown))}; expected: {', '.join(FEATURES)}")
    return asked


def fake_model(T: int, sleep_s: float) -> FunctionModel:
    """The scenario's model: it counts the tool results it is shown and answers at once."""
    usage = Usage(input_tokens=10, output_tokens=5)

    async def answer(request: ModelRequest) -> ModelResponse:
        if sleep_s:
            await asyncio.sleep(sleep_s)
        decision = fake_decision(sum(1 for m in request.messages if m.role == "tool"), T)
        if decision is None:
            return ModelResponse(text="done", usage=usage)
        return ModelResponse(tool_calls=[ToolCallPart(id=i, name="add", arguments=a) for i, a in decision], usage=usage)

    return FunctionModel(answer)


@hook
def noop(state: State) -> None:
    """A hook that does nothing: its cost is the dispatch's."""


def passes(value: object) -> None:
    """A guardrail's check that always passes."""


def feature_hooks(on: set[str]) -> dict[HookPoint, list[Any]]:
    """The hooks the features of `on` add, by point."""
    from hookline.hooklib import Compaction, InputGuardrail, OutputGuardrail, ToolGuardrail

    hooks: dict[HookPoint, list[Any]] = {point: [noop] for point in HookPoint} if "hooks" in on else {}
    if on & {"guardrails", "guardrails-parallel"}:
        inputs = InputGuardrail(passes, parallel="guardrails-parallel" in on)
        hooks.setdefault(HookPoint.BEFORE_LLM, []).append(inputs)
        hooks.setdefault(HookPoint.AFTER_LLM, []).append(OutputGuardrail(passes))
        hooks.setdefault(HookPoint.BEFORE_TOOL, []).append(ToolGuardrail(passes))
    if "compaction" in on:
        compaction = Compaction(lambda messages: "", trigger_messages=10_000, trigger_tokens=10_000_000)
        hooks.setdefault(HookPoint.BEFORE_LLM, []).append(compaction)
        hooks.setdefault(HookPoint.AFTER_LLM, []).append(compaction)
    return hooks


def lead_over(calculator: Agent, store: SessionStore | None) -> Agent:
    """A lead agent that hands the prompt to `calculator` (as a tool) once and answers with its output."""

    def lead(request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if last.role == "user":
            return ModelResponse(tool_calls=[ToolCallPart(id="lead_1", name="calculate",
                                                          arguments={"input": last.text})])
        return ModelResponse(text=last.tool_results[0].content)

    return Agent("lead", model=FunctionModel(lead), tools=[calculator.as_tool("calculate", "Ask the calculator")],
                 session_store=store)


def instrument_tracing(include_content: bool) -> None:
    """OpenTelemetry on: the SDK, a synchronous processor, an in-memory exporter."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    hookline.instrument(provider, include_content=include_content)


def instrument_metrics() -> None:
    """OpenTelemetry metrics on, spans off: the SDK's meter provider with an in-memory reader."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    hookline.instrument(meter_provider=MeterProvider(metric_readers=[InMemoryMetricReader()]))


def _store(setup: Setup, on: set[str]) -> SessionStore | None:
    if setup.db_path is not None:
        from hookline.sessions import SQLiteSessionStore

        return SQLiteSessionStore(str(setup.db_path), synchronous="FULL" if "sqlite-full" in on else "NORMAL")
    if "memory" in on:
        from hookline.sessions import InMemorySessionStore

        return InMemorySessionStore()
    return None


def handed_over(calculator: Agent, store: SessionStore | None) -> Callable[[str, str], Awaitable[RunResult]]:
    """A team whose front agent hands each new conversation to `calculator`: its `run`."""
    from hookline.handoffs import Team
    from hookline.sessions import InMemorySessionStore

    front = Agent("front", model=FunctionModel(lambda request: ModelResponse(tool_calls=[
        ToolCallPart(id="handoff_1", name="transfer_to_calculator", arguments={})])))
    team = Team([front, calculator.clone(name="calculator")], handoffs={"front": ["calculator"]},
                session_store=store or InMemorySessionStore())

    def run(prompt: str, session_id: str) -> Awaitable[RunResult]:
        return team.run(prompt, session_id=session_id)

    return run


def _team_runner(run: Callable[[str, str], Awaitable[RunResult]], T: int) -> Callable[[], Awaitable[None]]:
    ids = count()

    async def run_once() -> None:
        result = await run(USER_PROMPT, f"s{next(ids)}")
        check_run(result.output, sum(len(m.tool_results) for m in result.messages), T)

    return run_once


def _runner(agent: Agent, T: int, *, sessions: bool, stream: bool, lead: bool) -> Callable[[], Awaitable[None]]:
    ids = count()

    async def run_once() -> None:
        request = agent.prompt(USER_PROMPT)
        if sessions:
            request = request.session(f"s{next(ids)}")
        result: RunResult | None
        if stream:
            async for _ in request.stream():
                pass
            result = request.result
        else:
            result = await request
        assert result is not None
        if lead:  # the calculator's output came through the lead's one tool call
            (answered,) = [r.content for m in result.messages for r in m.tool_results]
            check_run(result.output, 2 * T if answered == "done" else 0, T)
        else:
            check_run(result.output, sum(len(m.tool_results) for m in result.messages), T)

    return run_once


async def build(setup: Setup) -> Runner:
    """hookline's agent for the scenario, with the features `BENCH_FEATURES` asks for."""
    on = features()
    if on & {"tracing", "tracing-content"}:
        instrument_tracing(include_content="tracing-content" in on)
    if "metrics" in on:
        instrument_metrics()
    if "tracing-nosdk" in on:
        hookline.instrument()
    store = _store(setup, on)
    silent = StatusOptions(agent=False, llm=False, tool=False)
    agent = Agent(model=fake_model(setup.T, setup.model_sleep_s), instructions=SYSTEM_PROMPT, tools=[setup.tool],
                  max_turns=setup.T + 1, session_store=store, hooks=feature_hooks(on),
                  status=silent if "nostatus" in on else None)
    lead = "subagent" in on
    if lead:
        agent = lead_over(agent, store)
    if "handoff" in on:
        run_once = _team_runner(handed_over(agent, store), setup.T)
    else:
        run_once = _runner(agent, setup.T, sessions=store is not None, stream="stream" in on, lead=lead)
    return Runner(run_once, store.aclose if store is not None else None)


if __name__ == "__main__":
    sys.exit(main(["hookline", *sys.argv[1:]]))
