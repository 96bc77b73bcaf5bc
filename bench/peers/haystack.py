"""haystack: an `Agent` on a chat-generator component that plays the scenario's model."""

from __future__ import annotations

import asyncio
from importlib.metadata import version as installed
from typing import Any

from harness import Runner, Setup
from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage, ToolCall
from haystack.tools import create_tool_from_function
from scenario import SYSTEM_PROMPT, USER_PROMPT, check_run, fake_decision

NAME = "haystack"
PERSISTS = False


def version() -> str:
    """The installed haystack-ai."""
    return installed("haystack-ai")


def _tool_results(messages: list[ChatMessage]) -> int:
    return sum(len(m.tool_call_results) for m in messages)


@component
class FakeChatGenerator:
    """The scenario's model as a haystack chat generator (sync and async)."""

    def __init__(self, T: int, sleep_s: float) -> None:
        self.T, self.sleep_s = T, sleep_s

    def _reply(self, messages: list[ChatMessage]) -> dict[str, list[ChatMessage]]:
        decision = fake_decision(_tool_results(messages), self.T)
        if decision is None:
            return {"replies": [ChatMessage.from_assistant("done")]}
        calls = [ToolCall(tool_name="add", arguments=a, id=i) for i, a in decision]
        return {"replies": [ChatMessage.from_assistant(tool_calls=calls)]}

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, generation_kwargs: Any = None,
            streaming_callback: Any = None) -> dict[str, list[ChatMessage]]:
        return self._reply(messages)

    @component.output_types(replies=list[ChatMessage])
    async def run_async(self, messages: list[ChatMessage], tools: Any = None, generation_kwargs: Any = None,
                        streaming_callback: Any = None) -> dict[str, list[ChatMessage]]:
        if self.sleep_s:
            await asyncio.sleep(self.sleep_s)
        return self._reply(messages)


async def build(setup: Setup) -> Runner:
    """A haystack agent for the scenario."""
    agent = Agent(chat_generator=FakeChatGenerator(setup.T, setup.model_sleep_s), system_prompt=SYSTEM_PROMPT,
                  tools=[create_tool_from_function(setup.tool)], max_agent_steps=setup.T + 5)
    agent.warm_up()

    async def run_once() -> None:
        messages = (await agent.run_async(messages=[ChatMessage.from_user(USER_PROMPT)]))["messages"]
        check_run(messages[-1].text, _tool_results(messages), setup.T)

    return Runner(run_once)
