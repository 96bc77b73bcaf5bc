"""A model used from several event loops: `run_sync` calls, then `asyncio.run`, then `run_sync`."""

from __future__ import annotations

import asyncio
import gc
import weakref

import httpx2

from hookline import Agent
from hookline.messages import Message
from hookline.models import ModelRequest
from hookline.models.anthropic import AnthropicModel
from hookline.models.openai import OpenAIModel
from hookline.testing import FakeAnthropicServer, FakeOpenAIServer


def test_openai_model_serves_run_sync_twice_and_another_loop(openai_server: FakeOpenAIServer) -> None:
    for text in ("one", "two", "three", "four"):
        openai_server.enqueue_text(text)
    agent = Agent(model=OpenAIModel("gpt-4o-mini", base_url=openai_server.base_url, api_key="k"))

    async def elsewhere() -> str:
        try:
            return str((await agent.prompt("c")).output)
        finally:
            await agent.model.aclose()

    outputs = [agent.prompt("a").run_sync().output, agent.prompt("b").run_sync().output]
    outputs.append(asyncio.run(elsewhere()))
    outputs.append(agent.prompt("d").run_sync().output)
    agent.close_sync()
    assert outputs == ["one", "two", "three", "four"]


def test_anthropic_model_serves_run_sync_twice(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.enqueue_text("one")
    anthropic_server.enqueue_text("two")
    agent = Agent(model=AnthropicModel("claude-haiku-4-5", base_url=anthropic_server.base_url, api_key="k"))
    outputs = [agent.prompt(p).run_sync().output for p in ("a", "b")]
    agent.close_sync()
    assert outputs == ["one", "two"]


def ask() -> ModelRequest:
    return ModelRequest(messages=[Message.user("hi")])


def test_a_model_client_is_closed_when_its_loop_shuts_down(openai_server: FakeOpenAIServer) -> None:
    openai_server.enqueue_text("one")
    openai_server.enqueue_text("two")
    model = OpenAIModel("gpt-4o-mini", base_url=openai_server.base_url, api_key="k")
    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []

    async def call() -> str:
        loops.append(weakref.ref(asyncio.get_running_loop()))
        return (await model.request(ask())).text

    assert asyncio.run(call()) == "one"
    first = model._clients.client
    assert first.is_closed()  # closed by asyncio.run's shutdown, though nobody called aclose()
    assert asyncio.run(call()) == "two"  # the next loop gets a client of its own
    assert model._clients.client is not first
    assert model._clients.client.is_closed()
    gc.collect()
    assert [loop() for loop in loops] == [None, None]  # nor does the model keep the loops alive


def test_an_http_client_the_caller_passed_is_left_open(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.enqueue_text("one")
    http_client = httpx2.AsyncClient()
    model = AnthropicModel("claude-haiku-4-5", base_url=anthropic_server.base_url, api_key="k", http_client=http_client)

    async def call() -> tuple[str, bool]:
        async with http_client:
            text = (await model.request(ask())).text
            await model.aclose()
            await model.aclose()  # twice is harmless
            return text, http_client.is_closed

    assert asyncio.run(call()) == ("one", False)
