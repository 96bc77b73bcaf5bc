"""The OpenTelemetry side of `hookline.tracing`: spans and their `gen_ai.*` attributes.

Every span is started with an explicit parent (the run's span, itself a child of whatever
was current when the run started), so the trace's shape never depends on what is current
at the time. Each span is also made current (`context.attach`) while its work runs, and
detached in the same coroutine: a span a tool or an HTTP client starts nests under it, and
nothing leaks into the caller, even when a streamed run is closed early (the run's work
runs in coroutines, never across an async generator's `yield`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry import metrics, trace
from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.metrics._internal import _ProxyMeterProvider  # the global meter provider while none is set
from opentelemetry.trace import NoOpTracerProvider, ProxyTracerProvider, Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from hookline._version import __version__
from hookline.errors import MaxTurnsExceeded, ModelError
from hookline.tools import to_content
from hookline.tracing import _content
from hookline.tracing._metrics import GenAIMetrics, MeasuredRun

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from hookline.agent_spec import AgentSpec as Agent
    from hookline.messages import Message, ToolCallPart, ToolResultPart
    from hookline.models import Model, ModelRequest, ModelResponse
    from hookline.result import RunResult
    from hookline.tools import Tool
    from hookline.usage import Usage

__all__ = ["GenAIRunTrace", "GenAITracing"]

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"

_SETTINGS = {
    "temperature": "gen_ai.request.temperature",
    "max_tokens": "gen_ai.request.max_tokens",
    "top_p": "gen_ai.request.top_p",
    "top_k": "gen_ai.request.top_k",
    "seed": "gen_ai.request.seed",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "stop": "gen_ai.request.stop_sequences",
}
"""Request settings recorded on `chat` spans: the setting's name, then its attribute."""

_FINISH_KEYS = ("finish_reason", "stop_reason")
"""Where the adapters put the provider's finish reason in `ModelResponse.metadata`."""

_DEFAULT_PORTS = {"https": 443, "http": 80}

Attributes = dict[str, AttributeValue]


class GenAITracing:
    """Makes each run a tree of GenAI spans, and each model call GenAI metrics.

    A run gets no trace at all while neither provider records anything: both are the API's
    no-op ones, or the global ones of an application that has not set any yet (checked at
    each run, so one set later is followed).

    Args:
        tracer_provider: Where spans go; None: `trace.get_tracer_provider()` (read now).
        meter_provider: Where metrics go; None: `metrics.get_meter_provider()` (read now).
        include_content: Also record prompts, answers, tool arguments and results.
    """

    __slots__ = ("_meters_set", "_servers", "_tracers_set", "include_content", "metrics", "tracer")

    def __init__(self, tracer_provider: TracerProvider | None, meter_provider: MeterProvider | None, *,
                 include_content: bool) -> None:
        tracers = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        meters = meter_provider if meter_provider is not None else metrics.get_meter_provider()
        self.tracer = tracers.get_tracer("hookline", __version__)
        self.metrics = GenAIMetrics(meters)
        self.include_content = include_content
        self._tracers_set = _Configured(tracers, ProxyTracerProvider, NoOpTracerProvider, trace.get_tracer_provider)
        self._meters_set = _Configured(meters, _ProxyMeterProvider, NoOpMeterProvider, metrics.get_meter_provider)
        self._servers: dict[str, Attributes] = {}

    def for_run(self, agent: Agent, session_id: str | None, prompt: Message | None
                ) -> GenAIRunTrace | MeasuredRun | None:
        """The trace of one run about to start: spans (and metrics), metrics alone, or None when nothing records."""
        measured = self._meters_set()
        if self._tracers_set():
            return GenAIRunTrace(self, agent, session_id, prompt, measured=measured)
        return MeasuredRun(self.measure) if measured else None

    def measure(self, model: Model, started: float, response: ModelResponse | None,
                error: BaseException | None) -> None:
        """Record one model call, begun at `perf_counter()` `started`, in the metrics."""
        attributes: Attributes = {OPERATION: "chat", PROVIDER: model.provider or "_OTHER", REQUEST_MODEL: model.name,
                                  **self.server_of(model)}
        if response is not None and response.model_name:
            attributes[RESPONSE_MODEL] = response.model_name
        if error is not None:
            attributes[ERROR_TYPE] = _error_type(error)
        usage = response.usage if response is not None and _reported(response.usage) else None
        self.metrics.record(attributes, time.perf_counter() - started, usage)

    def server_of(self, model: Model) -> Attributes:
        """`server.address` and `server.port` of the model's API (none for a model in process), parsed once per URL."""
        url = model.base_url
        if not url:
            return {}
        known = self._servers.get(url)
        if known is None:
            known = _server_attributes(url)
            if len(self._servers) < _SERVERS_KEPT:
                self._servers[url] = known
        return known


_SERVERS_KEPT = 64
"""Base URLs whose attributes are kept (a program talks to a handful of providers)."""


class _Configured:
    """Whether a tracer or meter provider records anything, asked at each run.

    The API's no-op provider never does. The global provider's stand-in (the proxy handed
    out before the application sets one) does once the application sets one, and from then
    on for good (a global provider is set only once).

    Args:
        provider: The provider in use.
        proxy: The API's class of the stand-in.
        noop: The API's class of the no-op provider.
        current: The API's getter of the global provider.
    """

    __slots__ = ("_current", "_proxy", "known")

    def __init__(self, provider: object, proxy: type, noop: type, current: Callable[[], object]) -> None:
        self._proxy = provider if isinstance(provider, proxy) else None
        self._current = current
        self.known = self._proxy is None and not isinstance(provider, noop)

    def __call__(self) -> bool:
        if not self.known and self._proxy is not None and self._current() is not self._proxy:
            self.known = True
        return self.known


def _server_attributes(url: str) -> Attributes:
    parts = urlsplit(url)
    if not parts.hostname:
        return {}
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:  # a port out of range: the host alone
        port = None
    return {SERVER_ADDRESS: parts.hostname, SERVER_PORT: port} if port else {SERVER_ADDRESS: parts.hostname}


class GenAIRunTrace:
    """The spans of one run: `invoke_agent` around it, `chat` and `execute_tool` under it."""

    __slots__ = ("_agent", "_content", "_context", "_measured", "_prompt", "_session_id", "_tracer", "_tracing")

    def __init__(self, tracing: GenAITracing, agent: Agent, session_id: str | None, prompt: Message | None, *,
                 measured: bool) -> None:
        self._tracing = tracing
        self._tracer = tracing.tracer
        self._measured = measured
        self._content = tracing.include_content
        self._agent = agent
        self._session_id = session_id
        self._prompt = prompt
        self._context: Context | None = None

    async def run(self, execute: Callable[[], Awaitable[RunResult]]) -> RunResult:
        """Run `execute()` inside an `invoke_agent {agent}` span (kind INTERNAL: the agent runs in-process)."""
        agent = self._agent
        parent = otel_context.get_current()
        span = self._tracer.start_span(f"invoke_agent {agent.name}", context=parent, kind=SpanKind.INTERNAL,
                                       attributes=self._run_attributes())
        if self._content and span.is_recording() and self._prompt is not None:
            instructions = agent.instructions if isinstance(agent.instructions, str) else None
            span.set_attributes(_content.run_input(self._prompt, instructions))
        self._context = trace.set_span_in_context(span, parent)
        token = otel_context.attach(self._context)
        try:
            result = await execute()
        except BaseException as exc:
            if isinstance(exc, MaxTurnsExceeded):  # it carries the run's result
                self._record_result(span, exc.result)
            _record_error(span, exc)
            raise
        else:
            self._record_result(span, result)
            return result
        finally:
            otel_context.detach(token)
            span.end()

    async def chat(
        self,
        model: Model,
        request: ModelRequest,
        ask: Callable[[ModelRequest], Awaitable[ModelResponse]],
        *,
        stream: bool,
    ) -> ModelResponse:
        """Make one model call inside a `chat {model}` span (kind CLIENT), and measure it."""
        server = self._tracing.server_of(model)
        span = self._tracer.start_span(f"chat {model.name}", context=self._context, kind=SpanKind.CLIENT,
                                       attributes=self._chat_attributes(model, request, stream, server))
        if self._content and span.is_recording():
            span.set_attributes(_content.request_content(request))
        token = otel_context.attach(trace.set_span_in_context(span, self._context))
        started = time.perf_counter()
        try:
            response = await ask(request)
        except BaseException as exc:
            _record_error(span, exc)
            if self._measured:
                self._tracing.measure(model, started, None, exc)
            raise
        else:
            if span.is_recording():
                self._record_response(span, response)
            if self._measured:
                self._tracing.measure(model, started, response, None)
            return response
        finally:
            otel_context.detach(token)
            span.end()

    async def tool(
        self, call: ToolCallPart, tool: Tool | None, answer: Callable[[], Awaitable[ToolResultPart]]
    ) -> ToolResultPart:
        """Run one tool call inside an `execute_tool {tool}` span (kind INTERNAL), current while it runs."""
        attributes: Attributes = {OPERATION: "execute_tool", TOOL_NAME: call.name, TOOL_CALL_ID: call.id,
                                  TOOL_TYPE: "function"}
        if tool is not None and tool.description:
            attributes[TOOL_DESCRIPTION] = tool.description
        if self._content:
            arguments = call.arguments
            attributes[TOOL_ARGUMENTS] = arguments if isinstance(arguments, str) else _content.to_json(arguments)
        span = self._tracer.start_span(f"execute_tool {call.name}", context=self._context, kind=SpanKind.INTERNAL,
                                       attributes=attributes)
        token = otel_context.attach(trace.set_span_in_context(span, self._context))
        try:
            result = await answer()
        except BaseException as exc:
            _record_error(span, exc)
            raise
        else:
            self._record_tool_result(span, result, known=tool is not None)
            return result
        finally:
            otel_context.detach(token)
            span.end()

    # -- attributes ------------------------------------------------------------------------

    def _run_attributes(self) -> Attributes:
        agent = self._agent
        attributes: Attributes = {OPERATION: "invoke_agent", AGENT_NAME: agent.name}
        try:
            model = agent.model
        except Exception:  # an unresolvable model fails the run where it always did, later
            model = None
        if model is not None:
            attributes[PROVIDER] = model.provider or "_OTHER"
            attributes[REQUEST_MODEL] = model.name
        if self._session_id is not None:
            attributes[CONVERSATION_ID] = self._session_id
        return attributes

    def _chat_attributes(self, model: Model, request: ModelRequest, stream: bool, server: Attributes) -> Attributes:
        attributes: Attributes = {OPERATION: "chat", PROVIDER: model.provider or "_OTHER",
                                  REQUEST_MODEL: model.name, "gen_ai.request.stream": stream, **server}
        if self._session_id is not None:
            attributes[CONVERSATION_ID] = self._session_id
        if request.output_schema is not None:
            attributes["gen_ai.output.type"] = "json"
        settings: dict[str, Any] = getattr(model, "settings", None) or {}
        given = request.model_settings.given()  # the adapters lay these over the others
        if request.settings or given:
            settings = {**settings, **request.settings, **given}
        for key, value in settings.items():
            name = _SETTINGS.get(key)
            if name is not None and _is_attribute(value):
                attributes[name] = [value] if key == "stop" and isinstance(value, str) else value
        return attributes

    def _record_response(self, span: Span, response: ModelResponse) -> None:
        attributes = _token_attributes(response.usage)
        if response.model_name:
            attributes[RESPONSE_MODEL] = response.model_name
        metadata = response.metadata
        if isinstance(metadata.get("id"), str):
            attributes[RESPONSE_ID] = metadata["id"]
        reasons = [str(metadata[key]) for key in _FINISH_KEYS if metadata.get(key)]
        if reasons:
            attributes[FINISH_REASONS] = reasons
        if self._content:
            attributes[OUTPUT_MESSAGES] = _content.response_content(response)
        span.set_attributes(attributes)

    def _record_result(self, span: Span, result: RunResult) -> None:
        if not span.is_recording():
            return
        usage = result.usage
        span.set_attributes({
            **_token_attributes(usage),
            "hookline.run.stop_reason": result.stop_reason, "hookline.run.model_calls": usage.model_calls,
            "hookline.run.tool_calls": usage.tool_calls,
        })
        if self._content and result.stop_reason == "completed":
            span.set_attribute(OUTPUT_MESSAGES, _content.run_output(to_content(result.output)))

    def _record_tool_result(self, span: Span, result: ToolResultPart, *, known: bool) -> None:
        if not result.is_error:
            if self._content:
                span.set_attribute(TOOL_RESULT, result.content)
            return
        span.set_attribute(ERROR_TYPE, "tool_error" if known else "unknown_tool")
        # the error text can quote the arguments: it is content, recorded only when content is
        span.set_status(Status(StatusCode.ERROR, result.content if self._content else "the tool call failed"))


def _reported(usage: Usage) -> bool:
    """Whether the provider counted tokens: a model that reports none leaves both counts at 0."""
    return bool(usage.input_tokens or usage.output_tokens)


def _token_attributes(usage: Usage) -> Attributes:
    """The token counts, or nothing when the model reported none (not a count of 0)."""
    if not _reported(usage):
        return {}
    return {INPUT_TOKENS: usage.input_tokens, OUTPUT_TOKENS: usage.output_tokens}


def _record_error(span: Span, error: BaseException) -> None:
    """Mark `span` as ended by `error` (the Recording Errors convention)."""
    if isinstance(error, asyncio.CancelledError):  # how the work stopped, not a failure of it: no stack trace
        span.set_attribute(ERROR_TYPE, _error_type(error))
        span.set_status(Status(StatusCode.ERROR, "cancelled"))
        return
    span.record_exception(error)
    span.set_attribute(ERROR_TYPE, _error_type(error))
    span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))


def _error_type(error: BaseException) -> str:
    """A `ModelError`'s HTTP status when it has one (e.g. "429"), `cancelled`, or the exception's class."""
    if isinstance(error, asyncio.CancelledError):
        return "cancelled"
    if isinstance(error, ModelError) and error.status_code is not None:
        return str(error.status_code)
    return type(error).__qualname__


def _is_attribute(value: Any) -> bool:
    if isinstance(value, bool | int | float | str):
        return True
    return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
