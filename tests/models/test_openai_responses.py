"""OpenAIResponsesModel against the fake server's `POST /v1/responses`, over a real socket.

The adapter runs the public model contract (retries, cut and garbled streams, errors); the
tests below check what only the Responses API's wire format shows: input items, reasoning
items kept and sent back, function calls and their outputs, streaming events.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import pytest

from hookline import Agent, ModelSettings, ReasoningPart, StatusOptions, tool
from hookline.errors import ConfigError, ModelError
from hookline.messages import DocumentPart, FilePart, ImagePart, Message, TextPart, ToolCallPart, ToolResultPart
from hookline.models import Model, ModelRequest, ModelResponse, ToolSpec, resolve_model
from hookline.models.openai_responses import REASONING_PROVIDER, OpenAIResponsesModel
from hookline.retry import RetryPolicy
from hookline.testing import FakeOpenAIServer, Reply, ScriptedServer
from hookline.testing.model_contract import ModelContract
from hookline.types import JSONObject

pytestmark = pytest.mark.anyio

Collect = Callable[[Model, ModelRequest], Awaitable[tuple[list[str], ModelResponse]]]
FAST_RETRY = RetryPolicy(max_attempts=3, initial_delay=0.01, max_delay=0.05, max_total_time=10.0, timeout=5.0)

ADD = ToolSpec(
    name="add",
    description="Add two integers.",
    parameters={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
)
THOUGHT = ReasoningPart(text="The user wants a sum; the add tool does that.", id="rs_1", data="gAAAA-opaque")


class TestOpenAIResponsesModel(ModelContract):
    wrong_shapes = (
        'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "output_index": 9}',
        'event: response.completed\ndata: {"type": "response.completed", "response": 3}',
        'event: response.output_item.added\ndata: {"type": "response.output_item.added"}',
    )

    def create_server(self) -> ScriptedServer:
        return FakeOpenAIServer()

    def create_model(self, base_url: str, retry: RetryPolicy) -> Model:
        return OpenAIResponsesModel("gpt-5-mini", base_url=base_url, api_key="test-key", retry=retry)

    def wire_text_message(self, text: str) -> JSONObject:
        return {"type": "message", "role": "user", "content": text}

    def wire_media(self, part: ImagePart | FilePart) -> JSONObject:
        url = part.url or f"data:{part.media_type};base64,{part.base64()}"
        if isinstance(part, ImagePart):
            return {"type": "input_image", "image_url": url, "detail": "auto"}
        return {"type": "input_file", "filename": part.name, "file_data": url}

    def wire_attachments_of(self, body: JSONObject, call_id: str) -> Any:
        # The function call's output itself: a list of input parts.
        return next(item["output"] for item in body["input"]
                    if item.get("type") == "function_call_output" and item["call_id"] == call_id)

    def wire_user_message(self, content: Sequence[str | ImagePart | FilePart]) -> JSONObject:
        return {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": block} if isinstance(block, str) else self.wire_media(block)
            for block in content]}


@pytest.fixture
async def model(openai_server: FakeOpenAIServer) -> AsyncIterator[OpenAIResponsesModel]:
    async with OpenAIResponsesModel(
        "gpt-5-mini", base_url=openai_server.base_url, api_key="test-key", retry=FAST_RETRY
    ) as responses_model:
        yield responses_model


def ask(text: str = "2+3?", **options: object) -> ModelRequest:
    return ModelRequest(messages=[Message.system("Be terse."), Message.user(text)], **options)  # type: ignore[arg-type]


# --- requests ------------------------------------------------------------------------------


async def test_a_text_answer_and_the_stateless_request_it_answers(
    openai_server: FakeOpenAIServer, model: OpenAIResponsesModel
) -> None:
    openai_server.enqueue_text("5", input_tokens=12, output_tokens=1)

    response = await model.request(ask())

    assert (response.text, response.usage.input_tokens, response.usage.output_tokens) == ("5", 12, 1)
    assert response.model_name == "gpt-5-mini"
    assert response.metadata == {"id": "resp_fake", "status": "completed", "finish_reason": "stop"}
    [body] = openai_server.requests
    assert body["instructions"] == "Be terse."
    assert body["input"] == [{"type": "message", "role": "user", "content": "2+3?"}]
    assert (body["store"], body["include"], body["stream"]) == (False, ["reasoning.encrypted_content"], False)
    assert "tools" not in body


async def test_a_model_that_does_not_reason_is_not_asked_for_encrypted_reasoning(
    openai_server: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.enqueue_text("hi")
    async with OpenAIResponsesModel("gpt-4.1-mini", base_url=openai_server.base_url, api_key="k") as plain:
        assert plain.reasoning is False
        with caplog.at_level(logging.DEBUG, logger="hookline.models"):
            await plain.request(ask(model_settings=ModelSettings(reasoning_effort="high")))

    [body] = openai_server.requests
    assert "include" not in body
    assert "reasoning" not in body
    assert "reasoning_effort" in caplog.text
    assert "gpt-4.1-mini is not a reasoning model" in caplog.text


async def test_tools_calls_and_their_outputs_round_trip_as_items(
    openai_server: FakeOpenAIServer, model: OpenAIResponsesModel
) -> None:
    openai_server.enqueue_tool_calls([ToolCallPart(id="call_A", name="add", arguments={"a": 2, "b": 3})], text="On it.")
    openai_server.enqueue_text("5")

    first = await model.request(ask(tools=[ADD]))
    assert first.tool_calls == [ToolCallPart(id="call_A", name="add", arguments={"a": 2, "b": 3})]
    assert (first.text, first.metadata["finish_reason"]) == ("On it.", "tool_calls")
    results = Message("tool", [ToolResultPart(call_id="call_A", content="boom", is_error=True, name="add")])
    await model.request(ModelRequest(messages=[Message.user("2+3?"), first.to_message(), results], tools=[ADD]))

    tools, again = openai_server.requests
    assert tools["tools"] == [{"type": "function", "name": "add", "parameters": ADD.parameters, "strict": False,
                               "description": "Add two integers."}]
    assert again["input"][1:] == [
        {"type": "message", "role": "assistant", "content": "On it."},
        {"type": "function_call", "call_id": "call_A", "name": "add", "arguments": '{"a": 2, "b": 3}'},
        {"type": "function_call_output", "call_id": "call_A", "output": "Error: boom"},
    ]


async def test_reasoning_items_become_parts_and_go_back_in_place(
    openai_server: FakeOpenAIServer, model: OpenAIResponsesModel
) -> None:
    call = ToolCallPart(id="call_A", name="add", arguments={"a": 2, "b": 3})
    openai_server.enqueue_reply(Reply(reasoning=[THOUGHT], tool_calls=[call]))
    openai_server.enqueue_text("5")

    first = await model.request(ask(tools=[ADD]))
    assert first.reasoning == [THOUGHT.model_copy(update={"provider": REASONING_PROVIDER})]
    message = first.to_message()
    assert [type(part) for part in message.parts] == [ReasoningPart, ToolCallPart]
    assert message.text == ""
    result = Message("tool", [ToolResultPart(call_id="call_A", content="5", name="add")])
    await model.request(ModelRequest(messages=[Message.user("2+3?"), message, result], tools=[ADD]))

    sent = openai_server.requests[1]["input"]
    assert sent[1] == {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-opaque",
                       "summary": [{"type": "summary_text", "text": THOUGHT.text}]}
    assert [item["type"] for item in sent] == ["message", "reasoning", "function_call", "function_call_output"]


async def test_reasoning_of_another_provider_is_left_out(
    openai_server: FakeOpenAIServer, model: OpenAIResponsesModel
) -> None:
    openai_server.enqueue_text("ok")
    thinking = ReasoningPart(text="hmm", signature="sig", provider="anthropic")
    no_id = ReasoningPart(text="hmm", provider=REASONING_PROVIDER)
    said = Message("assistant", [thinking, no_id, TextPart(text="hello")])
    history = [Message.user("hi"), said, Message.user("and?")]

    await model.request(ModelRequest(messages=history))

    assert openai_server.requests[0]["input"] == [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "message", "role": "assistant", "content": "hello"},
        {"type": "message", "role": "user", "content": "and?"},
    ]


async def test_documents_and_user_actions_are_text(
    openai_server: FakeOpenAIServer, model: OpenAIResponsesModel
) -> None:
    openai_server.enqueue_text("ok")
    own = ToolCallPart(id="u1", name="write_file", arguments={"path": "a.txt"})
    user = Message("user", [TextPart(text="Read this."), DocumentPart(title="A", text="alpha"), own])

    await model.request(ModelRequest(messages=[user]))

    [item] = openai_server.requests[0]["input"]
    assert item["role"] == "user"
    assert "u1" not in item["content"]
    assert '<document title="A">\nalpha\n</document>' in item["content"]
    assert 'The user called write_file({"path": "a.txt"})' in item["content"]


async def test_an_output_schema_becomes_the_text_format(
    openai_server: FakeOpenAIServer, model: OpenAIResponsesModel
) -> None:
    schema = {"title": "Sum", "type": "object", "properties": {"total": {"type": "integer"}},
              "required": ["total"], "additionalProperties": False}
    openai_server.enqueue_text('{"total": 5}')

    await model.request(ask(output_schema=schema))

    assert openai_server.requests[0]["text"] == {
        "format": {"type": "json_schema", "name": "Sum", "schema": schema, "strict": True}
    }


# --- streaming -----------------------------------------------------------------------------


async def test_the_stream_yields_text_and_assembles_reasoning_and_calls(
    openai_server: FakeOpenAIServer, model: OpenAIResponsesModel, collect: Collect
) -> None:
    call = ToolCallPart(id="call_B", name="add", arguments={"a": 40, "b": 2})
    openai_server.enqueue_reply(Reply(text="Adding it up.", reasoning=[THOUGHT], tool_calls=[call], output_tokens=9))

    deltas, response = await collect(model, ask(tools=[ADD]))

    assert "".join(deltas) == "Adding it up."
    assert len(deltas) > 1
    assert THOUGHT.text not in "".join(deltas)
    assert response.reasoning == [THOUGHT.model_copy(update={"provider": REASONING_PROVIDER})]
    assert response.tool_calls == [call]
    assert (response.usage.output_tokens, response.metadata["finish_reason"]) == (9, "tool_calls")
    assert openai_server.requests[0]["stream"] is True


async def test_a_failed_response_event_is_a_model_error(openai_server: FakeOpenAIServer, collect: Collect) -> None:
    failed = {"type": "response.failed", "sequence_number": 1, "response": {
        "id": "resp_x", "object": "response", "created_at": 0, "status": "failed", "model": "gpt-5-mini",
        "output": [], "error": {"code": "invalid_prompt", "message": "the prompt was refused"},
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}}
    openai_server.enqueue_stream([failed])
    once = RetryPolicy(max_attempts=1, timeout=5.0)
    async with OpenAIResponsesModel("gpt-5-mini", base_url=openai_server.base_url, api_key="k", retry=once) as one:
        with pytest.raises(ModelError, match="the prompt was refused") as raised:
            await collect(one, ask())

    assert raised.value.provider == "openai"


# --- settings and resolution ---------------------------------------------------------------


async def test_settings_map_to_the_responses_parameters(
    openai_server: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.enqueue_text("a")
    openai_server.enqueue_text("b")
    settings = ModelSettings(temperature=0.3, max_tokens=64, tool_choice="add", parallel_tool_calls=False,
                             reasoning_effort="minimal", stop=["END"], extra_body={"service_tier": "flex"},
                             extra_headers={"X-Trace": "t-1"})
    raw = {"reasoning": {"summary": "auto"}, "temperature": 1.0}
    async with OpenAIResponsesModel("o4-mini", base_url=openai_server.base_url, api_key="k", settings=raw) as o4:
        with caplog.at_level(logging.DEBUG, logger="hookline.models"):
            await o4.request(ask(tools=[ADD], model_settings=settings))
            await o4.request(ask(model_settings=ModelSettings(tool_choice="required")))

    with_tools, without = openai_server.requests
    assert with_tools["temperature"] == 0.3
    assert with_tools["max_output_tokens"] == 64
    assert with_tools["tool_choice"] == {"type": "function", "name": "add"}
    assert with_tools["parallel_tool_calls"] is False
    assert with_tools["reasoning"] == {"summary": "auto", "effort": "minimal"}
    assert with_tools["service_tier"] == "flex"
    assert "stop" not in with_tools
    assert openai_server.request_headers[0]["x-trace"] == "t-1"
    assert "tool_choice" not in without
    assert "the Responses API has no stop sequences): stop" in caplog.text
    assert "the call offers no tools): tool_choice" in caplog.text


async def test_the_prefix_builds_the_adapter(monkeypatch: pytest.MonkeyPatch, openai_server: FakeOpenAIServer) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.enqueue_text("hello")

    model = resolve_model("openai-responses:gpt-5-nano")
    async with model:
        response = await model.request(ask())

    assert isinstance(model, OpenAIResponsesModel)
    assert model.name == "gpt-5-nano"
    assert response.text == "hello"
    assert "env-key" in openai_server.request_headers[0]["authorization"]


def test_the_adapter_is_a_lazy_public_name() -> None:
    import hookline.models

    assert "OpenAIResponsesModel" in hookline.models.__all__
    assert hookline.models.OpenAIResponsesModel is OpenAIResponsesModel


def test_openai_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

    with pytest.raises(ConfigError, match="OpenAIResponsesModel needs an API key"):
        OpenAIResponsesModel("gpt-5-mini")


# --- an agent on it ------------------------------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.mark.parametrize("path", ["await", "stream"])
async def test_an_agent_keeps_reasoning_in_its_log_and_sends_it_back(
    openai_server: FakeOpenAIServer, path: str
) -> None:
    call = ToolCallPart(id="call_C", name="add", arguments={"a": 2, "b": 3})
    openai_server.enqueue_reply(Reply(reasoning=[THOUGHT], tool_calls=[call]))
    openai_server.enqueue_text("5")
    model = OpenAIResponsesModel("gpt-5-mini", base_url=openai_server.base_url, api_key="k", retry=FAST_RETRY)
    agent = Agent(model=model, tools=[add], status=StatusOptions(reasoning=True))
    async with model:
        request = agent.prompt("2+3?").session("s-1")
        if path == "stream":
            events = [event async for event in request.stream()]
            result = request.result
            assert result is not None
            assert not any(THOUGHT.text in event.text for event in events if event.kind == "delta")
        else:
            result = await request
        log = await agent.session_store.events("s-1", view="ui")

    assert result.output == "5"
    assert isinstance(result.messages[1].parts[0], ReasoningPart)
    second = openai_server.requests[1]["input"]
    assert [item["type"] for item in second] == ["message", "reasoning", "function_call", "function_call_output"]
    assert second[1]["encrypted_content"] == "gAAAA-opaque"
    assert f"thinking: {THOUGHT.text}" in [event.text for event in log if event.kind == "status"]
    stored = [p for event in log if event.kind == "message" for p in event.parts if isinstance(p, ReasoningPart)]
    assert stored == [THOUGHT.model_copy(update={"provider": REASONING_PROVIDER})]
