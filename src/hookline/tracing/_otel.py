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
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from hookline._version import __version__
from hookline.errors import MaxTurnsExceeded, ModelError
from hookline.tools import to_content
from hookline.tracing import _content

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import TracerProvider

    from hookline.agent_spec import AgentSpec as Agent
    from hookline.messages import Message, ToolCallPart, ToolResultPart
    from hookline.models import Model, ModelRequest, ModelResponse
    from hookline.result import RunResult
    from hookline.tools import Tool

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

Attributes = dict[str, AttributeValue]


class GenAITracing:
    """Makes each run a tree of GenAI spans.

    Args:
        tracer_provider: Where spans go; None: `trace.get_tracer_provider()` (read now).
        include_content: Also record prompts, answers, tool arguments and results.
    """

    __slots__ = ("include_content", "tracer")

    def __init__(self, tracer_provider: TracerProvider | None, *, include_content: bool) -> None:
        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        self.tracer = provider.get_tracer("hookline", __version__)
        self.include_content = include_content

    def for_run(self, agent: Agent, session_id: str | None, prompt: Message | None) -> GenAIRunTrace:
        """The trace of one run about to start."""
        return GenAIRunTrace(self, agent, session_id, prompt)


class GenAIRunTrace:
    """The spans of one run: `invoke_agent` around it, `chat` and `execute_tool` under it."""

    __slots__ = ("_agent", "_content", "_context", "_prompt", "_session_id", "_tracer")

    def __init__(self, tracing: GenAITracing, agent: Agent, session_id: str | None, prompt: Message | None) -> None:
        self._tracer = tracing.tracer
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
        """Make one model call inside a `chat {model}` span (kind CLIENT)."""
        span = self._tracer.start_span(f"chat {model.name}", context=self._context, kind=SpanKind.CLIENT,
                                       attributes=self._chat_attributes(model, request, stream))
        if self._content and span.is_recording():
            span.set_attributes(_content.request_content(request))
        token = otel_context.attach(trace.set_span_in_context(span, self._context))
        try:
            response = await ask(request)
        except BaseException as exc:
            _record_error(span, exc)
            raise
        else:
            if span.is_recording():
                self._record_response(span, response)
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

    def _chat_attributes(self, model: Model, request: ModelRequest, stream: bool) -> Attributes:
        attributes: Attributes = {OPERATION: "chat", PROVIDER: model.provider or "_OTHER",
                                  REQUEST_MODEL: model.name, "gen_ai.request.stream": stream}
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
        usage = response.usage
        attributes: Attributes = {INPUT_TOKENS: usage.input_tokens, OUTPUT_TOKENS: usage.output_tokens}
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
            INPUT_TOKENS: usage.input_tokens, OUTPUT_TOKENS: usage.output_tokens,
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


def _record_error(span: Span, error: BaseException) -> None:
    """Mark `span` as ended by `error` (the Recording Errors convention)."""
    if isinstance(error, asyncio.CancelledError):  # how the work stopped, not a failure of it: no stack trace
        span.set_attribute(ERROR_TYPE, "cancelled")
        span.set_status(Status(StatusCode.ERROR, "cancelled"))
        return
    span.record_exception(error)
    span.set_attribute(ERROR_TYPE, _error_type(error))
    span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))


def _error_type(error: BaseException) -> str:
    """The provider's HTTP status for a `ModelError` that has one (e.g. "429"), else the exception's class."""
    if isinstance(error, ModelError) and error.status_code is not None:
        return str(error.status_code)
    return type(error).__qualname__


def _is_attribute(value: Any) -> bool:
    if isinstance(value, bool | int | float | str):
        return True
    return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
