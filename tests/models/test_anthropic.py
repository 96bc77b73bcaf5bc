"""AnthropicModel against the fake Messages API server, over a real socket."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import httpx2
import pytest

from hookline.errors import ConfigError, ModelError
from hookline.messages import DocumentPart, Message, TextPart, ToolCallPart, ToolResultPart
from hookline.models import Model, ModelRequest, ModelResponse, ToolSpec
from hookline.models.anthropic import DEFAULT_MAX_TOKENS, AnthropicModel
from hookline.retry import RetryPolicy
from hookline.testing import FakeAnthropicServer

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


async def test_text_answer_with_usage_and_system_prompt(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    anthropic_server.enqueue_text("5", input_tokens=12, output_tokens=1)

    response = await anthropic_model.request(ask())

    assert response.text == "5"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 1)
    assert response.model_name == "claude-haiku-4-5"
    assert response.metadata["stop_reason"] == "end_turn"
    [body] = anthropic_server.requests
    assert body["system"] == "Be terse."
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "2+3?"}]}]
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS
    assert "test-key" in anthropic_server.request_headers[0]["authorization"]


async def test_max_tokens_and_tool_choice_come_from_settings(
    anthropic_server: FakeAnthropicServer, fast_retry: RetryPolicy
) -> None:
    settings = {"max_tokens": 256, "tool_choice": {"type": "any"}, "temperature": 0.5}
    anthropic_server.enqueue_text("a")
    anthropic_server.enqueue_text("b")
    anthropic_server.enqueue_text("c")
    async with AnthropicModel("claude-haiku-4-5", anthropic_server.base_url, "k", settings, retry=fast_retry) as model:
        await model.request(ask(tools=[ADD]))
        await model.request(ask(tools=[ADD], settings={"max_tokens": 64}))
        await model.request(ask())

    with_tools, again, without = anthropic_server.requests
    for body in (with_tools, again):
        assert body["tools"] == [{"name": "add", "input_schema": ADD.parameters, "description": ADD.description}]
        assert body["tool_choice"] == {"type": "any"}
    assert (with_tools["max_tokens"], again["max_tokens"], without["max_tokens"]) == (256, 64, 256)
    assert "tools" not in without
    assert "tool_choice" not in without
    assert without["temperature"] == 0.5


async def test_call_ids_round_trip_and_results_share_one_user_message(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    calls = [ToolCallPart(id="toolu_A", name="add", arguments={"a": 1, "b": 2}), ToolCallPart(id="toolu_B", name="add")]
    anthropic_server.enqueue_tool_calls(calls, text="Adding.")
    anthropic_server.enqueue_text("done")

    first = await anthropic_model.request(ask(tools=[ADD]))
    assert [(c.id, c.arguments) for c in first.tool_calls] == [("toolu_A", {"a": 1, "b": 2}), ("toolu_B", {})]
    assert first.text == "Adding."
    history = [
        *ask().messages,
        first.to_message(),
        Message("tool", [ToolResultPart(call_id="toolu_A", content="3")]),
        Message("tool", [ToolResultPart(call_id="toolu_B", content="no b", is_error=True)]),
        Message.user("Thanks."),
    ]
    await anthropic_model.request(ModelRequest(messages=history, tools=[ADD]))

    sent = anthropic_server.requests[1]["messages"]
    assert [turn["role"] for turn in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == [
        {"type": "text", "text": "Adding."},
        {"type": "tool_use", "id": "toolu_A", "name": "add", "input": {"a": 1, "b": 2}},
        {"type": "tool_use", "id": "toolu_B", "name": "add", "input": {}},
    ]
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_A", "content": "3", "is_error": False},
        {"type": "tool_result", "tool_use_id": "toolu_B", "content": "no b", "is_error": True},
        {"type": "text", "text": "Thanks."},
    ]


async def test_consecutive_messages_merge_and_later_system_folds_in(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    history = [
        Message.system("Be terse."),
        Message.user("one"),
        Message.user("two"),
        Message.system("Answer in French."),
        Message.assistant(""),
        Message.assistant("ok"),
    ]
    anthropic_server.enqueue_text("ok")

    await anthropic_model.request(ModelRequest(messages=history))

    body = anthropic_server.requests[0]
    assert body["system"] == "Be terse.\n\nAnswer in French."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    ]


async def test_user_tool_calls_as_text_and_documents_as_one_block(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    parts = [
        ToolCallPart(id="u1", name="write_file", arguments={"path": "a.txt"}),
        ToolResultPart(call_id="u1", content="denied", is_error=True),
        DocumentPart(title="Alpha", text="first"),
        DocumentPart(title="Beta", text="second"),
        TextPart(text="Summarise."),
    ]
    anthropic_server.enqueue_text("ok")

    await anthropic_model.request(ModelRequest(messages=[Message("user", parts)]))

    [turn] = anthropic_server.requests[0]["messages"]
    texts = [block["text"] for block in turn["content"]]
    assert all(block["type"] == "text" for block in turn["content"])
    assert texts[0] == 'The user called write_file({"path": "a.txt"}); error: denied'
    assert texts[1].count("<documents>") == 1
    assert '<document title="Alpha">\nfirst\n</document>' in texts[1]
    assert '<document title="Beta">\nsecond\n</document>' in texts[1]
    assert texts[2] == "Summarise."


async def test_output_schema_uses_native_structured_output(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    schema = {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}
    anthropic_server.enqueue_text('{"total": 5}')

    response = await anthropic_model.request(ask(output_schema=schema))

    assert response.text == '{"total": 5}'
    assert anthropic_server.requests[0]["output_config"] == {"format": {"type": "json_schema", "schema": schema}}


# --- streaming -------------------------------------------------------------------------


async def test_stream_yields_text_and_assembles_tool_input_deltas(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel, collect: Collect
) -> None:
    calls = [("add", {"a": 10, "b": 20}), ("add", {"a": 3, "b": 4})]
    anthropic_server.enqueue_tool_calls(calls, text="Let me add these.", input_tokens=30, output_tokens=9)

    deltas, response = await collect(anthropic_model, ask(tools=[ADD]))

    assert len(deltas) > 1
    assert "".join(deltas) == response.text == "Let me add these."
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("toolu_fake1", "add", {"a": 10, "b": 20}),
        ("toolu_fake2", "add", {"a": 3, "b": 4}),
    ]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (30, 9)
    assert response.metadata["stop_reason"] == "tool_use"
    assert anthropic_server.requests[0]["stream"] is True


async def test_an_error_event_inside_a_stream_is_retried_then_raised(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel, collect: Collect, fast_retry: RetryPolicy
) -> None:
    start = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "usage": {"input_tokens": 1, "output_tokens": 0},
    }
    for _ in range(fast_retry.max_attempts):
        anthropic_server.enqueue_stream(
            [
                {"type": "message_start", "message": start},
                {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            ]
        )

    with pytest.raises(ModelError, match="Overloaded") as caught:
        await collect(anthropic_model, ask())

    assert caught.value.status_code is None
    assert len(anthropic_server.requests) == fast_retry.max_attempts


# --- errors and retries ----------------------------------------------------------------


async def test_overloaded_is_retried_then_raised(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel, fast_retry: RetryPolicy
) -> None:
    for _ in range(fast_retry.max_attempts):
        anthropic_server.enqueue_error(529, message="Overloaded")

    with pytest.raises(ModelError) as caught:
        await anthropic_model.request(ask())

    assert caught.value.status_code == 529
    assert caught.value.provider == "anthropic"
    assert "Overloaded" in str(caught.value)
    assert len(anthropic_server.requests) == fast_retry.max_attempts


async def test_a_slow_answer_times_out_then_succeeds(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.enqueue_delay(3)
    anthropic_server.enqueue_text("fast")
    policy = RetryPolicy(max_attempts=2, initial_delay=0.01)

    started = time.monotonic()
    async with AnthropicModel("claude-haiku-4-5", anthropic_server.base_url, "k", retry=policy, timeout=0.3) as model:
        response = await model.request(ask())

    assert response.text == "fast"
    assert time.monotonic() - started < 2.5


async def test_a_stream_that_stalls_times_out(anthropic_server: FakeAnthropicServer, collect: Collect) -> None:
    start = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "usage": {"input_tokens": 1, "output_tokens": 0},
    }
    anthropic_server.enqueue_stream(
        [{"type": "message_start", "message": start}, {"type": "message_stop"}], chunk_delay=1
    )
    policy = RetryPolicy(max_attempts=1)

    async with AnthropicModel("claude-haiku-4-5", anthropic_server.base_url, "k", retry=policy, timeout=0.2) as model:
        with pytest.raises(ModelError, match="timed out") as caught:
            await collect(model, ask())

    assert caught.value.status_code is None


async def test_a_body_of_the_wrong_shape_raises_without_retry(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    anthropic_server.enqueue({"id": "x", "type": "message", "content": "not a list"})

    with pytest.raises(ModelError, match="anthropic sent a malformed response") as caught:
        await anthropic_model.request(ask())

    assert not caught.value.retryable
    assert len(anthropic_server.requests) == 1


def test_missing_api_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)

    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicModel("claude-haiku-4-5")


async def test_the_fake_reports_unscripted_requests_and_leftover_script() -> None:
    with FakeAnthropicServer() as server:
        once = RetryPolicy(max_attempts=1)
        async with AnthropicModel("claude-haiku-4-5", server.base_url, "k", retry=once) as model:
            with pytest.raises(ModelError, match="nothing scripted") as caught:
                await model.request(ask())
        assert caught.value.status_code == 500
        with pytest.raises(AssertionError, match="1 request"):
            server.assert_complete()

        server.unscripted.clear()
        server.enqueue_text("never asked for")
        with pytest.raises(AssertionError, match="never requested"):
            server.assert_complete()


async def test_an_injected_http_client_is_used_and_left_open(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.enqueue_text("ok")
    async with httpx2.AsyncClient(headers={"x-trace": "t-1"}) as client:
        async with AnthropicModel("claude-haiku-4-5", anthropic_server.base_url, "k", http_client=client) as model:
            await model.request(ask())
        assert not client.is_closed

    assert anthropic_server.request_headers[0]["x-trace"] == "t-1"
