"""openai-agents: an `Agent` on a `Model` subclass whose `get_response` plays the scenario's model.

Tracing is switched off (the scenario measures no exporter). Persistence (`seqdb`): a
`SQLiteSession` on one file, a fresh session id per run.
"""

from __future__ import annotations

import asyncio
import json
from importlib.metadata import version as installed
from itertools import count
from typing import Any

from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from harness import Runner as BenchRunner
from harness import Setup
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from scenario import SYSTEM_PROMPT, USER_PROMPT, check_run, fake_decision

NAME = "openai-agents"
PERSISTS = True

set_tracing_disabled(True)


def version() -> str:
    """The installed openai-agents."""
    return installed("openai-agents")


def _tool_results(items: Any) -> int:
    if isinstance(items, str):
        return 0
    kinds = (i.get("type") if isinstance(i, dict) else getattr(i, "type", None) for i in items)
    return sum(kind == "function_call_output" for kind in kinds)


def _final() -> ResponseOutputMessage:
    text = ResponseOutputText(type="output_text", text="done", annotations=[])
    return ResponseOutputMessage(id="msg_done", type="message", role="assistant", status="completed", content=[text])


class FakeModel(Model):
    """The scenario's model behind the SDK's model interface."""

    def __init__(self, T: int, sleep_s: float) -> None:
        self.T, self.sleep_s = T, sleep_s

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        if self.sleep_s:
            await asyncio.sleep(self.sleep_s)
        decision = fake_decision(_tool_results(input), self.T)
        if decision is None:
            return ModelResponse(output=[_final()], usage=Usage(), response_id=None)
        calls = [ResponseFunctionToolCall(type="function_call", id=f"fc_{i}", call_id=i, name="add",
                                          arguments=json.dumps(a), status="completed") for i, a in decision]
        return ModelResponse(output=calls, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the scenario does not stream")


async def build(setup: Setup) -> BenchRunner:
    """An openai-agents agent for the scenario."""
    agent = Agent(name="calc", instructions=SYSTEM_PROMPT, model=FakeModel(setup.T, setup.model_sleep_s),
                  tools=[function_tool(setup.tool)])
    ids = count()

    async def run_once() -> None:
        session = SQLiteSession(f"s{next(ids)}", setup.db_path) if setup.db_path is not None else None
        result = await Runner.run(agent, USER_PROMPT, session=session, max_turns=setup.T + 5)
        check_run(result.final_output, _tool_results(result.to_input_list()), setup.T)
        if session is not None:
            session.close()

    return BenchRunner(run_once)
