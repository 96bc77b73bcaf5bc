"""Fixtures for the tracing tests: the real OpenTelemetry SDK, its spans kept in memory.

Every test gets its own `TracerProvider` (never the global one) with an in-memory exporter
behind a synchronous processor, so a span is in `spans()` as soon as it has ended.
Instrumentation is turned off again after each test.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer

import hookline.tracing
from hookline import ToolCallPart
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.tracing import Instrumentation, instrument
from hookline.usage import Usage

CONTENT_KEYS = {
    "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.tool.definitions",
    "gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
}
"""The attributes that hold conversation content (recorded only with `include_content=True`)."""


class Spans:
    """The finished spans of a test, with ways to find them."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        self.exporter = exporter

    @property
    def all(self) -> Sequence[ReadableSpan]:
        return self.exporter.get_finished_spans()

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.all if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, f"expected one span {name!r}, got {[s.name for s in self.all]}"
        return found[0]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        return [s for s in self.all if s.parent is not None and s.parent.span_id == parent.context.span_id]

    def parent_of(self, span: ReadableSpan) -> ReadableSpan | None:
        if span.parent is None:
            return None
        return next((s for s in self.all if s.context.span_id == span.parent.span_id), None)


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


def script(*steps: ModelResponse) -> FunctionModel:
    """A model answering with `steps` in order, whatever it is asked."""
    answers = list(steps)

    def next_answer(request: ModelRequest) -> ModelResponse:
        assert answers, "the model was called more often than scripted"
        return answers.pop(0)

    return FunctionModel(next_answer)


def call(call_id: str, name: str, /, **arguments: Any) -> ModelResponse:
    """A model answer holding one tool call (3 input and 2 output tokens)."""
    return ModelResponse(tool_calls=[ToolCallPart(id=call_id, name=name, arguments=arguments)],
                         usage=Usage(input_tokens=3, output_tokens=2), model_name="scripted-1")


def answer(text: str) -> ModelResponse:
    """A final text answer (5 input and 1 output tokens)."""
    return ModelResponse(text=text, usage=Usage(input_tokens=5, output_tokens=1), model_name="scripted-1")
