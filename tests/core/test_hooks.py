"""Hooks (DESIGN §2 "Hooks" and "State"): where and when each point fires, hook shapes and
their lifecycle, flow control, per-call decisions, edits, and hooks that fail or break the
conversation."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from hookline import (
    Agent,
    ConfigError,
    HookError,
    HookPoint,
    MaxTurnsExceeded,
    Message,
    State,
    Tool,
    ToolResultPart,
    hook,
    tool,
)
from hookline.models import FunctionModel, ModelResponse
from hookline.toolsets import Toolset

from .invariant import conversation_error
from .scripted import Script, add, answer, call, calls, shapes
from .tracer import Tracer, at_every_point

pytestmark = pytest.mark.anyio

ALL_POINTS = [p.value for p in HookPoint]


def _counting_add() -> tuple[Any, list[tuple[int, int]]]:
    ran: list[tuple[int, int]] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        ran.append((a, b))
        return a + b

    return add, ran


# -- where and when hooks fire ---------------------------------------------------------------


async def test_every_point_fires_in_order_with_its_turn() -> None:
    tracer = Tracer()
    script = Script(calls(call("c1", "add", a=1, b=2), call("c2", "add", a=3, b=4)), answer("done"))
    await Agent(model=script.model, tools=[add], hooks=at_every_point(tracer)).prompt("go")

    assert tracer.trace == [
        ("before_run", 0),
        ("before_llm", 1),
        ("after_llm", 1),
        ("before_tool", 1),
        ("after_tool", 1),
        ("after_tool", 1),
        ("before_llm", 2),
        ("after_llm", 2),
        ("on_exit", 2),
        ("after_run", 2),
    ]


async def test_each_point_sees_its_own_context() -> None:
    seen: list[tuple[str, Any]] = []

    @hook
    def look(state: State) -> None:
        point = state.point
        assert isinstance(point, HookPoint)
        if point is HookPoint.BEFORE_RUN:
            seen.append((point.value, shapes(state.messages)))
        elif point is HookPoint.BEFORE_LLM:
            seen.append((point.value, len(state.messages)))
        elif point is HookPoint.AFTER_LLM:
            assert state.response is not None
            seen.append((point.value, shapes([state.response])))
        elif point is HookPoint.BEFORE_TOOL:
            seen.append((point.value, [c.id for c in state.tool_calls]))
        elif point is HookPoint.AFTER_TOOL:
            assert state.tool_call is not None
            assert state.tool_result is not None
            seen.append((point.value, (state.tool_call.id, state.tool_result.content)))
        else:
            seen.append((point.value, state.usage.model_calls))

    script = Script(calls(call("c1", "add", a=1, b=2), call("c2", "add", a=3, b=4)), answer("done"))
    agent = Agent(model=script.model, tools=[add], hooks=at_every_point(look))
    await agent.prompt("go")

    assert seen == [
        ("before_run", ["user:go"]),
        ("before_llm", 1),
        ("after_llm", ["assistant:calls(c1,c2)"]),
        ("before_tool", ["c1", "c2"]),
        ("after_tool", ("c1", "3")),
        ("after_tool", ("c2", "7")),
        ("before_llm", 4),
        ("after_llm", ["assistant:done"]),
        ("on_exit", 2),
        ("after_run", 2),
    ]


async def test_state_context_is_the_running_agent() -> None:
    agents: list[Any] = []
    script = Script(answer("ok"))
    look = hook(lambda state: agents.append((state.agent, state.session_id)))
    agent = Agent(model=script.model, hooks={"before_llm": [look]})
    await agent.prompt("go")
    assert agents == [(agent, None)]


async def test_sync_and_async_function_hooks_both_run() -> None:
    order: list[str] = []

    @hook
    def plain(state: State) -> None:
        order.append(f"plain:{state.point}")

    @hook
    async def awaited(state: State) -> None:
        await asyncio.sleep(0)  # suspends, as async hooks do: it must be awaited in order
        order.append(f"async:{state.point}")

    script = Script(answer("ok"))
    await Agent(model=script.model, hooks={"before_llm": [plain, awaited], "after_run": [awaited, plain]}).prompt("go")
    assert order == ["plain:before_llm", "async:before_llm", "async:after_run", "plain:after_run"]


async def test_hooks_of_a_point_run_in_list_order() -> None:
    order: list[int] = []
    hooks = [hook(lambda state, n=n: order.append(n)) for n in (3, 1, 2)]
    script = Script(answer("ok"))
    await Agent(model=script.model, hooks={"before_llm": hooks}).prompt("go")
    assert order == [3, 1, 2]


async def test_class_hook_with_run() -> None:
    tracer = Tracer()
    script = Script(answer("ok"))
    await Agent(model=script.model, hooks={"before_llm": [tracer], "on_exit": [tracer]}).prompt("go")
    assert tracer.trace == [("before_llm", 1), ("on_exit", 1)]


async def test_class_hook_run_async_is_preferred_over_run() -> None:
    class Both:
        def __init__(self) -> None:
            self.calls: list[str] = []

        def run(self, state: State) -> None:
            self.calls.append("run")

        async def run_async(self, state: State) -> None:
            await asyncio.sleep(0)  # a real suspension point, as async hooks have
            self.calls.append("run_async")

    both = Both()
    script = Script(answer("ok"))
    await Agent(model=script.model, hooks={"before_llm": [both], "after_run": [both]}).prompt("go")
    assert both.calls == ["run_async", "run_async"]


class Lifecycle:
    """A hook writing down its lifecycle calls (sync variants)."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def run(self, state: State) -> None:
        self.events.append(f"run:{state.point}")

    def warm_up(self) -> None:
        self.events.append("warm_up")

    def close(self) -> None:
        self.events.append("close")


class AsyncLifecycle(Lifecycle):
    async def warm_up_async(self) -> None:
        self.events.append("warm_up_async")

    async def close_async(self) -> None:
        self.events.append("close_async")


async def test_async_with_agent_warms_and_closes_each_hook_once() -> None:
    life = Lifecycle()
    script = Script(answer("one"), answer("two"))
    agent = Agent(model=script.model, hooks={"before_run": [life], "before_llm": [life], "after_run": [life]})
    async with agent:
        assert life.events == ["warm_up"]
        await agent.prompt("a")
        await agent.prompt("b")
    assert life.events.count("warm_up") == 1
    assert life.events.count("close") == 1
    assert life.events[0] == "warm_up"
    assert life.events[-1] == "close"
    assert life.events.count("run:before_llm") == 2


async def test_async_lifecycle_variants_are_preferred() -> None:
    life = AsyncLifecycle()
    other = Lifecycle()
    agent = Agent(model=Script().model, hooks={"before_llm": [life, other], "on_exit": [life]})
    async with agent:
        pass
    assert life.events == ["warm_up_async", "close_async"]
    assert other.events == ["warm_up", "close"]


async def test_warm_up_and_close_can_be_called_directly() -> None:
    life = Lifecycle()
    agent = Agent(model=Script(answer("ok")).model, hooks={"before_llm": [life]})
    await agent.warm_up()
    await agent.prompt("go")
    await agent.close()
    assert life.events == ["warm_up", "run:before_llm", "close"]


def test_unknown_hook_point_is_a_config_error_listing_the_valid_points() -> None:
    with pytest.raises(ConfigError) as caught:
        Agent(model=Script().model, hooks={"before_lunch": [lambda state: None]})
    assert isinstance(caught.value, ValueError)
    message = str(caught.value)
    assert "before_lunch" in message
    for point in ALL_POINTS:
        assert point in message


def test_hook_points_are_a_string_enum() -> None:
    assert ALL_POINTS == ["before_run", "before_llm", "after_llm", "before_tool", "after_tool", "on_exit", "after_run"]
    assert HookPoint("after_llm") == "after_llm"


def test_hooks_may_be_keyed_by_hook_point() -> None:
    agent = Agent(model=Script().model, hooks={HookPoint.BEFORE_LLM: [Tracer()]})
    assert list(agent.hooks) == [HookPoint.BEFORE_LLM]


@pytest.mark.parametrize("bad", [42, "not a hook", object()])
def test_non_hooks_are_config_errors(bad: Any) -> None:
    with pytest.raises(ConfigError, match="hook"):
        Agent(model=Script().model, hooks={"before_llm": [bad]})


# -- flow control: exit ----------------------------------------------------------------------

EXIT_CASES = [
    # point, model calls, tool runs, conversation shapes, whether c1 was answered as an error
    ("before_run", 0, 0, ["user:go"], None),
    ("before_llm", 0, 0, ["user:go"], None),
    ("after_llm", 1, 0, ["user:go", "assistant:calls(c1)", "tool:c1"], True),
    ("before_tool", 1, 0, ["user:go", "assistant:calls(c1)", "tool:c1"], True),
    ("after_tool", 1, 1, ["user:go", "assistant:calls(c1)", "tool:c1"], False),
    ("on_exit", 2, 1, ["user:go", "assistant:calls(c1)", "tool:c1", "assistant:3"], False),
]


@pytest.mark.parametrize(("point", "model_calls", "tool_runs", "expected", "c1_error"), EXIT_CASES)
async def test_exit_stops_the_run_before_what_its_point_precedes(
    point: str, model_calls: int, tool_runs: int, expected: list[str], c1_error: bool | None
) -> None:
    counting, ran = _counting_add()
    tracer = Tracer()

    @hook
    def stop(state: State) -> None:
        state.control.exit("enough")

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("3"))
    hooks: dict[str, list[Any]] = {point: [stop]}
    hooks.setdefault("after_run", []).append(tracer)
    result = await Agent(model=script.model, tools=[counting], hooks=hooks).prompt("go")

    assert result.stop_reason == "hook_exit"
    assert result.exit_reason == "enough"
    assert script.count == model_calls
    assert len(ran) == tool_runs
    assert shapes(result.messages) == expected
    assert conversation_error(result.messages) is None
    if c1_error is not None:
        (c1,) = result.messages[2].tool_results
        assert c1.is_error is c1_error
    assert tracer.points() == ["after_run"]


async def test_exit_from_before_llm_on_a_later_turn_skips_that_model_call() -> None:
    @hook
    def stop_on_turn_two(state: State) -> None:
        if state.turn == 2:
            state.control.exit()

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("never"))
    result = await Agent(model=script.model, tools=[add], hooks={"before_llm": [stop_on_turn_two]}).prompt("go")
    assert script.count == 1
    assert result.stop_reason == "hook_exit"
    assert shapes(result.messages) == ["user:go", "assistant:calls(c1)", "tool:c1"]


async def test_exit_runs_the_remaining_hooks_of_the_point() -> None:
    order: list[str] = []
    first = hook(lambda state: (order.append("first"), state.control.exit()))
    second = hook(lambda state: order.append("second"))
    script = Script(answer("never"))
    result = await Agent(model=script.model, hooks={"before_llm": [first, second]}).prompt("go")
    assert order == ["first", "second"]
    assert script.count == 0
    assert result.stop_reason == "hook_exit"


async def test_exit_from_before_tool_answers_every_call_without_running_any() -> None:
    counting, ran = _counting_add()
    script = Script(calls(call("c1", "add", a=1, b=2), call("c2", "add", a=3, b=4)))
    agent = Agent(model=script.model, tools=[counting], hooks={"before_tool": [lambda state: state.control.exit("no")]})
    result = await agent.prompt("go")

    assert ran == []
    assert shapes(result.messages) == ["user:go", "assistant:calls(c1,c2)", "tool:c1", "tool:c2"]
    assert all(r.is_error for m in result.messages for r in m.tool_results)
    assert conversation_error(result.messages) is None


# -- flow control: continue and rerun --------------------------------------------------------


async def test_continue_run_in_on_exit_calls_the_model_again_with_the_injected_message() -> None:
    @hook
    def check_work(state: State) -> None:
        if state.turn == 1:
            state.inject(Message.user("please double-check"))
            state.control.continue_run()

    script = Script(answer("draft"), answer("checked"))
    result = await Agent(model=script.model, hooks={"on_exit": [check_work]}).prompt("go")

    assert script.count == 2
    assert script.shapes(2) == ["user:go", "assistant:draft", "user:please double-check"]
    assert result.output == "checked"
    assert result.stop_reason == "completed"
    assert result.usage.model_calls == 2


async def test_injected_message_is_part_of_the_runs_messages() -> None:
    @hook
    def check_work(state: State) -> None:
        if state.turn == 1:
            state.inject(Message.user("please double-check"))
            state.control.continue_run()

    history: list[Message] = []
    script = Script(answer("draft"), answer("checked"))
    result = await Agent(model=script.model, hooks={"on_exit": [check_work]}).prompt("go").with_history(history)

    expected = ["user:go", "assistant:draft", "user:please double-check", "assistant:checked"]
    assert shapes(result.messages) == expected
    assert shapes(history) == expected


async def test_continue_run_without_a_new_message_still_calls_the_model_again() -> None:
    script = Script(answer("one"), answer("two"), answer("three"))
    keep_going = hook(lambda state: state.control.continue_run() if state.turn < 3 else None)
    result = await Agent(model=script.model, hooks={"on_exit": [keep_going]}).prompt("go")
    assert script.count == 3
    assert result.output == "three"


async def test_rerun_llm_discards_the_response_and_calls_again() -> None:
    @hook
    def reject_drafts(state: State) -> None:
        assert state.response is not None
        if "draft" in state.response.text:
            state.control.rerun_llm()

    script = Script(answer("a draft"), answer("final"))
    result = await Agent(model=script.model, hooks={"after_llm": [reject_drafts]}).prompt("go")

    assert script.count == 2
    assert script.shapes(2) == ["user:go"]
    assert shapes(result.messages) == ["user:go", "assistant:final"]
    assert result.output == "final"
    assert result.usage.model_calls == 2


async def test_rerun_llm_discards_tool_calls_without_running_them() -> None:
    counting, ran = _counting_add()
    rerun_first = hook(lambda state: state.control.rerun_llm() if state.turn == 1 else None)
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("fine"))
    result = await Agent(model=script.model, tools=[counting], hooks={"after_llm": [rerun_first]}).prompt("go")
    assert ran == []
    assert shapes(result.messages) == ["user:go", "assistant:fine"]


async def test_rerun_llm_counts_against_max_turns() -> None:
    always = hook(lambda state: state.control.rerun_llm())
    script = Script(answer("x"), repeat_last=True)
    with pytest.raises(MaxTurnsExceeded):
        await Agent(model=script.model, max_turns=3, hooks={"after_llm": [always]}).prompt("go")
    assert script.count == 3


# -- inject ----------------------------------------------------------------------------------


@pytest.mark.parametrize("point", ["after_llm", "before_tool", "after_tool"])
async def test_inject_while_calls_are_pending_lands_after_their_results(point: str) -> None:
    @hook
    def note(state: State) -> None:
        if state.turn == 1:
            state.inject(Message.user(f"note from {state.point}"))

    script = Script(calls(call("c1", "add", a=1, b=2), call("c2", "add", a=3, b=4)), answer("done"))
    result = await Agent(model=script.model, tools=[add], hooks={point: [note]}).prompt("go")

    notes = [f"user:note from {point}"] * (2 if point == "after_tool" else 1)
    assert script.shapes(2) == ["user:go", "assistant:calls(c1,c2)", "tool:c1", "tool:c2", *notes]
    assert shapes(result.messages)[:4 + len(notes)] == script.shapes(2)


async def test_inject_while_calls_are_pending_survives_an_exit() -> None:
    note = hook(lambda state: state.inject(Message.user("note")))
    stop = hook(lambda state: state.control.exit())
    script = Script(calls(call("c1", "add", a=1, b=2)))
    agent = Agent(model=script.model, tools=[add], hooks={"after_llm": [note], "before_tool": [stop]})
    result = await agent.prompt("go")
    assert shapes(result.messages) == ["user:go", "assistant:calls(c1)", "tool:c1", "user:note"]


async def test_inject_without_pending_calls_appends_at_once() -> None:
    @hook
    def remind(state: State) -> None:
        state.inject(Message.user(f"reminder {state.turn}"))

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    await Agent(model=script.model, tools=[add], hooks={"before_llm": [remind]}).prompt("go")
    assert script.shapes(1) == ["user:go", "user:reminder 1"]
    assert script.shapes(2) == ["user:go", "user:reminder 1", "assistant:calls(c1)", "tool:c1", "user:reminder 2"]


# -- per-call decisions in before_tool -------------------------------------------------------


async def test_skip_tool_answers_with_the_given_result_without_running() -> None:
    counting, ran = _counting_add()

    @hook
    def cached(state: State) -> None:
        state.skip_tool("c1", "cached: 3")

    script = Script(calls(call("c1", "add", a=1, b=2), call("c2", "add", a=3, b=4)), answer("done"))
    result = await Agent(model=script.model, tools=[counting], hooks={"before_tool": [cached]}).prompt("go")

    assert ran == [(3, 4)]
    first, second = script.results(2)
    assert (first.call_id, first.content, first.is_error) == ("c1", "cached: 3", False)
    assert (second.call_id, second.content) == ("c2", "7")
    assert result.usage.tool_calls == 2


async def test_skip_tool_accepts_a_result_part() -> None:
    counting, ran = _counting_add()
    part = ToolResultPart(call_id="c1", content="stale", is_error=True)
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    hooks = {"before_tool": [lambda state: state.skip_tool("c1", part)]}
    await Agent(model=script.model, tools=[counting], hooks=hooks).prompt("go")
    assert ran == []
    (sent,) = script.results(2)
    assert (sent.call_id, sent.content, sent.is_error) == ("c1", "stale", True)


async def test_skip_tool_with_a_result_for_another_call_is_refused() -> None:
    part = ToolResultPart(call_id="elsewhere", content="x")
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    hooks = {"before_tool": [hook(lambda state: state.skip_tool("c1", part), name="misfiler")]}
    with pytest.raises(HookError) as caught:
        await Agent(model=script.model, tools=[add], hooks=hooks).prompt("go")
    assert caught.value.hook == "misfiler"
    assert caught.value.point == "before_tool"


async def test_deny_tool_tells_the_model_it_was_refused() -> None:
    counting, ran = _counting_add()
    hooks = {"before_tool": [lambda state: state.deny_tool("c1", "budget exhausted")]}
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("ok, I won't"))
    result = await Agent(model=script.model, tools=[counting], hooks=hooks).prompt("go")

    assert ran == []
    (sent,) = script.results(2)
    assert sent.call_id == "c1"
    assert sent.is_error
    assert "denied" in sent.content
    assert "budget exhausted" in sent.content
    assert result.stop_reason == "completed"


async def test_interrupt_pauses_the_run_for_approval() -> None:
    counting, ran = _counting_add()
    tracer = Tracer()
    hooks = {"before_tool": [lambda state: state.interrupt("c2", "needs a human")], "after_run": [tracer]}
    script = Script(calls(call("c1", "add", a=1, b=2), call("c2", "add", a=5, b=6)))
    result = await Agent(model=script.model, tools=[counting], hooks=hooks).prompt("go")

    assert result.stop_reason == "interrupted"
    assert script.count == 1
    assert ran == [(1, 2)]
    (paused,) = result.interruptions
    assert (paused.call_id, paused.name, paused.arguments, paused.reason) == (
        "c2", "add", {"a": 5, "b": 6}, "needs a human"
    )
    assert shapes(result.messages) == ["user:go", "assistant:calls(c1,c2)", "tool:c1"]
    assert tracer.points() == ["after_run"]


@pytest.mark.parametrize("method", ["skip_tool", "deny_tool", "interrupt"])
async def test_call_decisions_outside_before_tool_fail_the_hook(method: str) -> None:
    @hook
    def misplaced(state: State) -> None:
        getattr(state, method)("c1", "x")

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    with pytest.raises(HookError) as caught:
        await Agent(model=script.model, tools=[add], hooks={"after_tool": [misplaced]}).prompt("go")
    assert caught.value.point == "after_tool"
    assert "before_tool" in str(caught.value)


async def test_call_decision_for_an_unknown_call_id_fails_the_hook() -> None:
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    hooks = {"before_tool": [lambda state: state.deny_tool("c9")]}
    with pytest.raises(HookError, match="c9"):
        await Agent(model=script.model, tools=[add], hooks=hooks).prompt("go")


# -- edits: tool results and responses -------------------------------------------------------


async def test_after_tool_may_replace_the_result_with_a_value() -> None:
    @hook
    def offload(state: State) -> None:
        assert state.tool_result is not None
        state.tool_result = {"stored_as": f"blob-{state.tool_result.content}"}

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    result = await Agent(model=script.model, tools=[add], hooks={"after_tool": [offload]}).prompt("go")

    (sent,) = script.results(2)
    assert (sent.call_id, sent.content, sent.is_error) == ("c1", '{"stored_as":"blob-3"}', False)
    assert result.messages[2].tool_results == [sent]


async def test_after_tool_may_replace_the_result_with_a_string() -> None:
    hooks = {"after_tool": [lambda state: setattr(state, "tool_result", "replacement")]}
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    await Agent(model=script.model, tools=[add], hooks=hooks).prompt("go")
    assert script.results(2)[0].content == "replacement"


async def test_after_tool_may_replace_the_result_with_a_part() -> None:
    @hook
    def mark_failed(state: State) -> None:
        assert state.tool_call is not None
        state.tool_result = ToolResultPart(call_id=state.tool_call.id, content="judged wrong", is_error=True)

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    await Agent(model=script.model, tools=[add], hooks={"after_tool": [mark_failed]}).prompt("go")
    (sent,) = script.results(2)
    assert (sent.call_id, sent.content, sent.is_error) == ("c1", "judged wrong", True)


async def test_after_llm_may_edit_the_response() -> None:
    counting, ran = _counting_add()

    @hook
    def rewrite(state: State) -> None:
        if state.turn == 1:
            state.response = Message(role="assistant", parts=[call("c1", "add", a=10, b=20)])
        else:
            state.response = Message.assistant("edited answer")

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("original"))
    result = await Agent(model=script.model, tools=[counting], hooks={"after_llm": [rewrite]}).prompt("go")

    assert ran == [(10, 20)]
    assert script.results(2)[0].content == "30"
    assert result.output == "edited answer"
    assert shapes(result.messages)[-1] == "assistant:edited answer"


async def test_after_llm_response_must_stay_an_assistant_message() -> None:
    hooks = {"after_llm": [lambda state: setattr(state, "response", Message.user("hijacked"))]}
    with pytest.raises(HookError) as caught:
        await Agent(model=Script(answer("x")).model, hooks=hooks).prompt("go")
    assert caught.value.point == "after_llm"
    assert "assistant" in str(caught.value)


async def test_an_invalid_response_names_the_hook_that_set_it() -> None:
    hijacker = hook(lambda state: setattr(state, "response", Message.user("hijacked")), name="hijacker")
    with pytest.raises(HookError) as caught:
        await Agent(model=Script(answer("x")).model, hooks={"after_llm": [hijacker]}).prompt("go")
    assert (caught.value.hook, caught.value.point) == ("hijacker", "after_llm")


async def test_a_response_edited_to_hold_a_tool_result_is_a_hook_error() -> None:
    @hook(name="forger")
    def forger(state: State) -> None:
        if state.turn == 1:
            state.response = Message("assistant", [ToolResultPart(call_id="ghost", content="x"), call("c1", "add")])

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    with pytest.raises(HookError) as caught:
        await Agent(model=script.model, tools=[add], hooks={"after_llm": [forger]}).prompt("go")
    assert (caught.value.hook, caught.value.point) == ("forger", "after_llm")


# -- hooks that fail -------------------------------------------------------------------------


@pytest.mark.parametrize("point", ALL_POINTS)
async def test_a_hook_that_raises_stops_the_run_with_hook_error(point: str) -> None:
    @hook(name="broken")
    def broken(state: State) -> None:
        raise LookupError("memory index missing")

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    with pytest.raises(HookError) as caught:
        await Agent(model=script.model, tools=[add], hooks={point: [broken]}).prompt("go")

    error = caught.value
    assert error.hook == "broken"
    assert error.point == point
    assert "memory index missing" in str(error)
    assert "broken" in str(error)
    assert isinstance(error.__cause__, LookupError)


async def test_a_class_hook_is_named_after_its_class() -> None:
    class Guardrail:
        def run(self, state: State) -> None:
            raise ValueError("unsafe")

    with pytest.raises(HookError) as caught:
        await Agent(model=Script(answer("x")).model, hooks={"after_llm": [Guardrail()]}).prompt("go")
    assert caught.value.hook == "Guardrail"
    assert caught.value.point == "after_llm"


async def test_a_hook_error_keeps_the_history_consistent() -> None:
    @hook(name="broken")
    def broken(state: State) -> None:
        if state.turn == 2:
            raise RuntimeError("boom")

    history: list[Message] = []
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("never"))
    with pytest.raises(HookError):
        await Agent(model=script.model, tools=[add], hooks={"before_llm": [broken]}).prompt("go").with_history(history)
    assert shapes(history) == ["user:go", "assistant:calls(c1)", "tool:c1"]
    assert conversation_error(history) is None




@pytest.mark.parametrize(
    "point",
    ["before_run", "before_llm", "after_llm", "before_tool", "after_tool", "on_exit"],
)
async def test_a_hook_error_at_any_point_leaves_a_valid_history(point: str) -> None:
    broken = hook(lambda state: 1 / 0, name="broken")
    history: list[Message] = []
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    with pytest.raises(HookError):
        await Agent(model=script.model, tools=[add], hooks={point: [broken]}).prompt("go").with_history(history)
    assert conversation_error(history) is None
    # and the history can carry on into the next run
    after = Script(answer("fine"))
    await Agent(model=after.model, tools=[add]).prompt("again").with_history(history)
    assert after.count == 1


async def test_deleting_a_tool_result_is_a_hook_error_naming_hook_and_point() -> None:
    @hook(name="pruner")
    def pruner(state: State) -> None:
        if state.turn == 2:
            del state.messages[2]  # the tool result of c1

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("never"))
    with pytest.raises(HookError) as caught:
        await Agent(model=script.model, tools=[add], hooks={"before_llm": [pruner]}).prompt("go")
    assert caught.value.hook == "pruner"
    assert caught.value.point == "before_llm"
    assert "pruner" in str(caught.value)
    assert script.count == 1


async def test_appending_a_result_without_its_call_is_a_hook_error() -> None:
    @hook(name="forger")
    def forger(state: State) -> None:
        state.messages.append(Message(role="tool", parts=[ToolResultPart(call_id="ghost", content="boo")]))

    script = Script(answer("never"))
    with pytest.raises(HookError) as caught:
        await Agent(model=script.model, hooks={"before_llm": [forger]}).prompt("go")
    assert (caught.value.hook, caught.value.point) == ("forger", "before_llm")
    assert "ghost" in str(caught.value)
    assert script.count == 0


async def test_the_hook_that_broke_the_conversation_is_named_not_a_later_one() -> None:
    breaker = hook(lambda state: state.messages.insert(0, Message(role="tool", parts=[
        ToolResultPart(call_id="x", content="?")])), name="breaker")
    fixer = hook(lambda state: state.messages.pop(0), name="fixer")
    with pytest.raises(HookError) as caught:
        await Agent(model=Script(answer("x")).model, hooks={"before_llm": [breaker, fixer]}).prompt("go")
    assert caught.value.hook == "breaker"


async def test_deleting_the_pending_calls_in_before_tool_is_a_hook_error() -> None:
    @hook(name="eraser")
    def eraser(state: State) -> None:
        del state.messages[-1]

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    with pytest.raises(HookError) as caught:
        await Agent(model=script.model, tools=[add], hooks={"before_tool": [eraser]}).prompt("go")
    assert (caught.value.hook, caught.value.point) == ("eraser", "before_tool")


async def test_answering_a_pending_call_by_hand_in_before_tool_is_a_hook_error() -> None:
    @hook(name="eager")
    def eager(state: State) -> None:
        state.messages.append(Message(role="tool", parts=[ToolResultPart(call_id="c1", content="3")]))

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    with pytest.raises(HookError) as caught:
        await Agent(model=script.model, tools=[add], hooks={"before_tool": [eager]}).prompt("go")
    assert (caught.value.hook, caught.value.point) == ("eager", "before_tool")


async def test_replacing_messages_with_a_valid_list_is_allowed() -> None:
    @hook
    def summarize(state: State) -> None:
        if state.turn == 2:
            state.messages = [Message.user("summary: 1+2 was computed as 3")]

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    result = await Agent(model=script.model, tools=[add], hooks={"before_llm": [summarize]}).prompt("go")
    assert script.shapes(2) == ["user:summary: 1+2 was computed as 3"]
    assert result.output == "done"


# -- after_run on every path -----------------------------------------------------------------


def _after_run_case(kind: str) -> tuple[Script, dict[str, list[Any]], dict[str, Any]]:
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    hooks: dict[str, list[Any]] = {}
    options: dict[str, Any] = {}
    if kind == "hook_exit":
        hooks["before_tool"] = [lambda state: state.control.exit()]
    elif kind == "interrupted":
        hooks["before_tool"] = [lambda state: state.interrupt("c1")]
    elif kind == "max_turns":
        options["max_turns"] = 1
    elif kind == "hook_error":
        hooks["after_tool"] = [hook(lambda state: 1 / 0, name="divider")]
    return script, hooks, options


@pytest.mark.parametrize("kind", ["completed", "hook_exit", "interrupted", "max_turns", "hook_error"])
async def test_after_run_fires_once_on_every_stop_path(kind: str) -> None:
    script, hooks, options = _after_run_case(kind)
    tracer = Tracer()
    hooks["after_run"] = [tracer]
    agent = Agent(model=script.model, tools=[add], hooks=hooks, **options)

    if kind == "max_turns":
        with pytest.raises(MaxTurnsExceeded) as caught:
            await agent.prompt("go")
        assert caught.value.result.stop_reason == "max_turns"
    elif kind == "hook_error":
        with pytest.raises(HookError):
            await agent.prompt("go")
    else:
        result = await agent.prompt("go")
        assert result.stop_reason == kind
    assert tracer.points() == ["after_run"]


async def test_exit_in_after_run_does_not_change_how_the_run_stopped() -> None:
    script = Script(answer("done"))
    late_exit = hook(lambda state: state.control.exit("late"))
    result = await Agent(model=script.model, hooks={"after_run": [late_exit]}).prompt("go")
    assert result.stop_reason == "completed"
    assert result.output == "done"


async def test_a_run_started_while_another_warms_up_does_not_warm_again() -> None:
    from hookline.models import FunctionModel, ModelResponse

    warmed: list[str] = []
    warming, finish_warming = asyncio.Event(), asyncio.Event()

    class Slow:
        name = "slow"

        async def warm_up_async(self) -> None:
            warmed.append("warm")
            warming.set()
            await finish_warming.wait()

        def run(self, state: State) -> None:
            pass

    agent = Agent(model=FunctionModel(lambda r: ModelResponse(text="ok")), hooks={"before_run": [Slow()]})
    first = asyncio.ensure_future(agent.prompt("a"))
    await warming.wait()
    async with asyncio.timeout(10):  # the second run neither warms the hook nor waits for the first to finish
        assert (await agent.prompt("b")).output == "ok"
    finish_warming.set()
    assert (await first).output == "ok"
    assert warmed == ["warm"]


class _Closing(Toolset):
    """A toolset whose close waits for `gate`, or fails."""

    def __init__(self, name: str, log: list[str], gate: asyncio.Event | None = None, fails: bool = False) -> None:
        self.name, self.log, self.gate, self.fails = name, log, gate, fails

    async def connect(self) -> None:
        """Nothing to open."""

    def tools(self) -> Sequence[Tool]:
        return []

    async def aclose(self) -> None:
        self.log.append(f"closing {self.name}")
        if self.gate is not None:
            await asyncio.wait_for(self.gate.wait(), timeout=5)
        if self.fails:
            raise OSError(f"{self.name} could not close")
        self.log.append(f"closed {self.name}")


class _ClosingModel(FunctionModel):
    def __init__(self, log: list[str]) -> None:
        super().__init__(lambda request: ModelResponse(text="ok"))
        self.log = log

    async def aclose(self) -> None:
        self.log.append("closed the model")


async def test_close_closes_the_toolsets_at_once_and_everything_though_one_fails() -> None:
    log: list[str] = []
    slow_gate = asyncio.Event()

    class Failing(Lifecycle):
        def close(self) -> None:
            raise RuntimeError("the hook could not close")

    class OpensTheGate(_Closing):
        async def aclose(self) -> None:
            slow_gate.set()  # only a close running beside the slow one lets it finish
            await super().aclose()

    toolsets = [_Closing("slow", log, gate=slow_gate), _Closing("broken", log, fails=True), OpensTheGate("last", log)]
    agent = Agent(model=_ClosingModel(log), tools=toolsets, hooks={"before_llm": [Failing()]})

    with pytest.raises(RuntimeError, match="the hook could not close"):
        await agent.close()

    assert sorted(log) == ["closed last", "closed slow", "closed the model", "closing broken", "closing last",
                           "closing slow"]
