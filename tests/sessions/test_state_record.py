"""`StatusOptions(state=True)`: `state.data` on record in the log where a run changed it, on every store."""

from __future__ import annotations

from typing import Any

import pytest

from hookline import Agent, RunContext, State, StatusOptions, ToolCallPart, hook
from hookline.errors import ConfigError
from hookline.events import Event
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SessionStore

pytestmark = pytest.mark.anyio


def count_to(n: int) -> FunctionModel:
    """A model that calls `bump` until `n` tool results are in, then answers "done"."""

    def answer(request: ModelRequest) -> ModelResponse:
        results = sum(1 for m in request.messages if m.role == "tool")
        if results >= n:
            return ModelResponse(text="done")
        return ModelResponse(tool_calls=[ToolCallPart(id=f"c{results}", name="bump", arguments={})])

    return FunctionModel(answer)


def bump(ctx: RunContext[None]) -> str:
    """Count one more."""
    ctx.state.data["count"] = ctx.state.data.get("count", 0) + 1
    return "bumped"


@hook
def stamp(state: State) -> None:
    state.data["seen_by_hook"] = True


def agent(store: SessionStore, *, state: bool, turns: int = 2, **kwargs: Any) -> Agent:
    return Agent("counter", model=count_to(turns), tools=[bump], session_store=store,
                 status=StatusOptions(state=state), **kwargs)


def states(log: list[Event]) -> list[tuple[int, dict[str, Any]]]:
    """The state markers of a log: (seq, state)."""
    return [(e.seq or 0, e.metadata["state"]) for e in log if e.kind == "marker" and "state" in e.metadata]


async def test_a_run_records_the_state_it_found_and_each_change(store: SessionStore) -> None:
    await store.create(session_id="s1", state={"count": 10})
    await agent(store, state=True, hooks={"before_run": [stamp]}).prompt("count").session("s1")
    log = await store.events("s1", view="all")
    recorded = states(log)
    assert [s for _, s in recorded] == [
        {"count": 10},  # as the run found it, before its prompt
        {"count": 10, "seen_by_hook": True},  # before the first model call: the before_run hook's edit
        {"count": 11, "seen_by_hook": True},  # before the second: the first call's
        {"count": 12, "seen_by_hook": True},  # at the end: the second call's
    ]
    prompt_seq = next(e.seq for e in log if e.kind == "message" and e.role == "user")
    assert recorded[0][0] < prompt_seq < recorded[1][0]
    assert recorded[-1][1] == (await store.get("s1", with_events=False)).state, "the last one is what the session saved"
    assert all(e.kind != "marker" for e in await store.events("s1", view="prompt"))


async def test_a_state_that_does_not_change_is_recorded_once(store: SessionStore) -> None:
    await store.create(session_id="s2", state={"fixed": [1, 2]})
    idle = Agent("idle", model=FunctionModel(lambda request: ModelResponse(text="ok")), session_store=store,
                 status=StatusOptions(state=True))
    await idle.prompt("hi").session("s2")
    await idle.prompt("again").session("s2")
    assert [s for _, s in states(await store.events("s2", view="all"))] == [{"fixed": [1, 2]}] * 2, "once a run"


async def test_without_the_option_nothing_is_recorded(store: SessionStore) -> None:
    await agent(store, state=False).prompt("count").session("s3")
    assert states(await store.events("s3", view="all")) == []
    assert (await store.get("s3", with_events=False)).state == {"count": 2}


async def test_a_state_that_cannot_be_saved_is_not_recorded_and_the_run_says_why(store: SessionStore) -> None:
    def keep_a_set(ctx: RunContext[None]) -> str:
        """Keep something that is not JSON."""
        ctx.state.data["bad"] = object()
        return "kept"

    def once(request: ModelRequest) -> ModelResponse:
        if any(m.role == "tool" for m in request.messages):
            return ModelResponse(text="done")
        return ModelResponse(tool_calls=[ToolCallPart(id="c0", name="keep_a_set", arguments={})])

    broken = Agent("broken", model=FunctionModel(once), tools=[keep_a_set], session_store=store,
                   status=StatusOptions(state=True))
    with pytest.raises(ConfigError, match="state"):
        await broken.prompt("go").session("s4")
    log = await store.events("s4", view="all")
    assert [s for _, s in states(log)] == [{}], "only the state the run found"
    assert log[-1].metadata.get("run_end") == "failed"
