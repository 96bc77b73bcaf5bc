"""Reasoning round trips: Anthropic's thinking blocks kept in the log and sent back unchanged.

Extended thinking with tool use requires the thinking blocks, with their signatures, back
on the next call; each adapter sends back only the reasoning its own provider produced and
leaves any other out. The Responses API's reasoning items are tested in
test_openai_responses.py.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import pytest

from hookline import Agent, Message, ModelSettings, ReasoningPart, StatusOptions, TextPart, tool
from hookline._cli.render import event_lines
from hookline.events import Event
from hookline.messages import ToolCallPart, ToolResultPart
from hookline.models import FunctionModel, Model, ModelRequest, ModelResponse, ToolSpec
from hookline.models.anthropic import AnthropicModel
from hookline.models.openai import OpenAIModel
from hookline.testing import FakeAnthropicServer, FakeOpenAIServer, Reply
from hookline.tracing._content import response_content

pytestmark = pytest.mark.anyio

Collect = Callable[[Model, ModelRequest], Awaitable[tuple[list[str], ModelResponse]]]

ADD = ToolSpec(name="add", parameters={"type": "object", "properties": {"a": {"type": "integer"}}})
THINKING = ReasoningPart(text="I should add these with the tool.", signature="EqQBCgIYAhIM-signature")
REDACTED = ReasoningPart(data="EmwKAhgBEgy3va-redacted")
CALL = ToolCallPart(id="toolu_1", name="add", arguments={"a": 1})


def anthropic(part: ReasoningPart) -> ReasoningPart:
    return part.model_copy(update={"provider": "anthropic"})


def follow_up(response: ModelResponse) -> ModelRequest:
    """The next call after `response`'s tool call was answered."""
    result = Message("tool", [ToolResultPart(call_id=CALL.id, content="1", name="add")])
    return ModelRequest(messages=[Message.user("add 1"), response.to_message(), result], tools=[ADD])


async def test_thinking_blocks_become_reasoning_and_go_back_first_and_unchanged(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    anthropic_server.enqueue_reply(Reply(text="Adding.", reasoning=[THINKING, REDACTED], tool_calls=[CALL]))
    anthropic_server.enqueue_text("1")

    response = await anthropic_model.request(ModelRequest(messages=[Message.user("add 1")], tools=[ADD]))
    await anthropic_model.request(follow_up(response))

    assert response.reasoning == [anthropic(THINKING), anthropic(REDACTED)]
    assert response.text == "Adding."
    assert response.to_message().text == "Adding."
    assistant = anthropic_server.requests[1]["messages"][1]
    assert assistant == {"role": "assistant", "content": [
        {"type": "thinking", "thinking": THINKING.text, "signature": THINKING.signature},
        {"type": "redacted_thinking", "data": REDACTED.data},
        {"type": "text", "text": "Adding."},
        {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1}},
    ]}


async def test_a_streamed_thinking_block_is_assembled_with_its_signature(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel, collect: Collect
) -> None:
    anthropic_server.enqueue_reply(Reply(text="Adding.", reasoning=[THINKING, REDACTED], tool_calls=[CALL]))
    anthropic_server.enqueue_text("1")

    deltas, response = await collect(anthropic_model, ModelRequest(messages=[Message.user("add 1")], tools=[ADD]))
    await collect(anthropic_model, follow_up(response))

    assert "".join(deltas) == "Adding."
    assert response.reasoning == [anthropic(THINKING), anthropic(REDACTED)]
    sent = anthropic_server.requests[1]["messages"][1]["content"]
    assert sent[0] == {"type": "thinking", "thinking": THINKING.text, "signature": THINKING.signature}


async def test_anthropic_leaves_out_reasoning_it_did_not_sign(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    anthropic_server.enqueue_text("ok")
    foreign = ReasoningPart(text="summary", id="rs_1", data="gAAAA", provider="openai-responses")
    unsigned = ReasoningPart(text="no signature", provider="anthropic")
    untagged = ReasoningPart(text="from a script")
    said = Message("assistant", [foreign, unsigned, untagged, TextPart(text="hello")])

    await anthropic_model.request(ModelRequest(messages=[Message.user("hi"), said, Message.user("and?")]))

    assert anthropic_server.requests[0]["messages"][1] == {"role": "assistant", "content": [
        {"type": "text", "text": "hello"}
    ]}


async def test_chat_completions_sends_no_reasoning(openai_server: FakeOpenAIServer, openai_model: OpenAIModel) -> None:
    openai_server.enqueue_text("ok")
    said = Message("assistant", [anthropic(THINKING), TextPart(text="hello"), CALL])
    result = Message("tool", [ToolResultPart(call_id=CALL.id, content="1", name="add")])

    await openai_model.request(ModelRequest(messages=[Message.user("hi"), said, result], tools=[ADD]))

    assistant = openai_server.requests[0]["messages"][1]
    assert assistant["content"] == "hello"
    assert THINKING.text not in str(openai_server.requests[0])


def test_reasoning_is_no_part_of_the_text_views() -> None:
    message = Message("assistant", [THINKING, TextPart(text="answer")])
    event = Event.from_message(message, "agent")

    assert (message.text, event.text) == ("answer", "answer")
    assert Message("assistant", [THINKING]).text == ""
    assert Message.model_validate_json(message.model_dump_json()) == message


@tool
def add(a: int) -> int:
    """Return a."""
    return a


async def run_agent(agent: Agent, path: str) -> tuple[str, list[Event]]:
    request = agent.prompt("add 1").session("s-1")
    if path == "stream":
        async for _ in request.stream():
            pass
        assert request.result is not None
        output = request.result.output
    else:
        output = (await request).output
    return output, await agent.session_store.events("s-1", view="ui")


@pytest.mark.parametrize("path", ["await", "stream"])
async def test_an_agent_with_thinking_and_tools_keeps_going(anthropic_server: FakeAnthropicServer, path: str) -> None:
    anthropic_server.enqueue_reply(Reply(reasoning=[THINKING], tool_calls=[CALL]))
    anthropic_server.enqueue_reply(Reply(text="It is 1.", reasoning=[ReasoningPart(text="Done.", signature="s2")]))
    model = AnthropicModel("claude-sonnet-4-6", base_url=anthropic_server.base_url, api_key="k")
    agent = Agent(model=model, tools=[add], model_settings=ModelSettings(reasoning_effort="low"))
    async with model:
        output, log = await run_agent(agent, path)

    assert output == "It is 1."
    second = anthropic_server.requests[1]
    assert second["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert second["messages"][1]["content"][0] == {
        "type": "thinking", "thinking": THINKING.text, "signature": THINKING.signature
    }
    stored = [part for event in log for part in event.parts if isinstance(part, ReasoningPart)]
    assert stored == [anthropic(THINKING), anthropic(ReasoningPart(text="Done.", signature="s2"))]
    assert not any(event.kind == "status" and "thinking:" in event.text for event in log)


def answers_with_reasoning(request: ModelRequest) -> ModelResponse:
    return ModelResponse(text="42", reasoning=[ReasoningPart(text="Six times seven."), ReasoningPart(data="opaque")])


@pytest.mark.parametrize("shown", [True, False])
async def test_status_options_decide_whether_reasoning_shows_as_status(shown: bool) -> None:
    agent = Agent(model=FunctionModel(answers_with_reasoning), status=StatusOptions(reasoning=shown))

    result = await agent.prompt("6*7?").session("s-1")
    log = await agent.session_store.events("s-1", view="ui")

    assert result.output == "42"
    lines = [event.text for event in log if event.kind == "status" and event.source == "llm"]
    assert ("thinking: Six times seven." in lines) is shown
    assert len(lines) == (2 if shown else 1)  # the answer's line, and one per reasoning part that shows text
    prompt_view = await agent.session_store.events("s-1", view="prompt")
    assert all(event.kind == "message" for event in prompt_view)


async def test_reasoning_status_needs_llm_status() -> None:
    agent = Agent(model=FunctionModel(answers_with_reasoning), status=StatusOptions(llm=False, reasoning=True))

    await agent.prompt("6*7?").session("s-1")
    log = await agent.session_store.events("s-1", view="ui")

    assert not [event for event in log if event.kind == "status" and event.source == "llm"]


def test_the_cli_and_traces_show_a_reasoning_part() -> None:
    said = Event.from_message(Message("assistant", [THINKING, REDACTED, TextPart(text="answer")]), "agent")
    lines = [line.plain for line in event_lines(said)]
    traced = response_content(ModelResponse(text="answer", reasoning=[THINKING]))

    assert f"thinking: {THINKING.text}" in "\n".join(lines)
    assert "thinking: (hidden)" in "\n".join(lines)
    assert json.loads(traced)[0]["parts"][0] == {"type": "reasoning", "content": THINKING.text}
