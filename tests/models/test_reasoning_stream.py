"""Reasoning as it streams: `ReasoningDelta`s before the text, joined into the response's reasoning.

Each adapter streams its provider's thinking as it comes (Anthropic's `thinking_delta`, the
Responses API's reasoning summary and reasoning text deltas, Chat Completions'
`reasoning_content` or `reasoning`), every fragment before the answer's first text, and the
fragments join to the `ReasoningPart`s of the final response. Chat Completions' reasoning
goes back only to a provider that wants it (DeepSeek), never by default.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hookline import Message, ReasoningPart
from hookline.messages import ToolCallPart, ToolResultPart
from hookline.models import (
    FunctionModel,
    Model,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
    ReasoningDelta,
    ResponseDone,
    TextDelta,
    ToolSpec,
)
from hookline.models.anthropic import AnthropicModel
from hookline.models.openai import OpenAIModel
from hookline.models.openai_responses import OpenAIResponsesModel
from hookline.retry import RetryPolicy
from hookline.testing import FakeAnthropicServer, FakeOpenAIServer, Reply
from hookline.types import JSONObject

pytestmark = pytest.mark.anyio

ADD = ToolSpec(name="add", parameters={"type": "object", "properties": {"a": {"type": "integer"}}})
THOUGHT = "Six times seven: the multiplication table says forty-two."
SECOND = "Check it: 7 * 6 = 42 too."
CALL = ToolCallPart(id="call_1", name="add", arguments={"a": 1})
TWO_PARTS = Reply(text="42", reasoning=[ReasoningPart(text=THOUGHT), ReasoningPart(text=SECOND)])


def ask(text: str = "6*7?", tools: list[ToolSpec] | None = None) -> ModelRequest:
    return ModelRequest(messages=[Message.user(text)], tools=tools or [])


async def stream_of(model: Model, request: ModelRequest) -> tuple[list[ModelStreamEvent], ModelResponse]:
    """Every item the stream yields, and its final response (a stream ends with exactly one)."""
    items = [item async for item in model.stream(request)]
    done = [item.response for item in items if isinstance(item, ResponseDone)]
    assert len(done) == 1
    assert isinstance(items[-1], ResponseDone)
    return items, done[0]


def reasoning_of(items: list[ModelStreamEvent]) -> str:
    return "".join(item.text for item in items if isinstance(item, ReasoningDelta))


def text_of(items: list[ModelStreamEvent]) -> str:
    return "".join(item.text for item in items if isinstance(item, TextDelta))


def assert_reasoning_first(items: list[ModelStreamEvent]) -> None:
    """At least two reasoning deltas (it streams, not whole), every one before the first text delta."""
    kinds = [type(item) for item in items if not isinstance(item, ResponseDone)]
    assert kinds.count(ReasoningDelta) >= 2
    assert TextDelta in kinds
    assert kinds.index(TextDelta) > max(i for i, kind in enumerate(kinds) if kind is ReasoningDelta)


@pytest.fixture
async def responses_model(openai_server: FakeOpenAIServer, fast_retry: RetryPolicy) -> AsyncIterator[Model]:
    model = OpenAIResponsesModel("o4-mini", base_url=openai_server.base_url, api_key="k", retry=fast_retry)
    async with model:
        yield model


# --- Anthropic -------------------------------------------------------------------------


async def test_anthropic_streams_thinking_before_the_text(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    thinking = ReasoningPart(text=THOUGHT, signature="sig-1")
    anthropic_server.enqueue_reply(Reply(text="42", reasoning=[thinking, ReasoningPart(data="redacted")]))

    items, response = await stream_of(anthropic_model, ask())

    assert_reasoning_first(items)
    assert reasoning_of(items) == THOUGHT
    assert text_of(items) == "42"
    assert response.reasoning[0] == ReasoningPart(text=reasoning_of(items), signature="sig-1", provider="anthropic")
    assert response.reasoning[1].data == "redacted"  # a redacted block streams no text


async def test_anthropic_thinking_blocks_are_joined_by_a_blank_line(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    anthropic_server.enqueue_reply(TWO_PARTS)

    items, response = await stream_of(anthropic_model, ask())

    assert reasoning_of(items) == f"{THOUGHT}\n\n{SECOND}"
    assert [part.text for part in response.reasoning] == [THOUGHT, SECOND]


async def test_a_retried_stream_does_not_show_its_thinking_twice(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    reply = Reply(text="42", reasoning=[ReasoningPart(text=THOUGHT, signature="sig-1")])
    anthropic_server.enqueue_cut_stream(reply, keep=8)  # message_start, ping, the block's start and 5 deltas
    anthropic_server.enqueue_reply(reply)

    items, response = await stream_of(anthropic_model, ask())

    assert reasoning_of(items) == THOUGHT
    assert response.reasoning[0].text == THOUGHT
    assert len(anthropic_server.requests) == 2


# --- the Responses API -----------------------------------------------------------------


async def test_responses_streams_the_reasoning_summary_before_the_text(
    openai_server: FakeOpenAIServer, responses_model: Model
) -> None:
    openai_server.enqueue_reply(Reply(text="42", reasoning=[ReasoningPart(text=THOUGHT, id="rs_1")]))

    items, response = await stream_of(responses_model, ask())

    assert_reasoning_first(items)
    assert reasoning_of(items) == THOUGHT
    assert response.reasoning[0].text == reasoning_of(items)
    assert response.reasoning[0].id == "rs_1"


async def test_responses_joins_reasoning_items_by_a_blank_line(
    openai_server: FakeOpenAIServer, responses_model: Model
) -> None:
    openai_server.enqueue_reply(TWO_PARTS)

    items, response = await stream_of(responses_model, ask())

    assert reasoning_of(items) == "\n\n".join(part.text for part in response.reasoning) == f"{THOUGHT}\n\n{SECOND}"


def reasoning_text_events(summaries: list[str], contents: list[str]) -> list[JSONObject]:
    """A response whose one reasoning item streams `response.reasoning_text.delta`s (open-weight models)."""
    where = {"output_index": 0, "item_id": "rs_1"}
    shell = {"id": "resp_1", "object": "response", "created_at": 0, "model": "gpt-oss", "output": [],
             "status": "in_progress", "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}
    item = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": s} for s in summaries],
            "content": [{"type": "reasoning_text", "text": c} for c in contents]}
    deltas = [{"type": "response.reasoning_text.delta", **where, "content_index": index, "delta": piece}
              for index, text in enumerate(contents) for piece in (text[:5], text[5:])]
    done = {**shell, "status": "completed", "output": [item],
            "usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7,
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 2}}}
    events: list[JSONObject] = [
        {"type": "response.created", "response": shell},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        *deltas,
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": done},
    ]
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


async def test_responses_streams_reasoning_text_of_open_weight_models(
    openai_server: FakeOpenAIServer, responses_model: Model
) -> None:
    openai_server.enqueue_stream(reasoning_text_events([], [THOUGHT, SECOND]))

    items, response = await stream_of(responses_model, ask())

    fragments = [item.text for item in items if isinstance(item, ReasoningDelta)]
    assert fragments == [THOUGHT[:5], THOUGHT[5:], "\n\n" + SECOND[:5], SECOND[5:]]
    assert reasoning_of(items) == response.reasoning[0].text == f"{THOUGHT}\n\n{SECOND}"


# --- Chat Completions ------------------------------------------------------------------


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_chat_streams_reasoning_content_before_the_text(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel, field: str
) -> None:
    openai_server.reasoning_field = field
    openai_server.enqueue_reply(Reply(text="42", reasoning=[ReasoningPart(text=THOUGHT)]))

    items, response = await stream_of(openai_model, ask())

    assert_reasoning_first(items)
    assert reasoning_of(items) == THOUGHT
    assert text_of(items) == response.text == "42"
    assert response.reasoning == [ReasoningPart(text=reasoning_of(items), provider="openai")]
    assert response.to_message().parts[0] == response.reasoning[0]


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_chat_keeps_reasoning_content_of_a_whole_answer(
    openai_server: FakeOpenAIServer, field: str, fast_retry: RetryPolicy
) -> None:
    openai_server.reasoning_field = field
    openai_server.enqueue_reply(Reply(text="42", reasoning=[ReasoningPart(text=THOUGHT)]))
    model = OpenAIModel("deepseek-reasoner", base_url=openai_server.base_url, api_key="k", provider="vllm",
                        retry=fast_retry)
    async with model:
        response = await model.request(ask())

    assert openai_server.requests[0]["stream"] is False
    assert response.text == "42"
    assert response.reasoning == [ReasoningPart(text=THOUGHT, provider="vllm")]


async def test_chat_answers_without_reasoning_have_none(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    openai_server.enqueue_text("42")
    openai_server.enqueue_text("42")

    items, streamed = await stream_of(openai_model, ask())
    whole = await openai_model.request(ask())

    assert not any(isinstance(item, ReasoningDelta) for item in items)
    assert streamed.reasoning == whole.reasoning == []


def chunk(delta: JSONObject, finish: str | None = None) -> JSONObject:
    return {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "qwen3",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


async def test_a_chunk_with_reasoning_and_text_yields_the_reasoning_first(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    # vLLM sends both in one delta where the thinking ends mid-chunk.
    openai_server.enqueue_stream([
        chunk({"role": "assistant", "reasoning_content": "Forty"}),
        chunk({"reasoning_content": "-two.", "content": "4"}),
        chunk({"content": "2"}, finish="stop"),
    ])

    items, response = await stream_of(openai_model, ask())

    assert [(type(item).__name__, item.text) for item in items[:-1]] == [
        ("ReasoningDelta", "Forty"), ("ReasoningDelta", "-two."), ("TextDelta", "4"), ("TextDelta", "2")
    ]
    assert response.reasoning[0].text == "Forty-two."


def next_turn(response: ModelResponse, *, tool: bool) -> ModelRequest:
    """The call after `response`: its tool call answered, or a new question."""
    result = Message("tool", [ToolResultPart(call_id=CALL.id, content="1", name="add")])
    follow = result if tool else Message.user("ok?")
    return ModelRequest(messages=[Message.user("add 1"), response.to_message(), follow], tools=[ADD])


def sent_reasoning(body: JSONObject) -> list[object]:
    return [message.get(key) for message in body["messages"] for key in ("reasoning_content", "reasoning")
            if key in message]


@pytest.mark.parametrize("tool", [True, False], ids=["after-a-tool-call", "after-an-answer"])
@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
async def test_chat_reasoning_is_not_sent_back_by_default(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel, tool: bool, stream: bool
) -> None:
    openai_server.enqueue_reply(Reply(text="Adding." if tool else "1", reasoning=[ReasoningPart(text=THOUGHT)],
                                      tool_calls=[CALL] if tool else []))
    openai_server.enqueue_text("1")

    if stream:
        response = (await stream_of(openai_model, ask(tools=[ADD])))[1]
    else:
        response = await openai_model.request(ask(tools=[ADD]))
    await openai_model.request(next_turn(response, tool=tool))

    assert response.reasoning == [ReasoningPart(text=THOUGHT, provider="openai")]
    second = openai_server.requests[1]
    assert sent_reasoning(second) == []
    assert THOUGHT not in str(second)
    assert second["messages"][1]["content"] == response.text


async def test_deepseek_gets_its_reasoning_back_and_no_one_else_s(
    openai_server: FakeOpenAIServer, fast_retry: RetryPolicy
) -> None:
    # DeepSeek's thinking mode answers 400 to a tool loop whose reasoning_content is missing.
    openai_server.enqueue_reply(Reply(text="Adding.", reasoning=[ReasoningPart(text=THOUGHT)], tool_calls=[CALL]))
    openai_server.enqueue_text("1")
    model = OpenAIModel.preset("deepseek", "deepseek-reasoner", api_key="k", base_url=openai_server.base_url,
                               retry=fast_retry)
    async with model:
        response = (await stream_of(model, ask(tools=[ADD])))[1]
        request = next_turn(response, tool=True)
        foreign = ReasoningPart(text="not DeepSeek's", signature="s", provider="anthropic")
        request.messages[1] = Message("assistant", [foreign, *request.messages[1].parts])
        await model.request(request)

    assert response.reasoning == [ReasoningPart(text=THOUGHT, provider="deepseek")]
    assistant = openai_server.requests[1]["messages"][1]
    assert assistant["reasoning_content"] == THOUGHT
    assert "not DeepSeek's" not in str(openai_server.requests[1])


async def test_send_reasoning_overrides_the_preset(openai_server: FakeOpenAIServer, fast_retry: RetryPolicy) -> None:
    said = Message("assistant", [ReasoningPart(text=THOUGHT, provider="deepseek"), CALL])
    result = Message("tool", [ToolResultPart(call_id=CALL.id, content="1", name="add")])
    request = ModelRequest(messages=[Message.user("add 1"), said, result], tools=[ADD])
    openai_server.enqueue_text("1")
    openai_server.enqueue_text("1")
    kept_back = OpenAIModel.preset("deepseek", "deepseek-chat", api_key="k", base_url=openai_server.base_url,
                                   send_reasoning=False, retry=fast_retry)
    sent = OpenAIModel("qwen3", base_url=openai_server.base_url, provider="deepseek", send_reasoning=True,
                       retry=fast_retry)
    async with kept_back, sent:
        await kept_back.request(request)
        await sent.request(request)

    assert sent_reasoning(openai_server.requests[0]) == []
    assert sent_reasoning(openai_server.requests[1]) == [THOUGHT]


# --- the default stream ----------------------------------------------------------------


async def test_the_default_stream_yields_each_reasoning_part_whole_before_the_text() -> None:
    def answer(request: ModelRequest) -> ModelResponse:
        parts = [ReasoningPart(text=THOUGHT), ReasoningPart(data="opaque"), ReasoningPart(text=SECOND)]
        return ModelResponse(text="42", reasoning=parts)

    items, response = await stream_of(FunctionModel(answer), ask())

    assert [type(item) for item in items] == [ReasoningDelta, ReasoningDelta, TextDelta, ResponseDone]
    assert reasoning_of(items) == f"{THOUGHT}\n\n{SECOND}"
    assert len(response.reasoning) == 3
