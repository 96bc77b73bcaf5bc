"""The loop streams the model's reasoning as `delta` events when `StatusOptions(reasoning=True)`, and stores none.

A reasoning delta is a `kind="delta"` event holding one `ReasoningPart` and marked
`metadata["reasoning"]`; its `text` (which joins text parts only) is empty, so code that
shows `event.text` of every delta shows the answer alone. The reasoning itself is stored
whole, in the assistant message, whether it streamed or not.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from hookline import Agent, Event, ReasoningPart, StatusOptions
from hookline.models import Model
from hookline.models.anthropic import AnthropicModel
from hookline.models.openai import OpenAIModel
from hookline.sessions import SQLiteSessionStore
from hookline.testing import FakeAnthropicServer, FakeOpenAIServer, Reply
from hookline.testing._serve import ScriptedServer

pytestmark = pytest.mark.anyio

THOUGHT = "Six times seven is forty-two; no tool needed."


@pytest.fixture(params=["openai", "anthropic"])
def server(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    fake: ScriptedServer = FakeOpenAIServer() if request.param == "openai" else FakeAnthropicServer()
    with fake:
        yield fake
        fake.assert_complete()


@pytest.fixture
async def model(server: ScriptedServer) -> AsyncIterator[Model]:
    made: Model
    if isinstance(server, FakeOpenAIServer):
        made = OpenAIModel("qwen3", base_url=server.base_url, api_key="k")
    else:
        made = AnthropicModel("claude-sonnet-4-6", base_url=server.base_url, api_key="k")
    async with made:
        yield made


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteSessionStore]:
    opened = SQLiteSessionStore(tmp_path / "sessions.db")
    yield opened
    await opened.aclose()


async def streamed(model: Model, store: SQLiteSessionStore, status: StatusOptions) -> list[Event]:
    agent = Agent(name="calc", model=model, status=status, session_store=store)
    return [event async for event in agent.prompt("6*7?").session("s-1").stream()]


def reasoning_deltas(events: list[Event]) -> list[Event]:
    return [event for event in events if event.kind == "delta" and event.metadata.get("reasoning")]


async def test_reasoning_streams_as_delta_events_before_the_text(
    server: ScriptedServer, model: Model, store: SQLiteSessionStore
) -> None:
    server.enqueue_reply(Reply(text="42", reasoning=[ReasoningPart(text=THOUGHT, signature="sig-1")]))

    events = await streamed(model, store, StatusOptions(reasoning=True))

    thinking = reasoning_deltas(events)
    assert len(thinking) > 1
    assert all(event.author == "calc" for event in thinking)
    assert all(type(event.parts[0]) is ReasoningPart and event.text == "" for event in thinking)
    assert "".join(event.parts[0].text for event in thinking) == THOUGHT
    deltas = [event for event in events if event.kind == "delta"]
    text = [event for event in deltas if not event.metadata.get("reasoning")]
    assert "".join(event.text for event in deltas) == "".join(event.text for event in text) == "42"
    assert deltas.index(text[0]) > deltas.index(thinking[-1])


async def test_reasoning_deltas_need_the_reasoning_status_option(
    server: ScriptedServer, model: Model, store: SQLiteSessionStore
) -> None:
    server.enqueue_reply(Reply(text="42", reasoning=[ReasoningPart(text=THOUGHT, signature="sig-1")]))

    events = await streamed(model, store, StatusOptions())

    assert reasoning_deltas(events) == []
    assert "".join(event.text for event in events if event.kind == "delta") == "42"
    stored = await store.events("s-1", view="all")
    assert [part.text for event in stored for part in event.parts if isinstance(part, ReasoningPart)] == [THOUGHT]


async def test_no_delta_is_stored_and_the_reasoning_is_stored_whole(
    server: ScriptedServer, model: Model, store: SQLiteSessionStore
) -> None:
    server.enqueue_reply(Reply(text="42", reasoning=[ReasoningPart(text=THOUGHT, signature="sig-1")]))

    events = await streamed(model, store, StatusOptions(reasoning=True))
    stored = await store.events("s-1", view="all")

    assert reasoning_deltas(events)
    assert [event.kind for event in stored if event.kind == "delta"] == []
    assert not any(event.metadata.get("reasoning") for event in stored)
    answer = next(event for event in stored if event.kind == "message" and event.role == "assistant")
    assert answer.parts[0] == ReasoningPart(text=THOUGHT, signature=answer.parts[0].signature,
                                            provider=model.provider)
    assert answer.text == "42"
    assert f"thinking: {THOUGHT}" in [event.text for event in stored if event.kind == "status"]
