"""A prompt on a cron schedule (issue 28): DBOS's scheduler fires it; each run is a durable run in the log."""

from __future__ import annotations

import pytest

from durable.test_dbos import dbos, unique  # noqa: F401 - `dbos` is a fixture
from hookline import ConfigError, SessionNotFound
from hookline.durable import WORKFLOW_KEY, DurableAgent
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import PostgresSessionStore
from support.waiting import await_until

pytestmark = pytest.mark.anyio


@pytest.mark.usefixtures("dbos")
async def test_a_scheduled_prompt_runs_at_each_tick_until_unscheduled(dsn: str) -> None:
    store = PostgresSessionStore(dsn)
    told: list[str] = []

    def answer(request: ModelRequest) -> ModelResponse:
        told.append(request.messages[-1].text)
        return ModelResponse(text=f"report {len(told)}")

    agent = DurableAgent(unique("reporter"), model=FunctionModel(answer), session_store=store)  # the default queue
    session_id, name = unique("daily"), unique("every-second")
    try:
        await agent.schedule(name, "* * * * * *", "write the report", session_id=session_id)

        async def two_runs() -> bool:
            try:
                prompts = [e.text for e in await store.events(session_id, view="prompt")]
            except SessionNotFound:  # before the first tick
                return False
            return prompts.count("write the report") >= 2

        await await_until(two_runs, "the schedule ran the prompt twice")
    finally:
        await agent.unschedule(name)
    log = await store.events(session_id, view="all")
    workflows = {e.metadata.get(WORKFLOW_KEY) for e in log}
    assert len(workflows) >= 2, "each tick a workflow of its own"
    assert None not in workflows, "every event of a run tagged with its workflow"
    assert set(told) == {"write the report"}
    await store.aclose()


@pytest.mark.usefixtures("dbos")
async def test_a_schedule_needs_a_shared_store() -> None:
    agent = DurableAgent(unique("local"), model=FunctionModel(lambda request: ModelResponse(text="x")))
    with pytest.raises(ConfigError, match="every worker shares"):
        await agent.schedule(unique("s"), "* * * * *", "hi", session_id="s")
