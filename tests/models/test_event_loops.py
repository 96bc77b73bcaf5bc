"""A model used from several event loops: `run_sync` calls, then `asyncio.run`, then `run_sync`."""

from __future__ import annotations

import asyncio

from hookline import Agent
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
