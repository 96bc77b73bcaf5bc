"""Approvals that edit a paused call's arguments (issue 13, item 7): `{call_id: {"args": {...}}}`
runs the call with the user's arguments, checked against the tool's schema first and recorded as
the user's edit before the call runs; `{"approve": False, "reason": ...}` refuses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookline import Agent, ConfigError, Event, State, ToolCallPart, hook, tool
from hookline.sessions import InMemorySessionStore, SessionStore, SQLiteSessionStore
from support.run_paths import PATHS, run_by

from .scripted import Script, answer, call, calls

pytestmark = pytest.mark.anyio

DEPLOYED: list[tuple[str, int]] = []


@tool
def deploy(target: str, replicas: int = 1) -> str:
    """Deploy to a target."""
    DEPLOYED.append((target, replicas))
    return f"deployed to {target} x{replicas}"


@hook
def pause(state: State) -> None:
    for pending in state.tool_calls:
        state.interrupt(pending.id, "a human decides")


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SessionStore:
    return InMemorySessionStore() if request.param == "memory" else SQLiteSessionStore(tmp_path / "s.db")


@pytest.fixture(autouse=True)
def _clear() -> None:
    DEPLOYED.clear()


async def _paused(store: SessionStore, script: Script, hooks: dict[str, list[object]] | None = None) -> Agent:
    """An agent whose run on session "s" (ann's) paused its calls; the agent to resume it with (`hooks`)."""
    agent = Agent(model=script.model, tools=[deploy], session_store=store, hooks={"before_tool": [pause]})
    result = await agent.prompt("ship it").session("s", user="ann")
    assert result.stop_reason == "interrupted"
    return Agent(model=script.model, tools=[deploy], session_store=store, hooks=hooks)


@pytest.mark.parametrize("path", PATHS)
async def test_an_edit_runs_the_call_with_the_users_arguments(store: SessionStore, path: str) -> None:
    script = Script(calls(call("c1", "deploy", target="prod")), answer("done"))
    agent = await _paused(store, script)
    request = agent.resume("s", approvals={"c1": {"args": {"target": "staging", "replicas": 2}}})
    result, _ = await run_by(path, request)

    assert (result.stop_reason, result.output) == ("completed", "done")
    assert DEPLOYED == [("staging", 2)]
    assert [r.content for r in script.results(2)] == ["deployed to staging x2"]
    assert script.requests[1].messages[1].tool_calls[0].arguments == {"target": "prod"}, "the model's call stays"


async def test_the_edit_is_on_record_as_the_users_before_the_call_starts(store: SessionStore) -> None:
    script = Script(calls(call("c1", "deploy", target="prod")), answer("done"))
    agent = await _paused(store, script)
    await agent.resume("s", approvals={"c1": {"args": {"target": "staging"}}})

    log = await store.events("s", view="all")
    (edit,) = [e for e in log if "edited_call" in e.metadata]
    started = next(e for e in log if e.metadata.get("started") and e.seq > edit.seq)  # type: ignore[operator]
    result = next(e for e in log if e.role == "tool")
    assert edit.seq < started.seq < result.seq  # type: ignore[operator]
    assert (edit.author, edit.kind) == ("user", "status")
    assert edit.parts[1] == ToolCallPart(id="c1", name="deploy", arguments={"target": "staging"})
    assert edit.metadata == {"edited_call": "c1", "arguments": {"target": "staging"},
                             "original_arguments": {"target": "prod"}, "user": "ann"}
    assert edit.text == "ann edited the arguments of deploy: target='staging' (the model asked for target='prod')"
    assert started.text == "running deploy(target='staging')"
    assert all(e.kind != "message" or e.author != "user" or e.role == "user" for e in log)
    assert edit not in await store.events("s", view="prompt"), "the model never sees the edit event"


async def test_after_tool_hooks_see_the_edited_call(store: SessionStore) -> None:
    seen: list[object] = []

    @hook
    def watch(state: State) -> None:
        assert state.tool_call is not None
        seen.append(state.tool_call.arguments)

    script = Script(calls(call("c1", "deploy", target="prod")), answer("done"))
    agent = await _paused(store, script, hooks={"after_tool": [watch]})
    await agent.resume("s", approvals={"c1": {"args": {"target": "qa"}}})
    assert seen == [{"target": "qa"}]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"target": "qa", "replicas": "many"}, r"'c1' \(deploy\) do not fit its schema: replicas: Input should be"),
        ({"replicas": 2}, r"target: Field required"),
        ({"target": "qa", "region": "eu"}, r"region: Extra inputs are not permitted"),
    ],
)
async def test_invalid_edited_arguments_are_refused_and_nothing_is_recorded(
    store: SessionStore, args: dict[str, object], problem: str
) -> None:
    script = Script(calls(call("c1", "deploy", target="prod")), answer("done"))
    agent = await _paused(store, script)
    before = await store.events("s", view="all")

    with pytest.raises(ConfigError, match=problem):
        await agent.resume("s", approvals={"c1": {"args": args}})

    assert await store.events("s", view="all") == before
    assert DEPLOYED == []
    await agent.resume("s", approvals={"c1": True})
    assert DEPLOYED == [("prod", 1)], "the call is still paused, to approve as it was"


async def test_an_object_refusal_gives_its_reason_to_the_model(store: SessionStore) -> None:
    script = Script(calls(call("c1", "deploy", target="prod")), answer("ok, not deploying"))
    agent = await _paused(store, script)
    await agent.resume("s", approvals={"c1": {"approve": False, "reason": "freeze week"}})
    (refusal,) = script.results(2)
    assert (refusal.is_error, refusal.content) == (True, "the user refused the call to deploy: freeze week")
    assert DEPLOYED == []


async def test_an_object_approval_runs_the_call_as_it_was(store: SessionStore) -> None:
    script = Script(calls(call("c1", "deploy", target="prod")), answer("done"))
    agent = await _paused(store, script)
    await agent.resume("s", approvals={"c1": {"approve": True}})
    assert DEPLOYED == [("prod", 1)]
    assert not any("edited_call" in e.metadata for e in await store.events("s", view="all"))


@pytest.mark.parametrize(
    ("answer_", "problem"),
    [
        ({}, "needs 'approve' .* or 'args'"),
        ({"approve": False, "args": {"target": "x"}}, "cannot both refuse the call and give it arguments"),
        ({"approve": "yes"}, "'approve' must be true or false"),
        ({"args": ["x"]}, "'args' must be a JSON object"),
        ({"approve": False, "reason": 3}, "'reason' must be a string"),
        ({"arguments": {}}, "unknown key.*'arguments'"),
        (3, "must be True, False, a reason"),
    ],
)
def test_malformed_answers_are_refused_naming_the_call(answer_: object, problem: str) -> None:
    agent = Agent(model=Script().model, tools=[deploy])
    with pytest.raises(ConfigError, match=f"the approval for call 'c1' .*{problem}"):
        agent.resume("s", approvals={"c1": answer_})  # type: ignore[dict-item]


async def test_an_edit_of_a_call_answered_already_is_no_decision(store: SessionStore) -> None:
    script = Script(calls(call("c1", "deploy", target="prod")), answer("done"))
    agent = await _paused(store, script)
    await agent.resume("s", approvals={"c1": True})
    again = await agent.resume("s", approvals={"c1": {"args": {"target": "qa"}}})
    assert again.stop_reason == "completed"
    assert DEPLOYED == [("prod", 1)], "a call whose result is recorded never runs again"


async def test_the_edited_call_comes_back_if_the_run_is_interrupted_again(store: SessionStore) -> None:
    script = Script(calls(call("c1", "deploy", target="prod"), call("c2", "deploy", target="dev")), answer("done"))
    agent = await _paused(store, script)
    result = await agent.resume("s", approvals={"c1": {"args": {"target": "qa"}}})
    assert result.stop_reason == "interrupted"
    assert [i.call_id for i in result.interruptions] == ["c2"]
    assert DEPLOYED == [("qa", 1)]
    events: list[Event] = await store.events("s", view="prompt")
    assert [p.content for e in events for p in e.parts if p.type == "tool_result"] == ["deployed to qa x1"]
