"""`Agent(exit_conditions=[...])` (issue 13, item 7): the run ends once a named tool has run and
succeeded, after that turn's results are recorded; what the tool returned is the output."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pydantic import BaseModel

from hookline import Agent, ConfigError, Event, State, Tool, hook, tool
from hookline.sessions import SQLiteSessionStore
from hookline.toolsets import Toolset
from support.run_paths import PATHS, run_by

from .scripted import Script, add, answer, call, calls, shapes

pytestmark = pytest.mark.anyio


class Verdict(BaseModel):
    """A structured final answer."""

    label: str
    score: float


@tool
def final_answer(label: str, score: float) -> Verdict:
    """Give the final verdict."""
    return Verdict(label=label, score=score)


@tool
def flaky(ok: bool) -> str:
    """Fail unless ok."""
    if not ok:
        raise RuntimeError("not yet")
    return "fine"


def _agent(script: Script, **options: object) -> Agent:
    return Agent(model=script.model, tools=[add, final_answer, flaky], exit_conditions=["final_answer"],
                 **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("path", PATHS)
async def test_the_run_ends_when_the_named_tool_has_run_its_value_the_output(path: str) -> None:
    script = Script(calls(call("c1", "add", a=1, b=2)), calls(call("c2", "final_answer", label="spam", score=0.9)))
    request = _agent(script).prompt("judge")
    result, events = await run_by(path, request)
    if path == "stream":
        assert "final_answer ran: exit condition met" in [e.text for e in events if e.kind == "status"]

    assert result.stop_reason == "completed"
    assert result.output == Verdict(label="spam", score=0.9)
    assert script.count == 2, "no model call after the exit tool"
    assert shapes(result.messages) == ["user:judge", "assistant:calls(c1)", "tool:c1", "assistant:calls(c2)",
                                       "tool:c2"]
    assert result.messages[-1].tool_results[0].content == '{"label":"spam","score":0.9}'


async def test_every_result_of_the_turn_is_recorded_and_the_log_is_valid(tmp_path: object) -> None:
    store = SQLiteSessionStore(f"{tmp_path}/s.db")
    script = Script(calls(call("c1", "final_answer", label="a", score=1.0), call("c2", "add", a=1, b=1)))
    result = await _agent(script, session_store=store).prompt("go").session("s")

    assert result.output == Verdict(label="a", score=1.0)
    prompt = await store.events("s", view="prompt")
    assert [(e.role, [p.type for p in e.parts]) for e in prompt] == [
        ("user", ["text"]), ("assistant", ["tool_call", "tool_call"]), ("tool", ["tool_result"]),
        ("tool", ["tool_result"]),
    ]
    statuses = [e for e in await store.events("s", view="ui") if e.kind == "status"]
    assert [e.text for e in statuses[-2:]] == ["final_answer ran: exit condition met", "run completed"]
    assert statuses[-2].metadata == {"exit_condition": "final_answer"}


async def test_a_failed_call_of_the_named_tool_does_not_end_the_run() -> None:
    script = Script(calls(call("c1", "flaky", ok=False)), calls(call("c2", "flaky", ok=True)), answer("n/a"))
    agent = Agent(model=script.model, tools=[flaky], exit_conditions=["flaky"])
    result = await agent.prompt("try")
    assert (result.output, script.count) == ("fine", 2)


async def test_on_exit_hooks_do_not_run_but_after_run_hooks_do() -> None:
    points: list[str] = []

    @hook
    def note(state: State) -> None:
        points.append(str(state.point))

    script = Script(calls(call("c1", "final_answer", label="x", score=0)))
    await _agent(script, hooks={"on_exit": [note], "after_run": [note]}).prompt("go")
    assert points == ["after_run"]


async def test_a_result_replaced_by_an_after_tool_hook_gives_its_content() -> None:
    @hook
    def redact(state: State) -> None:
        state.tool_result = "[redacted]"

    script = Script(calls(call("c1", "final_answer", label="x", score=0)))
    result = await _agent(script, hooks={"after_tool": [redact]}).prompt("go")
    assert result.output == "[redacted]"


async def test_a_call_a_hook_skipped_or_denied_is_no_exit() -> None:
    @hook
    def skip_first(state: State) -> None:
        for pending in state.tool_calls:
            if pending.id == "c1":
                state.skip_tool(pending.id, "skipped")

    script = Script(calls(call("c1", "final_answer", label="x", score=0)),
                    calls(call("c2", "final_answer", label="y", score=1)))
    result = await _agent(script, hooks={"before_tool": [skip_first]}).prompt("go")
    assert result.output == Verdict(label="y", score=1)
    assert script.count == 2


async def test_a_paused_call_beside_the_exit_tool_keeps_the_run_interrupted(tmp_path: object) -> None:
    @hook
    def pause_add(state: State) -> None:
        for pending in state.tool_calls:
            if pending.name == "add":
                state.interrupt(pending.id, "check first")

    store = SQLiteSessionStore(f"{tmp_path}/s.db")
    script = Script(calls(call("c1", "final_answer", label="x", score=0), call("c2", "add", a=1, b=1)))
    result = await _agent(script, session_store=store, hooks={"before_tool": [pause_add]}).prompt("go").session("s")
    assert result.stop_reason == "interrupted"
    assert [i.call_id for i in result.interruptions] == ["c2"]


async def test_a_hook_exit_in_after_tool_wins() -> None:
    @hook
    def stop(state: State) -> None:
        state.control.exit("enough")

    script = Script(calls(call("c1", "final_answer", label="x", score=0)))
    result = await _agent(script, hooks={"after_tool": [stop]}).prompt("go")
    assert (result.stop_reason, result.exit_reason) == ("hook_exit", "enough")


def test_names_are_checked_against_the_tools() -> None:
    with pytest.raises(ConfigError, match=r"exit_conditions name no tool of the agent: 'finish'; its tools: add"):
        Agent(model=Script().model, tools=[add], exit_conditions=["finish"])
    with pytest.raises(ConfigError, match="exit_conditions must be a list of tool names"):
        Agent(model=Script().model, tools=[add], exit_conditions="add")  # type: ignore[arg-type]


async def test_with_a_tool_picker_the_names_cannot_be_checked_but_work() -> None:
    script = Script(calls(call("c1", "add", a=2, b=2)))
    agent = Agent(model=script.model, tools=lambda state: [add], exit_conditions=["add"])
    assert (await agent.prompt("go")).output == 4


class _Listed(Toolset):
    def __init__(self, tools: Sequence[Tool]) -> None:
        self._tools = list(tools)

    async def connect(self) -> None:
        """Nothing to open."""

    def tools(self) -> Sequence[Tool]:
        return self._tools


async def test_with_a_toolset_the_names_are_checked_when_it_is_connected() -> None:
    script = Script(calls(call("c1", "add", a=2, b=3)))
    agent = Agent(model=script.model, tools=[_Listed([add])], exit_conditions=["add"])
    assert (await agent.prompt("go")).output == 5

    wrong = Agent(model=Script().model, tools=[_Listed([add])], exit_conditions=["finish"])
    with pytest.raises(ConfigError, match="'finish'; its tools: add"):
        await wrong.prompt("go")


async def test_without_exit_conditions_the_run_goes_on_after_every_tool() -> None:
    script = Script(calls(call("c1", "final_answer", label="x", score=0)), answer("and so"))
    result = await Agent(model=script.model, tools=[final_answer]).prompt("go")
    assert (result.output, script.count) == ("and so", 2)


async def test_the_exit_status_line_is_not_a_model_message() -> None:
    script = Script(calls(call("c1", "final_answer", label="x", score=0)))
    events: list[Event] = [e async for e in _agent(script).prompt("go").stream()]
    assert not any("exit condition" in e.text for e in events if e.kind == "message")
