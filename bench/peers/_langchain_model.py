"""The scenario's model as a langchain chat model, shared by the langgraph and langchain adapters."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from scenario import fake_decision


def tool_results(messages: list[BaseMessage]) -> int:
    """How many tool results `messages` hold."""
    return sum(isinstance(m, ToolMessage) for m in messages)


class FakeChatModel(BaseChatModel):
    """Answers as the scenario says; `bind_tools` keeps it as it is (the agent still converts the tools)."""

    T: int = 10
    sleep_s: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "add-loop-fake"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _reply(self, messages: list[BaseMessage]) -> ChatResult:
        decision = fake_decision(tool_results(messages), self.T)
        if decision is None:
            message = AIMessage(content="done")
        else:
            calls = [{"name": "add", "args": a, "id": i, "type": "tool_call"} for i, a in decision]
            message = AIMessage(content="", tool_calls=calls)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        return self._reply(messages)

    async def _agenerate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                         **kwargs: Any) -> ChatResult:
        if self.sleep_s:
            await asyncio.sleep(self.sleep_s)
        return self._reply(messages)
