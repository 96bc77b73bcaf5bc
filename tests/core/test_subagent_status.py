"""A sub-agent's status (issue 13, item 7): an agent run as a tool (`as_tool`) sends its status
events into the calling run's session and stream, tagged with its name, never into a prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookline import Agent, Event, RunContext, StatusOptions, hook, tool
from hookline.sessions import SQLiteSessionStore

from .scripted import Script, add, answer, call, calls

pytestmark = pytest.mark.anyio


@tool
async def search(query: str, ctx: RunContext) -> str:
    """Search the web."""
    ctx.status(f"searching for {query}")
    return "3 hits"


def _researcher() -> tuple[Agent, Script]:
    script = Script(calls(call("r1", "search", query="otters")), answer("otters hold hands"), name="small-model")
    return Agent("researcher", model=script.model, tools=[search]), script


def _parent(researcher: Agent, **options: object) -> tuple[Agent, Script]:
    script = Script(calls(call("p1", "research", input="otters?")), answer("They hold hands."))
    tools = [researcher.as_tool("research", "Ask the researcher")]
    return Agent("lead", model=script.model, tools=tools, **options), script  # type: ignore[arg-type]


def _statuses(events: list[Event]) -> list[Event]:
    return [e for e in events if e.kind == "status"]


async def test_a_sub_agents_status_reaches_the_parents_stream_tagged_with_its_name() -> None:
    researcher, _ = _researcher()
    lead, script = _parent(researcher)
    request = lead.prompt("tell me about otters")
    events = [e async for e in request.stream()]

    assert request.result is not None
    assert request.result.output == "They hold hands."
    forwarded = [e for e in _statuses(events) if e.metadata.get("agent") == "researcher"]
    assert [(e.source, e.author, e.text.split(" answered")[0]) for e in forwarded] == [
        ("agent", "researcher", "researcher: turn 1: calling model"),
        ("llm", "researcher", "researcher: small-model"),
        ("tool", "search", "researcher: running search(query='otters')"),
        ("tool", "search", "researcher: searching for otters"),
        ("tool", "search", "researcher: search returned 3 hits"),
        ("agent", "researcher", "researcher: turn 2: calling model"),
        ("llm", "researcher", "researcher: small-model"),
        ("agent", "researcher", "researcher: run completed"),
    ]
    assert [e.text for e in _statuses(events)][-1] == "run completed", "the parent's own end is its last line"
    statuses = _statuses(events)
    texts = [e.text for e in statuses]
    start, end = texts.index("running research(input='otters?')"), texts.index("research returned otters hold hands")
    assert statuses[start + 1 : end] == forwarded, "between the call's start and its result"
    assert all(e.kind != "message" or "researcher" not in e.metadata.values() for e in events)
    seen_by_model = [m.text for request in script.requests for m in request.messages]
    assert not any("searching" in text or "small-model" in text for text in seen_by_model)


async def test_the_forwarded_status_is_stored_in_the_parents_session(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db")
    researcher, _ = _researcher()
    lead, _ = _parent(researcher, session_store=store)
    await lead.prompt("otters?").session("s")

    stored = [e for e in await store.events("s", view="ui") if e.metadata.get("agent") == "researcher"]
    assert "researcher: searching for otters" in [e.text for e in stored]
    assert all(e.kind == "status" for e in stored)
    assert not any(key in e.metadata for e in stored for key in ("started", "interrupted", "held_message")), (
        "the sub-agent's bookkeeping would mislead the parent's resumption")


async def test_a_sub_sub_agent_keeps_its_own_name() -> None:
    inner_script = Script(calls(call("i1", "add", a=1, b=1)), answer("2"))
    inner = Agent("counter", model=inner_script.model, tools=[add])
    middle_script = Script(calls(call("m1", "count", input="1+1")), answer("it is 2"))
    middle = Agent("middle", model=middle_script.model, tools=[inner.as_tool("count", "Count")])
    lead, _ = _parent(middle)
    events = [e async for e in lead.prompt("go").stream()]

    tags = {e.text: e.metadata.get("agent") for e in _statuses(events)}
    assert tags["middle: counter: running add(a=1, b=1)"] == "counter"
    assert tags["middle: running count(input='1+1')"] == "middle"


async def test_the_parents_status_options_apply_to_what_is_forwarded() -> None:
    researcher, _ = _researcher()
    lead, _ = _parent(researcher, status=StatusOptions(llm=False))
    events = [e async for e in lead.prompt("go").stream()]
    assert [e for e in _statuses(events) if e.source == "llm"] == []
    assert any(e.metadata.get("agent") == "researcher" and e.source == "tool" for e in events)


async def test_without_a_stream_or_session_the_sub_agent_just_runs() -> None:
    researcher, inner = _researcher()
    lead, _ = _parent(researcher)
    result = await lead.prompt("otters?")
    assert result.output == "They hold hands."
    assert inner.count == 2


async def test_the_parents_deps_are_passed_on() -> None:
    seen: list[object] = []

    @hook
    def remember(ctx: RunContext[str]) -> None:
        seen.append(ctx.deps)

    researcher = Agent("researcher", model=Script(answer("noted")).model, hooks={"before_run": [remember]})
    lead, _ = _parent(researcher, deps_type=str)
    await lead.prompt("go").deps("the db")
    assert seen == ["the db"]


async def test_a_failing_sub_agent_is_a_failed_call_and_its_error_is_no_error_of_the_parent() -> None:
    def broken(request: object) -> object:
        raise RuntimeError("the researcher's model is down")

    researcher = Agent("researcher", model=Script(broken).model)
    lead, script = _parent(researcher)
    request = lead.prompt("go")
    events = [e async for e in request.stream()]

    assert request.result is not None
    assert request.result.stop_reason == "completed"
    assert script.results(2)[0].is_error
    (failed,) = [e for e in _statuses(events) if e.text == "researcher: run failed"]
    assert "error" not in failed.metadata, "a front end would show the parent's run as failed"
