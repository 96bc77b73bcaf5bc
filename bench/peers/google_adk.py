"""google-adk: an `LlmAgent` on a `BaseLlm` subclass that plays the scenario's model, run by a `Runner`.

Sessions live in an `InMemorySessionService` (each run's is deleted afterwards, so that the
service does not grow over hundreds of runs). Persistence (`seqdb`): a `DatabaseSessionService`
on a SQLite file through aiosqlite, a fresh session per run. The model reports token usage,
as a real one does: without it ADK logs a warning every turn.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import AsyncGenerator
from importlib.metadata import version as installed
from itertools import count
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService, DatabaseSessionService, InMemorySessionService
from google.genai import types
from harness import Runner as BenchRunner
from harness import Setup
from scenario import SYSTEM_PROMPT, USER_PROMPT, check_run, fake_decision

NAME = "google-adk"
PERSISTS = True

warnings.filterwarnings("ignore")  # experimental-feature warnings, once per process
USAGE = types.GenerateContentResponseUsageMetadata(prompt_token_count=10, candidates_token_count=5,
                                                   total_token_count=15)


def version() -> str:
    """The installed google-adk."""
    return installed("google-adk")


def _tool_results(contents: list[types.Content]) -> int:
    return sum(p.function_response is not None for c in contents for p in c.parts or [])


class FakeLlm(BaseLlm):
    """The scenario's model behind ADK's model interface."""

    T: int = 10
    sleep_s: float = 0.0

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[LlmResponse]:
        if self.sleep_s:
            await asyncio.sleep(self.sleep_s)
        decision = fake_decision(_tool_results(llm_request.contents), self.T)
        if decision is None:
            parts = [types.Part(text="done")]
        else:
            parts = [types.Part(function_call=types.FunctionCall(id=i, name="add", args=a)) for i, a in decision]
        yield LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=USAGE)


def _service(setup: Setup) -> BaseSessionService:
    if setup.db_path is None:
        return InMemorySessionService()
    return DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{setup.db_path}")


async def build(setup: Setup) -> BenchRunner:
    """An ADK agent and runner for the scenario."""
    agent = LlmAgent(name="calc", model=FakeLlm(model="fake", T=setup.T, sleep_s=setup.model_sleep_s),
                     instruction=SYSTEM_PROMPT, tools=[setup.tool])
    service = _service(setup)
    runner = Runner(app_name="bench", agent=agent, session_service=service)
    prompt = types.Content(role="user", parts=[types.Part(text=USER_PROMPT)])
    ids = count()

    async def run_once() -> None:
        session = f"s{next(ids)}"
        await service.create_session(app_name="bench", user_id="u", session_id=session)
        output, results = None, 0
        async for event in runner.run_async(user_id="u", session_id=session, new_message=prompt):
            for part in (event.content.parts if event.content else None) or []:
                results += part.function_response is not None
                output = part.text or output
        check_run(output, results, setup.T)
        if setup.db_path is None:
            await service.delete_session(app_name="bench", user_id="u", session_id=session)

    return BenchRunner(run_once, runner.close)
