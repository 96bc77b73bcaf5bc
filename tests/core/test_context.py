"""`RunContext` (issue 13, item 1): tools and hooks ask for their run by annotation, get the run's
deps, session, user, call and live state, and report status lines and partial results that reach
the log and the stream, never the model."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

import pytest

from hookline import Agent, ConfigError, Event, HookError, RunContext, State, StatusOptions, hook, tool
from hookline.sessions import InMemorySessionStore, SQLiteSessionStore
from support.run_paths import PATHS, run_by

from .scripted import Script, answer, call, calls

pytestmark = pytest.mark.anyio


@dataclass
class Db:
    """A stand-in for what deps usually are: a connection, a client."""

    rows: dict[str, str] = field(default_factory=dict)


@tool
async def lookup(key: str, ctx: RunContext[Db]) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    ctx.status(f"looking up {key}", key=key)
    return ctx.deps.rows.get(key, "missing")


def _statuses(events: list[Event], source: str | None = None) -> list[Event]:
    return [e for e in events if e.kind == "status" and (source is None or e.source == source)]


def test_the_context_parameter_is_left_out_of_the_schema() -> None:
    assert lookup.parameters["properties"] == {"key": {"type": "string", "description": "The key."}}
    assert lookup.parameters["required"] == ["key"]
    assert lookup.validate({"key": "a"}) == {"key": "a"}


def test_any_name_and_position_and_an_unparametrised_context_work() -> None:
    @tool
    def first(context: RunContext, n: int = 1) -> int:
        """Count."""
        return n

    assert list(first.parameters["properties"]) == ["n"]
    assert "required" not in first.parameters


async def test_a_tool_gets_the_runs_deps_session_user_call_and_state() -> None:
    seen: list[RunContext[Db]] = []

    @tool
    def where(ctx: RunContext[Db]) -> str:
        """Say where we are."""
        seen.append(ctx)
        return f"turn {ctx.state.turn}, {len(ctx.state.messages)} messages"

    store = SQLiteSessionStore(":memory:")
    script = Script(calls(call("c1", "where")), answer("done"))
    agent = Agent(model=script.model, tools=[where], session_store=store, deps_type=Db)
    db = Db({"a": "1"})

    await agent.prompt("where?").deps(db).session("s-1", user="ann")

    (ctx,) = seen
    assert (ctx.deps, ctx.session_id, ctx.user, ctx.call_id, ctx.tool_name) == (db, "s-1", "ann", "c1", "where")
    assert script.results(2)[0].content == "turn 1, 2 messages"
    assert isinstance(ctx.state, State)


@pytest.mark.parametrize("path", PATHS)
async def test_deps_reach_tools_on_every_path(path: str) -> None:
    script = Script(calls(call("c1", "lookup", key="a")), answer("done"))
    request = Agent(model=script.model, tools=[lookup], deps_type=Db).prompt("a?").deps(Db({"a": "apple"}))
    await run_by(path, request)
    assert script.results(2)[0].content == "apple"


async def test_deps_of_the_wrong_type_are_refused_naming_both_types() -> None:
    agent = Agent(model=Script().model, deps_type=Db)
    with pytest.raises(ConfigError, match="takes deps of type Db, not dict"):
        agent.prompt("hi").deps({"a": "1"})


@pytest.mark.parametrize("path", ["await", "stream"])
async def test_a_run_without_deps_when_the_agent_wants_them_is_refused(path: str) -> None:
    script = Script(answer("never"))
    request = Agent(model=script.model, deps_type=Db).prompt("hi")

    async def run() -> None:
        if path == "await":
            await request
        else:
            [event async for event in request.stream()]

    with pytest.raises(ConfigError, match=r"needs deps of type Db: give them with agent.prompt\(...\).deps"):
        await run()
    assert script.count == 0


def test_a_generic_deps_type_is_checked_by_its_origin() -> None:
    agent = Agent(model=Script().model, deps_type=dict[str, int])
    agent.prompt("hi").deps({"a": 1})
    with pytest.raises(ConfigError, match=r"takes deps of type dict\[str, int\], not list"):
        agent.prompt("hi").deps([1])


def test_a_deps_type_isinstance_cannot_check_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="deps_type must be a class"):
        Agent(model=Script().model, deps_type=3)


async def test_without_deps_type_deps_are_optional_and_none_by_default() -> None:
    seen: list[Any] = []

    @tool
    def peek(ctx: RunContext) -> str:
        """Peek."""
        seen.append(ctx.deps)
        return "ok"

    script = Script(calls(call("c1", "peek")), answer("done"), calls(call("c2", "peek")), answer("again"))
    agent = Agent(model=script.model, tools=[peek])
    await agent.prompt("go")
    await agent.prompt("go").deps("anything")
    assert seen == [None, "anything"]


async def test_status_lines_and_partial_results_reach_the_stream_and_log_but_never_the_model() -> None:
    @tool
    async def crawl(pages: int, ctx: RunContext) -> str:
        """Crawl some pages."""
        for page in range(1, pages + 1):
            ctx.partial({"page": page})
        ctx.status("crawled", pages=pages)
        return "all done"

    store = InMemorySessionStore()
    script = Script(calls(call("c1", "crawl", pages=2)), answer("ok"))
    agent = Agent(model=script.model, tools=[crawl], session_store=store)
    events = [e async for e in agent.prompt("crawl").session("s").stream()]

    tool_lines = [(e.text, e.metadata) for e in _statuses(events, "tool")]
    assert tool_lines == [
        ("running crawl(pages=2)", {"call_id": "c1", "started": True}),
        ('{"page":1}', {"partial_result": True, "call_id": "c1"}),
        ('{"page":2}', {"partial_result": True, "call_id": "c1"}),
        ("crawled", {"pages": 2, "call_id": "c1"}),
        ("crawl returned all done", {"call_id": "c1"}),
    ]
    assert {e.author for e in _statuses(events, "tool")} == {"crawl"}
    stored = [e.text for e in await store.events("s", view="ui") if e.kind == "status"]
    assert '{"page":2}' in stored
    assert "crawled" in stored
    prompt_texts = [m.text for m in script.requests[1].messages] + [r.content for r in script.results(2)]
    assert not any("page" in text or "crawled" in text for text in prompt_texts)


async def test_status_from_a_thread_tool_is_recorded_in_order() -> None:
    @tool(thread=True)
    def slow(ctx: RunContext) -> str:
        """Block, reporting progress."""
        for step in range(3):
            ctx.status(f"step {step}")
        return "done"

    script = Script(calls(call("c1", "slow")), answer("ok"))
    events = [e async for e in Agent(model=script.model, tools=[slow]).prompt("go").stream()]
    assert [e.text for e in _statuses(events, "tool")] == [
        "running slow()", "step 0", "step 1", "step 2", "slow returned done",
    ]


async def test_status_follows_the_status_options() -> None:
    script = Script(calls(call("c1", "lookup", key="a")), answer("done"))
    agent = Agent(model=script.model, tools=[lookup], deps_type=Db, status=StatusOptions(tool=False))
    events = [e async for e in agent.prompt("a?").deps(Db()).stream()]
    assert _statuses(events, "tool") == []
    assert script.results(2)[0].content == "missing"


async def test_concurrent_runs_each_see_their_own_deps() -> None:
    all_started = asyncio.Barrier(4)  # two calls in each of two runs, all going at once

    @tool
    async def whose(ctx: RunContext[str]) -> str:
        """Whose run is this."""
        await all_started.wait()
        return ctx.deps

    def script() -> Script:
        return Script(calls(call("c1", "whose"), call("c2", "whose")), answer("done"))

    ann, bob = script(), script()
    await asyncio.gather(
        Agent(model=ann.model, tools=[whose], deps_type=str).prompt("go").deps("ann"),
        Agent(model=bob.model, tools=[whose], deps_type=str).prompt("go").deps("bob"),
    )
    assert [r.content for r in ann.results(2)] == ["ann", "ann"]
    assert [r.content for r in bob.results(2)] == ["bob", "bob"]


async def test_a_context_tool_called_outside_a_run_says_how_to_call_it() -> None:
    with pytest.raises(ConfigError, match="takes a RunContext, so it runs only in an agent's run"):
        await lookup.call({"key": "a"})
    own = RunContext(Db({"a": "apple"}))
    assert await lookup.function("a", own) == "apple"
    own.status("nobody listens")  # a detached context records nothing, and does not fail
    with pytest.raises(RuntimeError, match="belongs to no run"):
        _ = own.state


# -- hooks -------------------------------------------------------------------------------------


async def test_hooks_may_take_the_context_instead_of_the_state_or_beside_it() -> None:
    seen: list[tuple[str, Any]] = []

    @hook
    def only_context(ctx: RunContext[Db]) -> None:
        seen.append(("only", (ctx.deps, ctx.call_id, ctx.tool_name, ctx.state.point)))

    @hook
    async def both(state: State, ctx: RunContext[Db]) -> None:
        seen.append(("both", (state is ctx.state, ctx.deps)))

    class Auditor:
        def run(self, ctx: RunContext[Db]) -> None:
            seen.append(("class", ctx.session_id))

    @hook
    def plain(state: State) -> None:
        seen.append(("plain", state.point))

    db = Db()
    agent = Agent(model=Script(answer("hi")).model, deps_type=Db,
                  hooks={"before_run": [only_context, both, Auditor(), plain]})
    await agent.prompt("hi").deps(db).session("s")
    assert seen == [("only", (db, None, None, "before_run")), ("both", (True, db)), ("class", "s"),
                    ("plain", "before_run")]


async def test_a_hooks_status_line_names_the_hook_and_point() -> None:
    @hook(name="announcer")
    def announce(ctx: RunContext) -> None:
        ctx.status("about to ask", mood="calm")

    agent = Agent("bot", model=Script(answer("hi")).model, hooks={"before_llm": [announce]})
    events = [e async for e in agent.prompt("hi").stream()]
    (line,) = [e for e in _statuses(events, "agent") if e.text == "about to ask"]
    assert line.author == "bot"
    assert line.metadata == {"mood": "calm", "hook": "announcer", "point": "before_llm"}


def test_a_keyword_only_context_parameter_of_a_hook_is_a_config_error() -> None:
    @hook
    def odd(state: State, *, ctx: RunContext) -> None:
        """Takes its context by keyword."""

    with pytest.raises(ConfigError, match=r"hook 'test_a_keyword.*make 'ctx' a positional parameter"):
        Agent(model=Script().model, hooks={"before_run": [odd]})


async def test_a_failing_context_hook_is_a_hook_error() -> None:
    @hook
    def broken(ctx: RunContext) -> None:
        raise ValueError("no")

    agent = Agent(model=Script().model, hooks={"before_run": [broken]})
    with pytest.raises(HookError, match=r"hook 'test_a_failing.*failed at before_run: ValueError: no"):
        await agent.prompt("hi")


async def test_a_resumed_run_gives_its_tools_the_deps_of_the_resumption() -> None:
    @hook
    def pause(state: State) -> None:
        for pending in state.tool_calls:
            state.interrupt(pending.id, "approve first")

    store = InMemorySessionStore()
    script = Script(calls(call("c1", "lookup", key="a")), answer("done"))
    agent = Agent(model=script.model, tools=[lookup], session_store=store, deps_type=Db,
                  hooks={"before_tool": [pause]})
    paused = await agent.prompt("a?").deps(Db()).session("s")
    assert paused.stop_reason == "interrupted"

    await agent.resume("s", approvals={"c1": True}).deps(Db({"a": "apricot"}))

    assert script.results(2)[0].content == "apricot"


async def test_log_records_of_a_context_tool_are_still_captured() -> None:
    logger = logging.getLogger("tests.core.context")

    @tool
    def noisy(ctx: RunContext) -> str:
        """Log, then report."""
        logger.warning("careful")
        ctx.status("reported")
        return "ok"

    script = Script(calls(call("c1", "noisy")), answer("done"))
    events = [e async for e in Agent(model=script.model, tools=[noisy]).prompt("go").stream()]
    assert [e.text for e in _statuses(events, "tool")][1:3] == ["warning: careful", "reported"]
