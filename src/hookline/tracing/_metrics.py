"""The GenAI client metrics of model calls: `gen_ai.client.operation.duration` and `gen_ai.client.token.usage`.

Both are histograms with the bucket boundaries the conventions advise, and with only the
low-cardinality attributes they list (operation, provider, request and response model,
server address and port, and `error.type` on a failed call's duration): never a session
id or a setting.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from hookline._version import __version__

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.util.types import AttributeValue

    from hookline.messages import ToolCallPart, ToolResultPart
    from hookline.models import Model, ModelRequest, ModelResponse
    from hookline.result import RunResult
    from hookline.tools import Tool
    from hookline.usage import Usage

__all__ = ["DURATION_BUCKETS", "TOKEN_BUCKETS", "TOKEN_TYPE", "GenAIMetrics", "MeasuredRun"]

TOKEN_TYPE = "gen_ai.token.type"

DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
"""Seconds: the conventions' advice for `gen_ai.client.operation.duration`."""

TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]
"""Tokens: the conventions' advice for `gen_ai.client.token.usage`."""


class GenAIMetrics:
    """The two histograms, made once per `instrument()`.

    Args:
        meter_provider: Where the measurements go.
    """

    __slots__ = ("duration", "tokens")

    def __init__(self, meter_provider: MeterProvider) -> None:
        meter = meter_provider.get_meter("hookline", __version__)
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS)
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS)

    def record(self, attributes: dict[str, AttributeValue], seconds: float, usage: Usage | None) -> None:
        """One model call: how long it took, and the tokens it used when the provider counted them."""
        self.duration.record(seconds, attributes)
        if usage is not None:
            self.tokens.record(usage.input_tokens, {**attributes, TOKEN_TYPE: "input"})
            self.tokens.record(usage.output_tokens, {**attributes, TOKEN_TYPE: "output"})


class MeasuredRun:
    """A run measured without spans (a meter provider records, no tracer provider does): only its model calls.

    Args:
        measure: Records one model call (`GenAIRunTrace.measure`'s job, shared).
    """

    __slots__ = ("_measure",)

    def __init__(self, measure: Callable[[Model, float, ModelResponse | None, BaseException | None], None]) -> None:
        self._measure = measure

    async def run(self, execute: Callable[[], Awaitable[RunResult]]) -> RunResult:
        """Run the run as it is."""
        return await execute()

    async def chat(self, model: Model, request: ModelRequest, ask: Callable[[ModelRequest], Awaitable[ModelResponse]],
                   *, stream: bool) -> ModelResponse:
        """Make one model call, and measure it."""
        started = time.perf_counter()
        try:
            response = await ask(request)
        except BaseException as exc:
            self._measure(model, started, None, exc)
            raise
        self._measure(model, started, response, None)
        return response

    async def tool(self, call: ToolCallPart, tool: Tool | None, answer: Callable[[], Awaitable[ToolResultPart]]
                   ) -> ToolResultPart:
        """Run one tool call as it is."""
        return await answer()
