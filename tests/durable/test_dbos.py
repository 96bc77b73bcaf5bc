"""Durable runs in this process: DBOS launched once for the module, on a throwaway PostgreSQL database.

The runs go through real DBOS queues and workflows and a real `PostgresSessionStore`; the
kill-and-recover runs are in test_recovery.py.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from dbos import DBOS

from hookline import ConfigError, Event, Message, State, ToolCallPart, ToolResultPart, hook, tool
from hookline.durable import (
    WORKFLOW_KEY,
    DurableAgent,
    DurableModel,
    DurableTool,
    dbos_config,
    launched,
    register_queue,
)
from hookline.durable._steps import Replay
from hookline.durable.dbos import _recovery_approvals
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import PostgresSessionStore

POLL = 0.05  # seconds between two looks at a workflow's status


@pytest.fixture(scope="module")
def dbos(dsn: str) -> Iterator[None]:
    """DBOS launched on the module's database, with the queues the tests use."""
    with launched(dbos_config(dsn, app="hookline-in-process", version="t1", executor_id="in-process")):

        async def queues() -> None:
            await register_queue(polling_interval_sec=POLL)
            await register_queue("two-at-once", worker_concurrency=2, polling_interval_sec=POLL)

        asyncio.run(queues())
        yield


@pytest.fixture
async def store(dsn: str) -> Any:
    opened = PostgresSessionStore(dsn)
    yield opened
    await opened.aclose()


def adder_script(request: ModelRequest) -> ModelResponse:
    results = [r for m in request.messages for r in m.tool_results]
    if not results:
        return ModelResponse(tool_calls=[ToolCallPart(id="c1", name="add", arguments={"a": 2, "b": 3})])
    return ModelResponse(text=f"2 + 3 = {results[0].content}")


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.mark.anyio
@pytest.mark.usefixtures("dbos")
async def test_each_model_call_and_tool_call_is_a_step(store: PostgresSessionStore, dsn: str) -> None:
    agent = DurableAgent(unique("adder"), model=FunctionModel(adder_script), tools=[add],
                         session_store=PostgresSessionStore(dsn))
    session_id = unique("s")

    handle = await agent.start("2+3?", session_id=session_id)
    result = await handle.get_result(polling_interval_sec=POLL)

    assert (result.output, result.stop_reason) == ("2 + 3 = 5", "completed")
    steps = await DBOS.list_workflow_steps_async(handle.get_workflow_id())
    assert [s["function_name"] for s in steps] == ["hookline.model:function", "hookline.tool:add",
                                                   "hookline.model:function"]
    assert steps[1]["output"] == ToolResultPart(call_id="c1", content="5", name="add")
    assert steps[2]["output"][1].text == "2 + 3 = 5"  # (the request's fingerprint, the answer)
    log = await store.events(session_id, view="all")
    assert {e.metadata[WORKFLOW_KEY] for e in log} == {handle.get_workflow_id()}
    assert (await handle.get_status()).status == "SUCCESS"


@pytest.mark.anyio
@pytest.mark.usefixtures("dbos")
async def test_outside_a_workflow_it_is_an_ordinary_agent() -> None:
    agent = DurableAgent(unique("plain"), model=FunctionModel(adder_script), tools=[add])

    result = await agent.prompt("2+3?")

    assert result.output == "2 + 3 = 5"
    assert isinstance(agent.model, DurableModel)
    assert isinstance(agent.tools_for(State(agent, [])).get("add"), DurableTool)


@pytest.mark.anyio
@pytest.mark.usefixtures("dbos")
async def test_the_queue_limits_runs_at_once_and_runs_a_session_one_run_at_a_time(dsn: str) -> None:
    running: dict[str, int] = {}
    most = {"all": 0, "a": 0}

    @tool
    async def hold(session: str) -> str:
        """Hold the run a moment."""
        running[session] = running.get(session, 0) + 1
        most["all"] = max(most["all"], sum(running.values()))
        most["a"] = max(most["a"], running.get("a", 0))
        await asyncio.sleep(0.3)  # the tool's work: long enough for the queue to start others
        running[session] -= 1
        return "held"

    def script(request: ModelRequest) -> ModelResponse:
        if any(m.tool_results for m in request.messages):
            return ModelResponse(text="done")
        session = request.messages[-1].text
        return ModelResponse(tool_calls=[ToolCallPart(id="c1", name="hold", arguments={"session": session})])

    agent = DurableAgent(unique("held"), model=FunctionModel(script), tools=[hold], queue="two-at-once",
                         session_store=PostgresSessionStore(dsn))
    prefix = unique("s")
    handles = [await agent.start(name, session_id=f"{prefix}-{name}") for name in ("a", "a", "b", "c")]

    results = [await h.get_result(polling_interval_sec=POLL) for h in handles]

    assert [r.output for r in results] == ["done"] * 4
    assert most == {"all": 2, "a": 1}


@pytest.mark.anyio
@pytest.mark.usefixtures("dbos")
@pytest.mark.parametrize(("asked", "answer"), [(3, True), (300, {"args": {"n": 3}})], ids=["approved", "edited"])
async def test_a_paused_run_is_resumed_durably_and_its_call_runs_once(dsn: str, asked: int, answer: Any) -> None:
    ran: list[int] = []

    @tool
    def delete(n: int) -> str:
        """Delete n things."""
        ran.append(n)
        return f"deleted {n}"

    @hook
    def ask_first(state: State) -> None:
        for call in state.tool_calls:
            state.interrupt(call.id, "deleting needs approval")

    def script(request: ModelRequest) -> ModelResponse:
        results = [r for m in request.messages for r in m.tool_results]
        if not results:
            return ModelResponse(tool_calls=[ToolCallPart(id="d1", name="delete", arguments={"n": asked})])
        return ModelResponse(text=results[0].content)

    agent = DurableAgent(unique("deleter"), model=FunctionModel(script), tools=[delete],
                         hooks={"before_tool": [ask_first]}, session_store=PostgresSessionStore(dsn))
    session_id = unique("s")

    paused = await (await agent.start("delete", session_id=session_id)).get_result(polling_interval_sec=POLL)
    assert paused.stop_reason == "interrupted"
    assert [i.reason for i in paused.interruptions] == ["deleting needs approval"]
    resumed = await (await agent.start_resume(session_id, {"d1": answer})).get_result(polling_interval_sec=POLL)

    assert (resumed.stop_reason, resumed.output) == ("completed", "deleted 3")
    assert ran == [3]  # with an edit: the user's arguments, not the model's


@pytest.mark.anyio
@pytest.mark.usefixtures("dbos")
async def test_a_failed_run_fails_its_workflow(dsn: str) -> None:
    def broken(request: ModelRequest) -> ModelResponse:
        raise RuntimeError("the provider is down")

    agent = DurableAgent(unique("broken"), model=FunctionModel(broken), session_store=PostgresSessionStore(dsn))
    handle = await agent.start("hi", session_id=unique("s"))

    with pytest.raises(RuntimeError, match="the provider is down"):
        await handle.get_result(polling_interval_sec=POLL)
    assert (await handle.get_status()).status == "ERROR"


@pytest.mark.anyio
@pytest.mark.usefixtures("dbos")
async def test_mistakes_are_named_before_anything_is_queued(dsn: str) -> None:
    store = PostgresSessionStore(dsn)
    unqueued = DurableAgent(unique("a"), model=FunctionModel(adder_script), queue="nobody-registered-it",
                            session_store=store)
    with pytest.raises(ConfigError, match=r"register_queue\('nobody-registered-it'"):
        await unqueued.start("hi", session_id="s")
    forgetful = DurableAgent(unique("a"), model=FunctionModel(adder_script))
    with pytest.raises(ConfigError, match="PostgresSessionStore"):
        await forgetful.start("hi", session_id="s")
    agent = DurableAgent(unique("a"), model=FunctionModel(adder_script), session_store=store)
    with pytest.raises(ConfigError, match="prompt is empty"):
        await agent.start("  ", session_id="s")
    with pytest.raises(ConfigError, match="approval for call 'c1'"):
        await agent.start_resume("s", {"c1": 1})  # type: ignore[dict-item]
    assert await DBOS.list_workflows_async(name=f"hookline.agent.{agent.name}") == []


def test_the_configuration_pins_a_version_on_the_stores_database() -> None:
    config = dbos_config("postgres://u@db:5432/app", app="support", version="2024-06-01", executor_id="w1")
    assert config == {"name": "support", "system_database_url": "postgresql://u@db:5432/app",
                      "application_version": "2024-06-01", "log_level": "WARNING", "executor_id": "w1"}
    with pytest.raises(ConfigError, match="pin the application version"):
        dbos_config("postgresql://u@db/app", app="support", version="")


def test_recovery_spends_the_approvals_of_started_calls_and_takes_checkpointed_results() -> None:
    calls = [ToolCallPart(id=c, name="t", arguments={}) for c in ("started", "checkpointed", "waiting")]
    log = [
        Event.from_message(Message.user("go"), "user"),
        Event.from_message(Message(role="assistant", parts=calls), "agent"),
        Event.marker("t", call_id="started", started=True),
        Event.marker("t", call_id="checkpointed", started=True),
    ]
    replay = Replay(results={"checkpointed": ToolResultPart(call_id="checkpointed", content="ok", name="t")})
    user = {"started": True, "waiting": True, "refused": False}

    assert _recovery_approvals(user, log, replay, begun=True) == {
        "waiting": True, "refused": False, "checkpointed": True
    }
    assert _recovery_approvals(user, log, replay, begun=False) == {**user, "checkpointed": True}


def test_the_checkpoints_a_recovered_run_may_take() -> None:
    def step(fid: int, name: str, output: Any) -> Any:
        return {"function_id": fid, "function_name": name, "output": output, "error": None,
                "child_workflow_id": None, "child_shard_key": None,
                "started_at_epoch_ms": None, "completed_at_epoch_ms": None}

    old = ToolResultPart(call_id="c1", content="old turn", name="t")
    new = ToolResultPart(call_id="c1", content="this turn", name="t")
    answer = ("digest", ModelResponse(text="hi"))
    replay = Replay.from_steps([step(4, "hookline.tool:t", new), step(3, "hookline.model:m", answer),
                                step(2, "hookline.tool:t", old), step(1, "hookline.model:m", answer)])
    assert replay.results == {"c1": new}  # only after the last model step: a call id may be reused
    assert replay.answer is None  # the last step is no model call: its answer is in the log
    assert replay.take_result(ToolCallPart(id="c1", name="other", arguments={})) is None
    assert replay.take_result(ToolCallPart(id="c1", name="t", arguments={})) == new
    assert replay.take_result(ToolCallPart(id="c1", name="t", arguments={})) is None  # once

    answered = Replay.from_steps([step(1, "hookline.tool:t", old), step(2, "hookline.model:m", answer)])
    assert answered.results == {}
    assert answered.take_answer("another digest") is None
    assert answered.take_answer("digest") is None  # only the first model call may take it
    assert Replay.from_steps([step(2, "hookline.model:m", answer)]).take_answer("digest") == answer[1]
