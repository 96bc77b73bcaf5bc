"""The GenAI client metrics of model calls, read back from the real SDK's in-memory reader."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

from hookline import Agent, ModelError, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.models.openai import OpenAIModel
from hookline.retry import RetryPolicy
from hookline.testing import FakeOpenAIServer
from hookline.tracing import instrument
from hookline.tracing._metrics import DURATION_BUCKETS, TOKEN_BUCKETS

from .scripts import answer, call, script
from .spans import Spans

pytestmark = pytest.mark.anyio

FAST_RETRY = RetryPolicy(max_attempts=1, timeout=5.0)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture
def reader() -> InMemoryMetricReader:
    return InMemoryMetricReader()


@pytest.fixture
def meters(reader: InMemoryMetricReader) -> Iterator[MeterProvider]:
    """A meter provider of the real SDK (never the global one) whose metrics `reader` reads."""
    provider = MeterProvider(metric_readers=[reader])
    yield provider
    provider.shutdown()


def points(reader: InMemoryMetricReader, name: str) -> list[HistogramDataPoint]:
    """The data points of histogram `name` (none if nothing was recorded in it)."""
    data = reader.get_metrics_data()
    found: list[HistogramDataPoint] = []
    for resource in data.resource_metrics if data is not None else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    found.extend(p for p in metric.data.data_points if isinstance(p, HistogramDataPoint))
    return found


def by_token_type(reader: InMemoryMetricReader) -> dict[Any, HistogramDataPoint]:
    return {dict(p.attributes or {})["gen_ai.token.type"]: p for p in points(reader, "gen_ai.client.token.usage")}


async def test_each_model_call_is_measured(reader: InMemoryMetricReader, meters: MeterProvider,
                                       provider: TracerProvider) -> None:
    with FakeOpenAIServer() as server, instrument(provider, meter_provider=meters):
        server.enqueue_tool_calls([("add", {"a": 2, "b": 3})], input_tokens=11, output_tokens=4)
        server.enqueue_text("5", input_tokens=20, output_tokens=2)
        port = urlsplit(server.url).port
        async with OpenAIModel("gpt-4o-mini", base_url=server.base_url, api_key="test-key", retry=FAST_RETRY) as model:
            await Agent(name="calc", model=model, tools=[add]).prompt("2+3?").session("s-1")

    expected = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini",
                "server.address": "127.0.0.1", "server.port": port}
    (duration,) = points(reader, "gen_ai.client.operation.duration")
    assert dict(duration.attributes or {}) == expected, "low-cardinality attributes only: no session id"
    assert duration.count == 2
    assert 0 < duration.sum < 5
    assert list(duration.explicit_bounds) == DURATION_BUCKETS
    tokens = by_token_type(reader)
    assert {kind: (p.count, p.sum) for kind, p in tokens.items()} == {"input": (2, 31), "output": (2, 6)}
    assert dict(tokens["input"].attributes or {}) == {**expected, "gen_ai.token.type": "input"}
    assert list(tokens["input"].explicit_bounds) == TOKEN_BUCKETS


async def test_a_failed_call_is_measured_with_its_error_type(reader: InMemoryMetricReader,
                                                            meters: MeterProvider) -> None:
    def overloaded(request: ModelRequest) -> ModelResponse:
        raise ModelError("the provider is overloaded", status_code=503, provider="function")

    with instrument(meter_provider=meters), pytest.raises(ModelError):
        await Agent(name="calc", model=FunctionModel(overloaded)).prompt("hi")

    (duration,) = points(reader, "gen_ai.client.operation.duration")
    assert dict(duration.attributes or {}) == {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "function",
                                               "gen_ai.request.model": "function", "error.type": "503"}
    assert points(reader, "gen_ai.client.token.usage") == []


async def test_metrics_alone_need_no_tracer_provider(reader: InMemoryMetricReader, meters: MeterProvider,
                                                     spans: Spans) -> None:
    # No global tracer provider is set in the tests: spans go nowhere, the metrics are still measured
    with instrument(meter_provider=meters):
        await Agent(name="calc", model=script(call("c1", "add", a=1, b=2), answer("3")), tools=[add]).prompt("1+2?")

    assert points(reader, "gen_ai.client.operation.duration")[0].count == 2
    assert {kind: p.sum for kind, p in by_token_type(reader).items()} == {"input": 8, "output": 3}
    assert spans.all == ()


async def test_a_model_that_reports_no_usage_records_no_tokens(reader: InMemoryMetricReader,
                                                               meters: MeterProvider) -> None:
    with instrument(meter_provider=meters):
        await Agent(name="a", model=script(ModelResponse(text="hi"))).prompt("hi")

    assert points(reader, "gen_ai.client.operation.duration")[0].count == 1
    assert points(reader, "gen_ai.client.token.usage") == []
