"""Fixtures for the tracing tests: the real OpenTelemetry SDK, its spans kept in memory.

Every test gets its own `TracerProvider` (never the global one) with an in-memory exporter
behind a synchronous processor, so a span is in `spans()` as soon as it has ended.
Instrumentation is turned off again after each test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer

import hookline.tracing
from hookline.tracing import Instrumentation, instrument

from .spans import Spans


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


@pytest.fixture
def spans(exporter: InMemorySpanExporter) -> Spans:
    return Spans(exporter)


@pytest.fixture
def user_tracer(provider: TracerProvider) -> Tracer:
    """A tracer of the application's own code (tools, the caller), on the same provider."""
    return provider.get_tracer("application")


@pytest.fixture
def traced(provider: TracerProvider) -> Iterator[Instrumentation]:
    """hookline instrumented (without content) for the length of the test."""
    with instrument(provider) as handle:
        yield handle


@pytest.fixture(autouse=True)
def _tracing_off_after() -> Iterator[None]:
    yield
    hookline.tracing.uninstrument()
