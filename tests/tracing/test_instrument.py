"""Turning tracing on and off: `instrument()`, its handle, `uninstrument()`, and what they never touch."""

from __future__ import annotations

import subprocess
import sys

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Tracer

import hookline
import hookline.tracing
from hookline import Agent, tool
from hookline.tracing import instrument, uninstrument

from .scripts import answer, call, script
from .spans import Spans

pytestmark = pytest.mark.anyio


async def test_uninstrument_stops_new_spans(provider: TracerProvider, spans: Spans) -> None:
    agent = Agent(name="a", model=script(answer("1"), answer("2"), answer("3"), answer("4")))
    handle = instrument(provider)
    await agent.prompt("one")
    handle.uninstrument()
    await agent.prompt("two")
    assert len(spans.named("invoke_agent a")) == 1

    instrument(provider)
    await agent.prompt("three")
    uninstrument()
    await agent.prompt("four")
    assert len(spans.named("invoke_agent a")) == 2
    assert hookline.tracing.active is None


async def test_the_handle_is_a_context_manager(provider: TracerProvider, spans: Spans) -> None:
    agent = Agent(name="a", model=script(answer("1"), answer("2")))
    with instrument(provider):
        await agent.prompt("one")
    await agent.prompt("two")
    assert len(spans.named("invoke_agent a")) == 1


async def test_a_later_instrument_replaces_and_outlives_an_old_handle(provider: TracerProvider, spans: Spans) -> None:
    other = TracerProvider()
    old = instrument(other)
    instrument(provider)
    old.uninstrument()  # no longer the active one: leaves the new one on
    await Agent(name="a", model=script(answer("1"))).prompt("one")
    assert len(spans.named("invoke_agent a")) == 1
    other.shutdown()


async def test_the_global_tracer_provider_is_never_set(provider: TracerProvider, spans: Spans) -> None:
    before = trace.get_tracer_provider()
    with instrument(provider):
        await Agent(name="a", model=script(answer("1"))).prompt("one")
    assert trace.get_tracer_provider() is before
    assert trace.get_tracer_provider() is not provider


async def test_without_a_provider_it_uses_the_global_one(spans: Spans) -> None:
    # No global provider is set in the tests: the proxy records nothing, and the run is unharmed.
    with instrument() as handle:
        assert handle.tracing is hookline.tracing.active
        result = await Agent(name="a", model=script(answer("1"))).prompt("one")
    assert result.output == "1"
    assert spans.all == ()


async def test_without_any_sdk_a_run_is_untraced_and_keeps_the_callers_span(user_tracer: Tracer) -> None:
    # No global provider is set in the tests: nothing would record this run, so nothing wraps it
    seen: list[object] = []

    @tool
    def where() -> str:
        """The span current in the tool."""
        seen.append(trace.get_current_span())
        return "here"

    agent = Agent(name="a", model=script(call("c1", "where"), answer("done")), tools=[where])
    with instrument() as handle, user_tracer.start_as_current_span("request") as caller:
        await agent.prompt("where?")
        assert seen == [caller]
        assert handle.tracing.for_run(agent, None, None) is None


def test_a_global_sdk_set_after_instrument_is_followed() -> None:
    code = """
import hookline
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from hookline import Agent
from hookline.models import FunctionModel, ModelResponse

agent = Agent(name="a", model=FunctionModel(lambda request: ModelResponse(text="hi")))
hookline.instrument()
agent.prompt("before any SDK").run_sync()
exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
tracers = TracerProvider()
tracers.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(tracers)
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
agent.prompt("after").run_sync()
assert [s.name for s in exporter.get_finished_spans()] == ["chat function", "invoke_agent a"]
names = [m.name for r in reader.get_metrics_data().resource_metrics for s in r.scope_metrics for m in s.metrics]
assert names == ["gen_ai.client.operation.duration"], names
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def test_hookline_exports_instrument_and_uninstrument() -> None:
    assert hookline.instrument is hookline.tracing.instrument
    assert hookline.uninstrument is hookline.tracing.uninstrument
    assert {"instrument", "uninstrument"} <= set(hookline.__all__)


def test_importing_hookline_imports_no_opentelemetry() -> None:
    code = ("import sys, hookline, hookline.tracing\n"
            "loaded = sorted(m for m in sys.modules if m.startswith('opentelemetry'))\n"
            "assert not loaded, loaded\n"
            "assert hookline.tracing.active is None\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
