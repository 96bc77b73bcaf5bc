"""Turning tracing on and off: `instrument()`, its handle, `uninstrument()`, and what they never touch."""

from __future__ import annotations

import subprocess
import sys

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

import hookline
import hookline.tracing
from hookline import Agent
from hookline.tracing import instrument, uninstrument

from .scripts import answer, script
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
