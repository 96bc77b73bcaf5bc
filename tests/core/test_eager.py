"""`overlap` begins jobs at once and gives a task only to those that wait; tools run on it.

What a task would guarantee must hold either way: each coroutine runs in a context of its
own, waiting ones overlap, values land as each finishes (so a cancelled caller keeps the
finished ones), exceptions and cancellations reach the right place, and nothing is left
running or unawaited.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable
from typing import Any

import pytest

from hookline import Agent, RunContext, Tool, ToolCallPart, ToolResultPart, tool
from hookline._run.eager import first_step, overlap
from hookline._run.tool_runner import ToolRunner

from .scripted import Script, answer, call, calls

pytestmark = pytest.mark.anyio

where: contextvars.ContextVar[str] = contextvars.ContextVar("where", default="caller")


def _start(pairs: list[tuple[str, Any]], results: dict[str, Any]) -> Awaitable[None] | None:
    """`overlap` over the coroutines of `pairs`, each begun by `first_step`, its value kept under its name."""
    names = {coro: name for name, coro in pairs}
    return overlap([coro for _, coro in pairs], first_step, results, names.__getitem__)


async def _overlap(pairs: list[tuple[str, Any]], results: dict[str, Any]) -> None:
    """Run `overlap` to the end, as its caller does."""
    waiting = _start(pairs, results)
    if waiting is not None:
        await waiting


async def _quick(value: int) -> int:
    return value


async def _waiting(value: int, gate: asyncio.Event) -> int:
    await gate.wait()
    return value


async def test_coroutines_that_never_wait_finish_without_a_task() -> None:
    tasks_before = asyncio.all_tasks()
    seen: list[asyncio.Task[Any] | None] = []

    async def note(value: int) -> int:
        seen.append(asyncio.current_task())
        return value

    results: dict[str, int] = {}
    assert _start([("a", note(1)), ("b", note(2))], results) is None, "nothing to wait for"

    assert results == {"a": 1, "b": 2}
    assert seen == [asyncio.current_task()] * 2, "each ran in the caller's own step"
    assert asyncio.all_tasks() == tasks_before


async def test_waiting_coroutines_overlap_and_each_value_lands_as_it_finishes() -> None:
    first, second = asyncio.Event(), asyncio.Event()
    results: dict[str, int] = {}

    async def releases_the_other(value: int) -> int:
        second.set()  # only a concurrent partner can let `first` go
        await first.wait()
        return value

    async def waits_then_releases(value: int) -> int:
        await second.wait()
        first.set()
        return value

    await asyncio.wait_for(_overlap([("a", releases_the_other(1)), ("b", waits_then_releases(2)),
                                    ("c", _quick(3))], results), timeout=5)

    assert results == {"a": 1, "b": 2, "c": 3}


async def test_each_coroutine_runs_in_a_context_of_its_own_kept_across_its_waits() -> None:
    gate = asyncio.Event()
    observed: dict[str, str] = {}

    async def set_then_wait(name: str) -> str:
        where.set(name)
        await gate.wait()
        observed[name] = where.get()
        return name

    async def open_gate() -> str:
        gate.set()
        return where.get()

    results: dict[str, str] = {}
    await _overlap([("x", set_then_wait("x")), ("y", set_then_wait("y")), ("z", open_gate())], results)

    assert observed == {"x": "x", "y": "y"}
    assert results["z"] == "caller", "a sibling's setting never leaks into another coroutine"
    assert where.get() == "caller", "nor into the caller"


async def test_a_cancelled_caller_keeps_the_values_that_landed_and_stops_the_waiting_ones() -> None:
    gate, cleaned = asyncio.Event(), asyncio.Event()
    results: dict[str, int] = {}
    seen: list[type[BaseException]] = []

    async def stuck(value: int) -> int:
        try:
            await gate.wait()
        except BaseException as exc:
            seen.append(type(exc))
            raise
        finally:
            cleaned.set()
        return value

    caller = asyncio.ensure_future(_overlap([("done", _quick(1)), ("stuck", stuck(2))], results))
    while "done" not in results:
        await asyncio.sleep(0)
    caller.cancel()  # before the task that goes on with `stuck` took its first step

    with pytest.raises(asyncio.CancelledError):
        await caller
    await asyncio.wait_for(cleaned.wait(), timeout=5)
    assert results == {"done": 1}
    assert seen == [asyncio.CancelledError], "the coroutine itself is cancelled, not dropped"


async def test_a_coroutine_that_fails_at_once_closes_the_unstarted_ones() -> None:
    started: list[str] = []

    async def fails() -> int:
        raise KeyError("at once")

    async def never() -> int:
        started.append("never")
        return 0

    unstarted = never()
    results: dict[str, int] = {}
    with pytest.raises(KeyError, match="at once"):
        _start([("a", _quick(1)), ("b", fails()), ("c", unstarted)], results)

    assert results == {"a": 1}
    assert started == []
    assert unstarted.cr_frame is None, "closed, so it is not reported as never awaited"


async def test_the_first_that_waits_goes_on_in_the_callers_task_and_the_later_ones_in_their_own() -> None:
    gate = asyncio.Event()
    tasks: dict[str, asyncio.Task[Any] | None] = {}

    async def waits(name: str) -> str:
        tasks[name] = asyncio.current_task()
        await gate.wait()
        assert asyncio.current_task() is tasks[name], "a coroutine never changes task"
        return name

    async def opens() -> str:
        tasks["opens"] = asyncio.current_task()
        gate.set()
        return "opens"

    results: dict[str, str] = {}
    await _overlap([("first", waits("first")), ("second", waits("second")), ("opens", opens())], results)

    assert results == {"first": "first", "second": "second", "opens": "opens"}
    assert tasks["first"] is asyncio.current_task()
    assert len({id(tasks["first"]), id(tasks["second"]), id(tasks["opens"])}) == 3


async def test_a_timeout_in_a_coroutine_that_waits_cancels_that_coroutine_only() -> None:
    never = asyncio.Event()

    async def times_out() -> str:
        try:
            async with asyncio.timeout(0.01):
                await never.wait()
        except TimeoutError:
            return "timed out"
        return "never"

    results: dict[str, str] = {}
    await _overlap([("a", times_out()), ("b", times_out()), ("c", _quick(3))], results)  # type: ignore[list-item]

    assert results == {"a": "timed out", "b": "timed out", "c": 3}
    assert not asyncio.current_task().cancelling(), "the caller's task is left uncancelled"  # type: ignore[union-attr]


async def test_the_one_going_on_in_the_callers_task_fails_and_stops_the_later_ones() -> None:
    gate = asyncio.Event()
    seen: list[type[BaseException]] = []

    async def fails_later() -> int:
        await gate.wait()
        raise ValueError("later")

    async def waits_forever() -> int:
        try:
            await asyncio.Event().wait()
        except BaseException as exc:
            seen.append(type(exc))
            raise
        return 0

    async def opens() -> int:
        gate.set()
        return 1

    results: dict[str, int] = {}
    with pytest.raises(ValueError, match="later"):
        await _overlap([("a", fails_later()), ("b", waits_forever()), ("c", opens())], results)
    for _ in range(3):
        await asyncio.sleep(0)
    assert results == {"c": 1}
    assert seen == [asyncio.CancelledError]


async def test_a_later_coroutine_that_fails_fails_the_caller_once_the_first_is_done() -> None:
    gate = asyncio.Event()

    async def waits() -> int:
        await gate.wait()
        return 1

    async def fails_later() -> int:
        gate.set()
        await asyncio.sleep(0)
        raise ValueError("later")

    results: dict[str, int] = {}
    with pytest.raises(ValueError, match="later"):
        await _overlap([("a", waits()), ("b", fails_later())], results)
    assert results == {"a": 1}


async def test_a_coroutine_may_catch_its_cancellation_and_wait_again() -> None:
    gate, cancelled, second_wait = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def stubborn() -> str:
        try:
            await gate.wait()
        except asyncio.CancelledError:
            cancelled.set()
            await second_wait.wait()
            return "finished its cleanup"
        return "never cancelled"

    results: dict[str, str] = {}
    caller = asyncio.ensure_future(_overlap([("a", stubborn())], results))
    await asyncio.sleep(0)
    caller.cancel()
    await asyncio.wait_for(cancelled.wait(), timeout=5)
    second_wait.set()
    outcome = await asyncio.gather(caller, return_exceptions=True)

    assert results == {"a": "finished its cleanup"}
    assert outcome == [None], "the coroutine swallowed the cancellation, so the caller finished"


# -- through the tool runner ----------------------------------------------------------------------


async def test_async_tools_that_never_wait_run_in_the_run_task() -> None:
    tasks: list[asyncio.Task[Any] | None] = []

    @tool
    async def mark(n: int) -> int:
        """Note the task."""
        tasks.append(asyncio.current_task())
        return n

    script = Script(calls(call("c1", "mark", n=1), call("c2", "mark", n=2)), answer("ok"))
    agent = Agent(model=script.model, tools=[mark])

    async def run() -> Any:
        return await agent.prompt("go"), asyncio.current_task()

    result, run_task = await run()

    assert [r.content for m in result.messages for r in m.tool_results] == ["1", "2"]
    assert tasks == [run_task, run_task]


@pytest.mark.parametrize("quick_first", [False, True], ids=["both-wait", "after-one-that-does-not"])
async def test_async_tools_that_wait_overlap_and_answer_in_call_order(quick_first: bool) -> None:
    left, right = asyncio.Event(), asyncio.Event()

    @tool
    async def quick() -> str:
        """Answers at once."""
        return "quick"

    @tool
    async def meet(side: str) -> str:
        """Wait for the other side: returns only if both calls run at once."""
        mine, other = (left, right) if side == "left" else (right, left)
        mine.set()
        await asyncio.wait_for(other.wait(), timeout=5)
        return side

    first = [call("c0", "quick")] if quick_first else []
    script = Script(calls(*first, call("c1", "meet", side="left"), call("c2", "meet", side="right")), answer("met"))
    agent = Agent(model=script.model, tools=[quick, meet])

    result = await agent.prompt("go")

    expected = ["quick", "left", "right"] if quick_first else ["left", "right"]
    assert [r.content for m in result.messages for r in m.tool_results] == expected


async def test_a_tool_subclass_with_its_own_call_is_called_through_it() -> None:
    class Doubling(Tool):
        async def call(self, arguments: dict[str, Any]) -> Any:
            return 2 * arguments["x"]

    def echo(x: int) -> int:
        """Echo."""
        return x

    script = Script(calls(call("c1", "echo", x=21)), answer("ok"))
    agent = Agent(model=script.model, tools=[Doubling(echo)])

    result = await agent.prompt("go")

    assert [r.content for m in result.messages for r in m.tool_results] == ["42"]


# -- plain functions: answered at once ---------------------------------------------------------------


def test_only_a_plain_sync_function_runs_inline() -> None:
    def plain(x: int) -> int:
        """Plain."""
        return x

    async def waits(x: int) -> int:
        """Async."""
        return x

    def with_context(ctx: RunContext, x: int) -> int:
        """Takes its run's context."""
        return x

    class Doubling(Tool):
        async def call(self, arguments: dict[str, Any]) -> Any:
            return 2 * arguments["x"]

    assert Tool(plain).inline
    assert not Tool(plain, thread=True).inline
    assert not Tool(waits).inline
    assert not Tool(with_context).inline
    assert not Doubling(plain).inline


_HALF_CALLS = [
    ToolCallPart(id="ok", name="half", arguments={"x": 3}),
    ToolCallPart(id="raw", name="half", arguments='{"x": 4}'),
    ToolCallPart(id="not-json", name="half", arguments="{x"),
    ToolCallPart(id="not-an-object", name="half", arguments="[1]"),
    ToolCallPart(id="bad", name="half", arguments={"x": "three"}),
    ToolCallPart(id="fails", name="half", arguments={"x": 0}),
]
"""Calls of a tool `half` that succeed and that fail every way a call can."""


async def test_answer_now_gives_what_answer_gives_failures_included() -> None:
    def half(x: int) -> float:
        """Half of x; refuses zero."""
        if x == 0:
            raise ValueError("zero")
        return x / 2

    half_tool = Tool(half)
    cases = _HALF_CALLS

    for case in cases:
        assert half_tool.answer_now(case) == await half_tool.answer(case)
    assert [half_tool.answer_now(c).is_error for c in cases] == [False, False, True, True, True, True]
    assert "not a valid JSON object" in half_tool.answer_now(cases[2]).content
    assert "expected an object, got list" in half_tool.answer_now(cases[3]).content
    assert half_tool.answer_now(cases[5]).content == "half failed: ValueError: zero"


async def test_the_runner_answers_plain_calls_at_once_and_hands_back_only_calls_that_wait() -> None:
    def plain(x: int) -> int:
        """Plain."""
        return x

    class Doubling(Tool):  # its own `call`: no inline call
        async def call(self, arguments: dict[str, Any]) -> Any:
            return 2 * arguments["x"]

    tools = {"plain": Tool(plain), "doubled": Doubling(plain, name="doubled")}
    runner = ToolRunner(10, None)
    finished: dict[str, ToolResultPart] = {}

    assert runner.start(tools, [ToolCallPart(id="a", name="plain", arguments={"x": 1}),
                                ToolCallPart(id="b", name="plain", arguments={"x": 2})], finished) is None
    assert [r.content for r in finished.values()] == ["1", "2"]

    rest = runner.start(tools, [ToolCallPart(id="c", name="plain", arguments={"x": 3}),
                                ToolCallPart(id="d", name="doubled", arguments={"x": 4}),
                                ToolCallPart(id="e", name="plain", arguments={"x": 5})], finished)
    assert rest is not None
    assert "d" not in finished, "a call that needs a coroutine waits for the caller's await"
    await rest
    assert {k: r.content for k, r in finished.items()} == {"a": "1", "b": "2", "c": "3", "d": "8", "e": "5"}


async def test_begin_gives_what_answer_gives_for_an_async_tool_failures_included() -> None:
    async def half(x: int) -> float:
        """Half of x; refuses zero."""
        if x == 0:
            raise ValueError("zero")
        return x / 2

    half_tool = Tool(half)
    assert [half_tool.begin(c) for c in _HALF_CALLS] == [await half_tool.answer(c) for c in _HALF_CALLS]


async def test_an_async_tool_begun_at_once_keeps_its_context_to_itself() -> None:
    @tool
    async def mark(name: str) -> str:
        """Set the context variable, then read it."""
        seen_before = where.get()
        where.set(name)
        return f"{seen_before}->{where.get()}"

    script = Script(calls(call("c1", "mark", name="one"), call("c2", "mark", name="two")), answer("ok"))
    agent = Agent(model=script.model, tools=[mark])

    result = await agent.prompt("go")

    assert [r.content for m in result.messages for r in m.tool_results] == ["caller->one", "caller->two"]
    assert where.get() == "caller"


async def test_a_tool_subclass_with_its_own_answer_is_answered_through_it() -> None:
    answered: list[str] = []

    class Audited(Tool):
        async def answer(self, call: ToolCallPart, values: dict[str, Any] | None = None) -> ToolResultPart:
            answered.append(call.id)
            return await super().answer(call, values)

    def echo(x: int) -> int:
        """Echo."""
        return x

    async def echo_async(x: int) -> int:
        """Echo, asynchronously."""
        return x

    script = Script(calls(call("c1", "echo", x=1)), calls(call("c2", "echo", x=2), call("c3", "echo_async", x=3)),
                    answer("ok"))
    agent = Agent(model=script.model, tools=[Audited(echo), Audited(echo_async)])

    result = await agent.prompt("go")

    assert [r.content for m in result.messages for r in m.tool_results] == ["1", "2", "3"]
    assert answered == ["c1", "c2", "c3"]
