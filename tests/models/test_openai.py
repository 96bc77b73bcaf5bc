"""OpenAIModel against the fake Chat Completions server, over a real socket."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from hookline.errors import ModelError
from hookline.messages import DocumentPart, Message, TextPart, ToolCallPart, ToolResultPart
from hookline.models import Model, ModelRequest, ModelResponse, ToolSpec
from hookline.models.openai import OpenAIModel
from hookline.retry import RetryPolicy
from hookline.testing import FakeOpenAIServer

pytestmark = pytest.mark.anyio

Collect = Callable[[Model, ModelRequest], Awaitable[tuple[list[str], ModelResponse]]]

ADD = ToolSpec(
    name="add",
    description="Add two integers.",
    parameters={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
)


def ask(text: str = "2+3?", **options: object) -> ModelRequest:
    return ModelRequest(messages=[Message.system("Be terse."), Message.user(text)], **options)  # type: ignore[arg-type]


# --- requests and responses ------------------------------------------------------------


async def test_text_answer_with_usage(openai_server: FakeOpenAIServer, openai_model: OpenAIModel) -> None:
    openai_server.enqueue_text("5", input_tokens=12, output_tokens=1)

    response = await openai_model.request(ask())

    assert response.text == "5"
    assert response.tool_calls == []
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 1)
    assert response.model_name == "gpt-4o-mini"
    [body] = openai_server.requests
    assert body["model"] == "gpt-4o-mini"
    assert body["messages"] == [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "2+3?"}]
    assert openai_server.request_headers[0]["authorization"] == "Bearer test-key"


async def test_call_ids_round_trip_with_two_calls_to_one_tool(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    calls = [ToolCallPart(id="call_A", name="add", arguments={"a": 1, "b": 2}), ToolCallPart(id="call_B", name="add")]
    openai_server.enqueue_tool_calls(calls)
    openai_server.enqueue_text("3 and 0")

    first = await openai_model.request(ask(tools=[ADD]))
    assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
        ("call_A", "add", {"a": 1, "b": 2}),
        ("call_B", "add", {}),
    ]
    history = [
        *ask().messages,
        first.to_message(),
        Message("tool", [ToolResultPart(call_id="call_A", content="3", name="add")]),
        Message("tool", [ToolResultPart(call_id="call_B", content="0", name="add")]),
    ]
    await openai_model.request(ModelRequest(messages=history, tools=[ADD]))

    sent = openai_server.requests[1]["messages"]
    assert sent[2]["role"] == "assistant"
    assert sent[2]["content"] == ""
    assert [c["id"] for c in sent[2]["tool_calls"]] == ["call_A", "call_B"]
    assert sent[2]["tool_calls"][0]["function"] == {"name": "add", "arguments": '{"a": 1, "b": 2}'}
    assert sent[3:] == [
        {"role": "tool", "tool_call_id": "call_A", "content": "3"},
        {"role": "tool", "tool_call_id": "call_B", "content": "0"},
    ]


async def test_missing_and_empty_ids_are_made_unique(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    function = {"name": "add", "arguments": "{}"}
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"function": function}, {"id": "", "function": function}],
    }
    openai_server.enqueue(
        {"id": "x", "model": "m", "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
    )

    response = await openai_model.request(ask(tools=[ADD]))

    ids = [call.id for call in response.tool_calls]
    assert len(set(ids)) == 2
    assert all(call_id.startswith("call_") and len(call_id) > len("call_") for call_id in ids)


async def test_arguments_parsed_and_malformed_ones_kept_raw(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    openai_server.enqueue_tool_calls([("add", '{"a": 1, "b": '), ("add", ""), ("add", "[1, 2]")])

    response = await openai_model.request(ask(tools=[ADD]))

    assert [call.arguments for call in response.tool_calls] == ['{"a": 1, "b": ', {}, "[1, 2]"]


async def test_tools_sent_on_every_request_and_tool_choice_only_with_tools(
    openai_server: FakeOpenAIServer, fast_retry: RetryPolicy
) -> None:
    settings = {"tool_choice": "auto", "parallel_tool_calls": False, "temperature": 0}
    for _ in range(3):
        openai_server.enqueue_text("ok")
    async with OpenAIModel("gpt-4o-mini", openai_server.base_url, "k", settings, retry=fast_retry) as model:
        await model.request(ask(tools=[ADD]))
        await model.request(ask(tools=[ADD], settings={"seed": 7}))
        await model.request(ask())

    with_tools, again, without = openai_server.requests
    for body in (with_tools, again):
        assert body["tools"] == [
            {
                "type": "function",
                "function": {"name": "add", "description": ADD.description, "parameters": ADD.parameters},
            }
        ]
        assert body["tool_choice"] == "auto"
        assert body["parallel_tool_calls"] is False
    assert again["seed"] == 7
    assert "tools" not in without
    assert "tool_choice" not in without
    assert "parallel_tool_calls" not in without
    assert without["temperature"] == 0


async def test_output_schema_becomes_a_strict_json_schema_where_possible(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    closed = {
        "title": "Sum result",
        "type": "object",
        "properties": {"total": {"type": "integer"}},
        "required": ["total"],
        "additionalProperties": False,
    }
    open_schema = {"type": "object", "properties": {"total": {"type": "integer"}}}
    openai_server.enqueue_text('{"total": 5}')
    openai_server.enqueue_text('{"total": 5}')

    await openai_model.request(ask(output_schema=closed))
    await openai_model.request(ask(output_schema=open_schema))

    strict, loose = (body["response_format"] for body in openai_server.requests)
    assert strict == {"type": "json_schema", "json_schema": {"name": "Sum_result", "schema": closed, "strict": True}}
    assert loose["json_schema"]["strict"] is False
    assert loose["json_schema"]["name"] == "output"


# --- conversation rendering ------------------------------------------------------------


async def test_user_authored_tool_calls_are_rendered_as_text(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    edit = ToolCallPart(id="u1", name="write_file", arguments={"path": "a.txt", "text": "hi"})
    user = Message("user", [edit, ToolResultPart(call_id="u1", content="written"), TextPart(text="Now check it.")])
    openai_server.enqueue_text("ok")

    await openai_model.request(ModelRequest(messages=[user]))

    [sent] = openai_server.requests[0]["messages"]
    assert sent["role"] == "user"
    assert sent["content"] == (
        'The user called write_file({"path": "a.txt", "text": "hi"}); result: written\n\nNow check it.'
    )
    assert "u1" not in sent["content"]


async def test_documents_of_a_message_form_one_block(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    parts = [
        DocumentPart(title="Alpha", text="first doc", source="a.md"),
        DocumentPart(title="Beta", text="second doc"),
        TextPart(text="Summarise."),
    ]
    openai_server.enqueue_text("ok")

    await openai_model.request(ModelRequest(messages=[Message("user", parts)]))

    content = openai_server.requests[0]["messages"][0]["content"]
    block, question = content.split("\n\n")
    assert block.count("<documents>") == 1
    assert '<document title="Alpha" source="a.md">\nfirst doc\n</document>' in block
    assert '<document title="Beta">\nsecond doc\n</document>' in block
    assert question == "Summarise."


async def test_error_results_and_later_system_messages(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    history = [
        Message.user("go"),
        Message("assistant", [ToolCallPart(id="c1", name="add", arguments={})]),
        Message("tool", [ToolResultPart(call_id="c1", content="missing argument a", is_error=True)]),
        Message.system("Answer in French."),
    ]
    openai_server.enqueue_text("ok")

    await openai_model.request(ModelRequest(messages=history, tools=[ADD]))

    sent = openai_server.requests[0]["messages"]
    assert sent[2] == {"role": "tool", "tool_call_id": "c1", "content": "Error: missing argument a"}
    assert sent[3] == {"role": "system", "content": "Answer in French."}


# --- streaming -------------------------------------------------------------------------


async def test_stream_yields_text_and_assembles_fragmented_tool_calls(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel, collect: Collect
) -> None:
    calls = [("add", {"a": 10, "b": 20}), ("add", {"a": 3, "b": 4})]
    openai_server.enqueue_tool_calls(calls, text="Let me add these.", input_tokens=30, output_tokens=9)

    deltas, response = await collect(openai_model, ask(tools=[ADD]))

    assert len(deltas) > 1
    assert "".join(deltas) == response.text == "Let me add these."
    assert [call.arguments for call in response.tool_calls] == [{"a": 10, "b": 20}, {"a": 3, "b": 4}]
    assert [call.id for call in response.tool_calls] == ["call_fake1", "call_fake2"]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (30, 9)
    body = openai_server.requests[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"][0]["function"]["name"] == "add"


async def test_stream_interleaved_fragments_by_index_and_missing_ids(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel, collect: Collect
) -> None:
    def chunk(*fragments: dict[str, object]) -> dict[str, object]:
        delta = {"tool_calls": list(fragments)}
        return {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta}],
        }

    openai_server.enqueue_stream(
        [
            chunk({"index": 0, "id": "call_X", "function": {"name": "add", "arguments": '{"a"'}}),
            chunk({"index": 1, "function": {"name": "add", "arguments": ""}}),
            chunk({"index": 1, "function": {"arguments": '{"a": 2}'}}, {"index": 0, "function": {"arguments": ": 1}"}}),
            {**chunk(), "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        ]
    )

    deltas, response = await collect(openai_model, ask(tools=[ADD]))

    assert deltas == []
    first, second = response.tool_calls
    assert (first.id, first.arguments) == ("call_X", {"a": 1})
    assert second.id.startswith("call_")
    assert second.id != "call_X"
    assert second.arguments == {"a": 2}
    assert response.usage.input_tokens == 0


async def test_stream_opening_is_retried(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel, collect: Collect
) -> None:
    openai_server.enqueue_error(503)
    openai_server.enqueue_text("back")

    deltas, response = await collect(openai_model, ask())

    assert "".join(deltas) == response.text == "back"
    assert len(openai_server.requests) == 2


async def test_a_malformed_stream_chunk_is_retried_then_raised(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel, collect: Collect, fast_retry: RetryPolicy
) -> None:
    for _ in range(fast_retry.max_attempts):
        openai_server.enqueue_stream(["data: {not json"])

    with pytest.raises(ModelError, match="malformed") as caught:
        await collect(openai_model, ask())

    assert caught.value.retryable
    assert len(openai_server.requests) == fast_retry.max_attempts


# --- errors and retries ----------------------------------------------------------------


async def test_bad_request_is_raised_at_once_with_the_provider_message(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    openai_server.enqueue_error(400, message="Invalid 'messages[1].content': expected a string.")

    with pytest.raises(ModelError) as caught:
        await openai_model.request(ask())

    assert caught.value.status_code == 400
    assert not caught.value.retryable
    assert "Invalid 'messages[1].content': expected a string." in str(caught.value)
    assert caught.value.body["type"] == "invalid_request_error"
    assert len(openai_server.requests) == 1


async def test_timeouts_raise_without_status_after_the_last_attempt(openai_server: FakeOpenAIServer) -> None:
    openai_server.enqueue_delay(3)
    openai_server.enqueue_delay(3)
    policy = RetryPolicy(max_attempts=2, initial_delay=0.01)

    async with OpenAIModel("gpt-4o-mini", openai_server.base_url, "k", retry=policy, timeout=0.2) as model:
        assert model.retry.timeout == 0.2
        with pytest.raises(ModelError, match="timed out") as caught:
            await model.request(ask())

    assert caught.value.status_code is None
    assert caught.value.retryable
    assert len(openai_server.requests) == 2


async def test_bodies_of_the_wrong_shape_raise_without_retry(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    openai_server.enqueue({"id": "x", "choices": []})
    openai_server.enqueue({"id": "x", "choices": [{"index": 0, "message": 5}]})

    for _ in range(2):
        with pytest.raises(ModelError, match="openai sent a malformed response") as caught:
            await openai_model.request(ask())
        assert not caught.value.retryable

    assert len(openai_server.requests) == 2
