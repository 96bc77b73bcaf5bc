"""The spans of a run: names, kinds, their tree, `gen_ai.*` attributes and errors on them."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes
from opentelemetry.trace import SpanKind, StatusCode

from hookline import Agent, MaxTurnsExceeded, ModelError, ToolCallPart, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.models.openai import OpenAIModel
from hookline.retry import RetryPolicy
from hookline.testing import FakeOpenAIServer
from hookline.tracing import Instrumentation, instrument

from .scripts import answer, call, script
from .spans import Spans

pytestmark = pytest.mark.anyio

FAST_RETRY = RetryPolicy(max_attempts=2, initial_delay=0.01, max_delay=0.05, max_total_time=10.0, timeout=5.0)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def broken(a: int) -> int:
    """Always fails."""
    raise RuntimeError(f"no luck with {a}")


async def test_a_run_is_an_agent_span_over_chat_and_tool_spans(traced: Instrumentation, spans: Spans) -> None:
    agent = Agent(name="calc", model=script(call("c1", "add", a=2, b=3), answer("5")), tools=[add])
    assert (await agent.prompt("2+3?")).output == "5"

    run = spans.one("invoke_agent calc")
    chats = spans.named("chat function")
    tool_span = spans.one("execute_tool add")
    assert run.kind is SpanKind.INTERNAL
    assert run.parent is None
    assert [c.kind for c in chats] == [SpanKind.CLIENT, SpanKind.CLIENT]
    assert tool_span.kind is SpanKind.INTERNAL
    assert spans.children(run) == [chats[0], tool_span, chats[1]]  # in the order they ended
    assert {s.context.trace_id for s in spans.all} == {run.context.trace_id}
    assert all(s.status.status_code is StatusCode.UNSET for s in spans.all)


async def test_gen_ai_attributes_of_each_span(traced: Instrumentation, spans: Spans) -> None:
    agent = Agent(name="calc", model=script(call("c1", "add", a=2, b=3), answer("5")), tools=[add])
    await agent.prompt("2+3?")

    run, tool_span = spans.one("invoke_agent calc"), spans.one("execute_tool add")
    first, second = spans.named("chat function")
    assert dict(run.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "calc", "gen_ai.provider.name": "function",
        "gen_ai.request.model": "function", "gen_ai.usage.input_tokens": 8, "gen_ai.usage.output_tokens": 3,
        "hookline.run.stop_reason": "completed", "hookline.run.model_calls": 2, "hookline.run.tool_calls": 1,
    }
    assert dict(first.attributes or {}) == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "function", "gen_ai.request.model": "function",
        "gen_ai.request.stream": False, "gen_ai.response.model": "scripted-1",
        "gen_ai.usage.input_tokens": 3, "gen_ai.usage.output_tokens": 2,
    }
    assert (second.attributes or {})["gen_ai.usage.input_tokens"] == 5
    assert dict(tool_span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add", "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.type": "function", "gen_ai.tool.description": "Add two integers.",
    }


async def test_the_session_id_is_the_conversation_id(traced: Instrumentation, spans: Spans) -> None:
    agent = Agent(name="calc", model=script(call("c1", "add", a=1, b=1), answer("2")), tools=[add])
    await agent.prompt("1+1?").session("s-42")

    for span in (spans.one("invoke_agent calc"), *spans.named("chat function")):
        assert (span.attributes or {})["gen_ai.conversation.id"] == "s-42"


async def test_openai_adapter_names_its_provider_model_and_response(traced: Instrumentation, spans: Spans) -> None:
    with FakeOpenAIServer() as server:
        server.enqueue_tool_calls([("add", {"a": 2, "b": 3})], input_tokens=11, output_tokens=4)
        server.enqueue_text("5", input_tokens=20, output_tokens=2)
        port = urlsplit(server.url).port
        async with OpenAIModel("gpt-4o-mini", base_url=server.base_url, api_key="test-key", retry=FAST_RETRY,
                               settings={"temperature": 0, "max_tokens": 64, "stop": "END", "seed": 7,
                                         "logit_bias": {"1": 2}}) as model:
            await Agent(name="calc", model=model, tools=[add]).prompt("2+3?")
        server.assert_complete()

    run = spans.one("invoke_agent calc")
    first, second = spans.named("chat gpt-4o-mini")
    assert (run.attributes or {})["gen_ai.provider.name"] == "openai"
    assert (run.attributes or {})["gen_ai.usage.input_tokens"] == 31
    attributes = first.attributes or {}
    assert attributes["gen_ai.provider.name"] == "openai"
    assert attributes["gen_ai.request.model"] == "gpt-4o-mini"
    assert attributes["gen_ai.response.model"] == "gpt-4o-mini"
    assert attributes["gen_ai.response.id"] == "chatcmpl-fake"
    assert tuple(attributes["gen_ai.response.finish_reasons"]) == ("tool_calls",)  # type: ignore[arg-type]
    assert attributes["gen_ai.request.temperature"] == 0
    assert (attributes["gen_ai.request.max_tokens"], attributes["gen_ai.request.seed"]) == (64, 7)
    assert tuple(attributes["gen_ai.request.stop_sequences"]) == ("END",)  # type: ignore[arg-type]
    assert not any("logit" in key for key in attributes)  # settings without a convention are left out
    assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == (11, 4)
    assert tuple((second.attributes or {})["gen_ai.response.finish_reasons"]) == ("stop",)  # type: ignore[arg-type]
    assert (attributes["server.address"], attributes["server.port"]) == ("127.0.0.1", port)


@pytest.mark.parametrize(("base_url", "server"), [
    ("https://api.example.com/v1", {"server.address": "api.example.com", "server.port": 443}),
    ("http://[::1]:8080/v1", {"server.address": "::1", "server.port": 8080}),
])
async def test_the_server_of_a_remote_model_is_on_its_chat_spans(
        traced: Instrumentation, spans: Spans, base_url: str, server: dict[str, object]) -> None:
    model = script(answer("hi"))
    model.base_url = base_url  # where a FunctionModel standing for a remote one says it listens
    await Agent(name="a", model=model).prompt("hi")

    attributes = dict(spans.one("chat function").attributes or {})
    assert {k: v for k, v in attributes.items() if k.startswith("server.")} == server
    assert not any(k.startswith("server.") for k in spans.one("invoke_agent a").attributes or {})


async def test_a_model_that_reports_no_usage_gets_no_token_counts(traced: Instrumentation, spans: Spans) -> None:
    await Agent(name="a", model=script(ModelResponse(text="hi"))).prompt("hi")

    for span in (spans.one("chat function"), spans.one("invoke_agent a")):
        assert not any(key.startswith("gen_ai.usage.") for key in span.attributes or {}), span.name


async def test_every_gen_ai_attribute_is_one_of_the_conventions(provider: TracerProvider, spans: Spans) -> None:
    # hookline's own attributes are `hookline.*`: the `gen_ai` namespace is the conventions' alone
    with FakeOpenAIServer() as server, instrument(provider, include_content=True):
        server.enqueue_tool_calls([("add", {"a": 2, "b": 3}), ("broken", {"a": 1})], input_tokens=11, output_tokens=4)
        server.enqueue_error(500, message="down")
        async with OpenAIModel("gpt-4o-mini", base_url=server.base_url, api_key="test-key", retry=FAST_RETRY,
                               settings={"temperature": 0, "top_p": 1, "max_tokens": 64, "stop": ["END"], "seed": 7,
                                         "frequency_penalty": 0, "presence_penalty": 0}) as model:
            agent = Agent(name="calc", model=model, tools=[add, broken], instructions="Add.")
            with pytest.raises(ModelError):
                await agent.prompt("2+3?").session("s-1")

    registry = {value for name, value in vars(gen_ai_attributes).items() if name.startswith("GEN_AI_")}
    used = {key for span in spans.all for key in span.attributes or {}}
    assert {key for key in used if key.startswith("gen_ai.")} - registry == set()
    assert {key for key in used if not key.startswith(("gen_ai.", "hookline."))} == {
        "error.type", "server.address", "server.port"}


async def test_a_streamed_run_has_the_same_spans_marked_streaming(traced: Instrumentation, spans: Spans) -> None:
    with FakeOpenAIServer() as server:
        server.enqueue_tool_calls([("add", {"a": 2, "b": 3})])
        server.enqueue_text("five")
        async with OpenAIModel("gpt-4o-mini", base_url=server.base_url, api_key="test-key", retry=FAST_RETRY) as model:
            request = Agent(name="calc", model=model, tools=[add]).prompt("2+3?")
            deltas = [e for e in [event async for event in request.stream()] if e.kind == "delta"]
        server.assert_complete()

    assert deltas
    run = spans.one("invoke_agent calc")
    chats = spans.named("chat gpt-4o-mini")
    assert [(c.attributes or {})["gen_ai.request.stream"] for c in chats] == [True, True]
    assert [spans.parent_of(s) for s in (*chats, spans.one("execute_tool add"))] == [run, run, run]
    assert (chats[1].attributes or {})["gen_ai.usage.output_tokens"] == 5


async def test_a_failing_model_marks_its_chat_span_and_the_run_span(traced: Instrumentation, spans: Spans) -> None:
    def overloaded(request: ModelRequest) -> ModelResponse:
        raise ModelError("the provider is overloaded", status_code=503, provider="function")

    with pytest.raises(ModelError):
        await Agent(name="calc", model=FunctionModel(overloaded)).prompt("hi")

    chat, run = spans.one("chat function"), spans.one("invoke_agent calc")
    for span in (chat, run):
        assert span.status.status_code is StatusCode.ERROR
        assert "overloaded" in (span.status.description or "")
        assert (span.attributes or {})["error.type"] == "503"
        [event] = [e for e in span.events if e.name == "exception"]
        assert (event.attributes or {})["exception.type"].endswith("ModelError")  # type: ignore[union-attr]


async def test_a_model_error_from_the_wire_is_typed_by_its_status(traced: Instrumentation, spans: Spans) -> None:
    with FakeOpenAIServer() as server:
        server.enqueue_error(400, message="bad request: no such model")
        async with OpenAIModel("gpt-4o-mini", base_url=server.base_url, api_key="test-key", retry=FAST_RETRY) as model:
            with pytest.raises(ModelError):
                await Agent(name="calc", model=model).prompt("hi")
        server.assert_complete()

    chat = spans.one("chat gpt-4o-mini")
    assert chat.status.status_code is StatusCode.ERROR
    assert (chat.attributes or {})["error.type"] == "400"


async def test_an_exception_without_status_is_typed_by_its_class(traced: Instrumentation, spans: Spans) -> None:
    def buggy(request: ModelRequest) -> ModelResponse:
        raise KeyError("choices")

    with pytest.raises(KeyError):
        await Agent(name="calc", model=FunctionModel(buggy)).prompt("hi")

    assert (spans.one("chat function").attributes or {})["error.type"] == "KeyError"


async def test_a_tool_error_result_marks_its_span_and_the_run_goes_on(traced: Instrumentation, spans: Spans) -> None:
    model = script(call("c1", "broken", a=1), call("c2", "nope"), answer("sorry"))
    result = await Agent(name="calc", model=model, tools=[broken]).prompt("go")

    assert result.output == "sorry"
    failed, unknown = spans.one("execute_tool broken"), spans.one("execute_tool nope")
    assert (failed.attributes or {})["error.type"] == "tool_error"
    assert (unknown.attributes or {})["error.type"] == "unknown_tool"
    for span in (failed, unknown):
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == "the tool call failed"  # the error text may quote arguments: content
    run = spans.one("invoke_agent calc")
    assert run.status.status_code is StatusCode.UNSET


async def test_max_turns_exceeded_is_an_error_with_the_usage_so_far(traced: Instrumentation, spans: Spans) -> None:
    agent = Agent(name="calc", model=script(call("c1", "add", a=1, b=1)), tools=[add], max_turns=1)
    with pytest.raises(MaxTurnsExceeded):
        await agent.prompt("loop")

    run = spans.one("invoke_agent calc")
    assert run.status.status_code is StatusCode.ERROR
    attributes = run.attributes or {}
    assert attributes["error.type"] == "MaxTurnsExceeded"
    assert attributes["hookline.run.stop_reason"] == "max_turns"
    assert attributes["gen_ai.usage.input_tokens"] == 3


async def test_calls_a_hook_answers_run_no_tool_span(traced: Instrumentation, spans: Spans) -> None:
    from hookline import State, hook

    @hook
    def deny(state: State) -> None:
        for c in state.tool_calls:
            state.deny_tool(c.id, "not today")

    agent = Agent(name="calc", model=script(call("c1", "add", a=1, b=1), answer("ok")), tools=[add],
                  hooks={"before_tool": [deny]})
    await agent.prompt("go")

    assert not spans.named("execute_tool add")
    assert len(spans.named("chat function")) == 2


def test_tool_call_part_is_unchanged_by_tracing() -> None:
    part = ToolCallPart(id="c1", name="add", arguments={"a": 1})
    assert part.model_dump() == {"type": "tool_call", "id": "c1", "name": "add", "arguments": {"a": 1}}
