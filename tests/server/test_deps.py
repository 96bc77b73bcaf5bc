"""Deps for a served agent (`create_app(agent, deps=factory)`): each run and resume gets the deps its
factory builds from the request (user, session, headers); an agent that needs deps cannot be served
without a factory; a factory that fails answers a clear error and records nothing."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import HTTPException

from hookline import Agent, ConfigError, RunContext, State, ToolCallPart, hook, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.server import DepsContext, create_app
from hookline.sessions import SessionStore

from .api import SSE, new_session, sse_frames
from .live import TOKENS, LiveServer

pytestmark = pytest.mark.anyio

ALICE = {"Authorization": "Bearer tok-alice"}
BOB = {"Authorization": "Bearer tok-bob"}


@dataclass(frozen=True)
class Tenant:
    """The deps of a run: whose it is, and what the request said."""

    user: str
    session_id: str
    action: str
    header: str | None


@tool
def whoami(ctx: RunContext[Tenant]) -> str:
    """Say whose deps this run has."""
    deps = ctx.deps
    return f"{deps.user}/{deps.action}/{deps.header}/{deps.session_id == ctx.session_id}"


@tool
def wipe(ctx: RunContext[Tenant]) -> str:
    """Something that needs approval; says whose deps ran it."""
    return f"wiped for {ctx.deps.user}/{ctx.deps.action}"


@hook
def guard(state: State) -> None:
    for call in state.tool_calls:
        if call.name == "wipe":
            state.interrupt(call.id, "wipe needs a human's approval")


def script(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    if last.role == "tool":
        return ModelResponse(text=f"deps: {last.tool_results[0].content}")
    name = "wipe" if last.text.startswith("wipe") else "whoami"
    return ModelResponse(tool_calls=[ToolCallPart(id=f"call-{uuid.uuid4().hex[:8]}", name=name, arguments={})])


def tenant_agent(store: SessionStore) -> Agent:
    return Agent("assistant", model=FunctionModel(script), tools=[whoami, wipe], hooks={"before_tool": [guard]},
                 deps_type=Tenant, session_store=store)


class Factory:
    """A deps factory that notes each call (its context and the thread it ran on); `fail` makes it raise."""

    def __init__(self) -> None:
        self.calls: list[DepsContext] = []
        self.threads: list[str] = []
        self.fail: BaseException | None = None
        self.returns: Any = None

    def build(self, context: DepsContext) -> Any:
        self.calls.append(context)
        self.threads.append(threading.current_thread().name)
        if self.fail is not None:
            raise self.fail
        if self.returns is not None:
            return self.returns
        return Tenant(context.user, context.session_id, context.action, context.request.headers.get("X-Tenant"))


@pytest.fixture
def factory() -> Factory:
    return Factory()


@pytest.fixture(params=["sync", "async"])
def deps_server(request: pytest.FixtureRequest, factory: Factory, store: SessionStore,
                make_server: Callable[..., LiveServer]) -> LiveServer:
    """A server with tokens whose agent needs a `Tenant`, built by `factory` (a sync or an async function)."""

    async def build_async(context: DepsContext) -> Any:
        return factory.build(context)

    deps = factory.build if request.param == "sync" else build_async
    return make_server(tenant_agent(store), tokens=TOKENS, deps=deps)


async def _run(http: httpx.AsyncClient, session_id: str, prompt: str, **headers: str) -> httpx.Response:
    return await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": prompt}, headers=headers)


async def _log(http: httpx.AsyncClient, session_id: str) -> list[dict[str, Any]]:
    response = await http.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})
    assert response.status_code == 200, response.text
    events: list[dict[str, Any]] = response.json()
    return events


async def test_each_users_run_gets_its_own_deps(deps_server: LiveServer, factory: Factory) -> None:
    async with httpx.AsyncClient(base_url=deps_server.url, timeout=10, headers=ALICE) as alice, \
            httpx.AsyncClient(base_url=deps_server.url, timeout=10, headers=BOB) as bob:
        alices, bobs = await new_session(alice), await new_session(bob)

        answer = await _run(alice, alices, "who am I?", **{"X-Tenant": "acme"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["output"] == "deps: alice/run/acme/True"

        async with bob.stream("POST", f"/v1/sessions/{bobs}/runs", json={"prompt": "who?"},
                              headers=SSE | {"X-Tenant": "globex"}) as streamed:
            assert streamed.status_code == 200
            events = [frame.json async for frame in sse_frames(streamed)]
    results = [p["content"] for e in events if e.get("role") == "tool" for p in e["parts"]]
    assert results == ["bob/run/globex/True"]
    assert [(c.user, c.session_id, c.action) for c in factory.calls] == [("alice", alices, "run"), ("bob", bobs, "run")]


async def test_a_sync_factory_runs_off_the_event_loop(store: SessionStore, factory: Factory,
                                                      make_server: Callable[..., LiveServer]) -> None:
    server = make_server(tenant_agent(store), deps=factory.build)
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        answer = await _run(http, await new_session(http), "who?")
    assert answer.json()["output"] == "deps: default/run/None/True"
    assert len(factory.threads) == 1
    assert factory.threads[0] != server.thread.name, "a blocking factory must not block the loop"


async def test_a_resume_gets_deps_too(deps_server: LiveServer, factory: Factory) -> None:
    async with httpx.AsyncClient(base_url=deps_server.url, timeout=10, headers=ALICE) as alice:
        session_id = await new_session(alice)
        paused = (await _run(alice, session_id, "wipe it")).json()
        assert paused["stop_reason"] == "interrupted", paused
        call_id = paused["interruptions"][0]["call_id"]

        resumed = await alice.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {call_id: True}})

    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["output"] == "deps: wiped for alice/resume"
    assert [(c.user, c.action) for c in factory.calls] == [("alice", "run"), ("alice", "resume")]


def test_an_agent_that_needs_deps_cannot_be_served_without_a_factory(store: SessionStore) -> None:
    with pytest.raises(ConfigError, match=r"needs deps of type Tenant.*create_app\(agent, \.\.\., deps=factory\)"):
        create_app(tenant_agent(store), store, tokens={})
    with pytest.raises(ConfigError, match="takes a function of the request's DepsContext, not dict"):
        create_app(tenant_agent(store), store, tokens={}, deps={"user": "alice"})  # type: ignore[arg-type]


async def test_a_failing_factory_answers_500_redacted_and_records_nothing(
    deps_server: LiveServer, factory: Factory, caplog: pytest.LogCaptureFixture
) -> None:
    factory.fail = RuntimeError("cannot reach postgresql://app:hunter2@db.internal/tenants")
    async with httpx.AsyncClient(base_url=deps_server.url, timeout=10, headers=ALICE) as alice:
        session_id = await new_session(alice)
        with caplog.at_level(logging.ERROR, logger="hookline.server"):
            answer = await _run(alice, session_id, "who?")
            streamed = await alice.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "who?"}, headers=SSE)
        log = await _log(alice, session_id)

    for response in (answer, streamed):
        assert response.status_code == 500, response.text
        body = response.json()
        assert body["error"] == "deps_failed"
        assert "the deps factory failed" in body["message"]
        assert "RuntimeError: cannot reach" in body["message"]
        assert "hunter2" not in response.text
    assert log == [], "nothing is recorded"
    assert "RuntimeError" in caplog.text
    assert "hunter2" not in caplog.text


async def test_a_factory_that_fails_on_resume_records_no_approval(deps_server: LiveServer, factory: Factory) -> None:
    async with httpx.AsyncClient(base_url=deps_server.url, timeout=10, headers=ALICE) as alice:
        session_id = await new_session(alice)
        call_id = (await _run(alice, session_id, "wipe it")).json()["interruptions"][0]["call_id"]
        before = await _log(alice, session_id)
        factory.fail = ValueError("the tenant database is down")

        failed = await alice.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {call_id: True}})
        after_failure = await _log(alice, session_id)
        factory.fail = None
        resumed = await alice.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {call_id: True}})

    assert failed.status_code == 500, failed.text
    assert failed.json()["error"] == "deps_failed"
    assert after_failure == before, "no approval line, no run"
    assert resumed.json()["output"] == "deps: wiped for alice/resume", "the call still awaits its approval"


async def test_a_factory_raising_http_exception_answers_with_it(deps_server: LiveServer, factory: Factory) -> None:
    factory.fail = HTTPException(403, "alice may not use this agent")
    async with httpx.AsyncClient(base_url=deps_server.url, timeout=10, headers=ALICE) as alice:
        session_id = await new_session(alice)
        answer = await _run(alice, session_id, "who?")
        log = await _log(alice, session_id)
    assert answer.status_code == 403, answer.text
    assert answer.json() == {"error": "forbidden", "message": "alice may not use this agent"}
    assert log == []


async def test_deps_of_the_wrong_type_answer_500(deps_server: LiveServer, factory: Factory) -> None:
    factory.returns = {"user": "alice"}
    async with httpx.AsyncClient(base_url=deps_server.url, timeout=10, headers=ALICE) as alice:
        session_id = await new_session(alice)
        answer = await _run(alice, session_id, "who?")
        log = await _log(alice, session_id)
    assert answer.status_code == 500, answer.text
    assert answer.json()["error"] == "deps_failed"
    assert "takes deps of type Tenant, not dict" in answer.json()["message"]
    assert log == []
