"""OpenTelemetry traces and metrics of runs, named after the GenAI semantic conventions.

```python
import hookline
from opentelemetry.sdk.trace import TracerProvider

provider = TracerProvider()                         # with your exporter's span processor
handle = hookline.instrument(tracer_provider=provider)
...                                                 # every run now emits spans
handle.uninstrument()                               # or hookline.uninstrument()
```

Each run is an `invoke_agent {agent}` span; under it, each model call is a `chat {model}`
span (kind CLIENT) and each tool call an `execute_tool {tool}` span, with `gen_ai.*`
attributes (see docs/tracing.md). A span a tool starts is a child of its `execute_tool`.
Each model call also goes into the `gen_ai.client.operation.duration` and
`gen_ai.client.token.usage` histograms.

The loop reports to `active`, which stays None until `instrument()` is called: when tracing
is off, its whole cost is one check of that attribute per run, model call and tool turn.
When it is on but neither provider records anything (no SDK configured), `for_run` answers
None and the run goes as if tracing were off. Nothing here imports OpenTelemetry before
`instrument()` is called, so importing hookline needs no `opentelemetry` package.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from hookline.agent_spec import AgentSpec as Agent
    from hookline.messages import Message, ToolCallPart, ToolResultPart
    from hookline.models import Model, ModelRequest, ModelResponse
    from hookline.result import RunResult
    from hookline.tools import Tool

__all__ = ["Instrumentation", "RunTrace", "Tracing", "instrument", "uninstrument"]


class RunTrace(Protocol):
    """One run as a tracer sees it: the loop wraps the run, each model call and each tool call in it.

    Each method awaits the work it is given and returns what that returned (or raises what
    it raised), so that the tracer opens and closes its span around the work in one place.
    """

    async def run(self, execute: Callable[[], Awaitable[RunResult]]) -> RunResult:
        """Run the whole run (`execute`) inside the run's span."""

    async def chat(
        self,
        model: Model,
        request: ModelRequest,
        ask: Callable[[ModelRequest], Awaitable[ModelResponse]],
        *,
        stream: bool,
    ) -> ModelResponse:
        """Make one model call (`ask(request)`) inside a span of its own; `stream`: whether it streams."""

    async def tool(
        self, call: ToolCallPart, tool: Tool | None, answer: Callable[[], Awaitable[ToolResultPart]]
    ) -> ToolResultPart:
        """Run one tool call (`answer()`) inside a span of its own; `tool` is None for an unknown name."""


class Tracing(Protocol):
    """What the loop reports runs to while instrumentation is on (`active`)."""

    def for_run(self, agent: Agent, session_id: str | None, prompt: Message | None) -> RunTrace | None:
        """The trace of one run about to start (`prompt` is None for a resumption); None: nothing would record it."""


active: Tracing | None = None
"""The tracing the loop reports to, or None (tracing off). Set by `instrument()`."""


class Instrumentation:
    """What `instrument()` turned on; `uninstrument()`, or the end of its `with` block, turns it off.

    Args:
        tracing: The tracing it made active.
    """

    __slots__ = ("tracing",)

    def __init__(self, tracing: Tracing) -> None:
        self.tracing = tracing

    def uninstrument(self) -> None:
        """Stop tracing new runs, unless a later `instrument()` replaced this one (runs under way finish)."""
        global active
        if active is self.tracing:
            active = None

    def __enter__(self) -> Instrumentation:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.uninstrument()


def instrument(
    tracer_provider: TracerProvider | None = None,
    *,
    meter_provider: MeterProvider | None = None,
    include_content: bool = False,
) -> Instrumentation:
    """Make every run from now on emit OpenTelemetry spans and metrics (GenAI semantic conventions).

    The global providers are never set. A later call replaces this one. While neither
    provider records anything (both are the global ones and the application has set
    neither yet, or both are the API's no-op ones), runs cost what they cost untraced.

    Args:
        tracer_provider: Where spans go; None uses `opentelemetry.trace.get_tracer_provider()`,
            read now (a proxy that follows the global provider once it is set).
        meter_provider: Where the `gen_ai.client.*` metrics go; None uses
            `opentelemetry.metrics.get_meter_provider()`, read now, likewise.
        include_content: Also record prompts, answers, instructions, tool definitions, tool
            arguments and results (`gen_ai.input.messages`, ...). Off by default: they may hold
            personal or secret data, and they are large.

    Returns:
        A handle whose `uninstrument()` turns tracing off again; it is also a context manager.

    Raises:
        ImportError: `opentelemetry-api` is not installed; the message says how to install it.
    """
    global active
    try:
        from hookline.tracing._otel import GenAITracing
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ImportError("hookline.instrument() needs OpenTelemetry: pip install 'hookline[otel]'") from exc
    tracing = GenAITracing(tracer_provider, meter_provider, include_content=include_content)
    active = tracing
    return Instrumentation(tracing)


def uninstrument() -> None:
    """Stop tracing new runs (runs under way finish their spans)."""
    global active
    active = None
