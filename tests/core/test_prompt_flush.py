"""The prompt is stored with the first model call's flush when nothing reads the conversation before it (issue 28).

One transaction fewer per run. The model still gets the prompt as stored, the user's
prepared parts merged in first; a hook that runs before the model call gets it so too,
since then the prompt is stored on its own, first, as before.
"""

from __future__ import annotations

import pytest

from hookline import Agent, Event, HookPoint, Message, State, TextPart, hook
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import InMemorySessionStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _texts(message: Message) -> list[str]:
    return [p.text for p in message.parts if isinstance(p, TextPart)]


async def _prepared_store() -> InMemorySessionStore:
    store = InMemorySessionStore()
    await store.create(session_id="s")
    await store.prepare_event("s", Event(author="user", kind="message", role="user", parts=[TextPart(text="noted: ")]))
    return store


async def test_without_hooks_the_prompt_is_stored_with_the_model_call_and_the_model_gets_it_merged() -> None:
    store = await _prepared_store()
    seen: list[list[str]] = []

    def answer(request: ModelRequest) -> ModelResponse:
        seen.append(_texts(request.messages[-1]))
        return ModelResponse(text="ok")

    result = await Agent("a", model=FunctionModel(answer), session_store=store).prompt("go").session("s")
    assert seen == [["noted: ", "go"]]
    assert _texts(result.messages[0]) == ["noted: ", "go"]
    log = await store.events("s")
    assert [(e.seq, e.text) for e in log[:2]] == [(1, "noted: go"), (2, "turn 1: calling model")]
    assert log[0].created_at == log[1].created_at, "one append"


async def test_a_hook_before_the_model_call_sees_the_stored_prompt() -> None:
    store = await _prepared_store()
    seen: list[list[str]] = []

    @hook
    def look(state: State) -> None:
        seen.append(_texts(state.messages[-1]))

    agent = Agent("a", model=FunctionModel(lambda request: ModelResponse(text="ok")), session_store=store,
                  hooks={HookPoint.BEFORE_RUN: [look]})
    await agent.prompt("go").session("s")
    assert seen == [["noted: ", "go"]]
    log = await store.events("s")
    assert log[0].created_at != log[1].created_at, "the prompt was stored first, on its own"
