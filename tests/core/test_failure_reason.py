"""A failed run's last line says why, in its metadata, so a reader who comes later learns the reason.

Before, the reason went only to the stream's readers, and the server wrote it into the log
after the run under the run lock, which raced with the next run of the session.
"""

from __future__ import annotations

import pytest

from hookline import Agent, HookError, ModelError, State, StatusOptions, hook
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions.memory import InMemorySessionStore

pytestmark = pytest.mark.anyio


def failing_model(message: str) -> FunctionModel:
    def answer(request: ModelRequest) -> ModelResponse:
        raise ModelError(message, status_code=503, provider="function")

    return FunctionModel(answer)


async def test_the_run_failed_line_carries_the_error_without_secrets() -> None:
    store = InMemorySessionStore()
    agent = Agent(model=failing_model("upstream https://bob:hunter2@api.example/v1 is down"), session_store=store)
    with pytest.raises(ModelError):
        await agent.prompt("hi").session("s")
    last = (await store.events("s", view="ui"))[-1]
    assert last.text == "run failed"
    assert last.metadata["error"]["type"] == "ModelError"
    assert last.metadata["error"]["status_code"] == 503
    assert "is down" in last.metadata["error"]["message"]
    assert "hunter2" not in last.metadata["error"]["message"]


async def test_a_hook_error_names_its_hook_and_point_even_with_agent_status_off() -> None:
    @hook(name="explode")
    def explode(state: State) -> None:
        raise RuntimeError("boom")

    store = InMemorySessionStore()
    agent = Agent(model=failing_model("unused"), hooks={"before_llm": [explode]}, session_store=store,
                  status=StatusOptions(agent=False))
    with pytest.raises(HookError):
        await agent.prompt("hi").session("s")
    (marker,) = [e for e in await store.events("s", view="all") if e.metadata.get("error")]
    assert marker.kind == "marker"
    assert (marker.metadata["error"]["hook"], marker.metadata["error"]["point"]) == ("explode", "before_llm")
