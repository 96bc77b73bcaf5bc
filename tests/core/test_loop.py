"""The run loop (DESIGN §1, §2): answers, usage, instructions, tools per turn, history,
turn limits, and concurrent tool calls."""

from __future__ import annotations

import asyncio

import pytest

from hookline import Agent, MaxTurnsExceeded, Message, State, TextPart, ToolCallPart, tool
from hookline.models import ModelRequest, ModelResponse

from .scripted import Script, add, answer, call, calls, shapes

pytestmark = pytest.mark.anyio


@tool
def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


# -- completion and result -------------------------------------------------------------------


async def test_text_answer_completes_the_run() -> None:
    script = Script(answer("hello there"))
    result = await Agent(model=script.model).prompt("hi")

    assert result.output == "hello there"
    assert result.stop_reason == "completed"
    assert shapes(result.messages) == ["user:hi", "assistant:hello there"]
    assert result.usage.model_calls == 1
    assert result.usage.tool_calls == 0
    assert result.interruptions == []
    assert script.shapes(1) == ["user:hi"]


async def test_tool_call_result_goes_back_to_the_model() -> None:
    script = Script(calls(call("c1", "add", a=2, b=3)), answer("5"))
    result = await Agent(model=script.model, tools=[add]).prompt("2+3?")

    assert result.output == "5"
    assert result.stop_reason == "completed"
    assert shapes(result.messages) == ["user:2+3?", "assistant:calls(c1)", "tool:c1", "assistant:5"]
    (sent,) = script.results(2)
    assert (sent.call_id, sent.content, sent.is_error) == ("c1", "5", False)
    assert script.shapes(2) == ["user:2+3?", "assistant:calls(c1)", "tool:c1"]
    assert result.messages[1].tool_calls == [ToolCallPart(id="c1", name="add", arguments={"a": 2, "b": 3})]


async def test_usage_sums_every_model_call() -> None:
    script = Script(
        calls(call("c1", "add", a=1, b=1), call("c2", "add", a=2, b=2), input_tokens=10, output_tokens=4),
        calls(call("c3", "add", a=3, b=3), input_tokens=20, output_tokens=5),
        answer("done", input_tokens=30, output_tokens=6),
    )
    result = await Agent(model=script.model, tools=[add]).prompt("go")

    usage = result.usage
    assert (usage.input_tokens, usage.output_tokens) == (60, 15)
    assert usage.model_calls == 3
    assert usage.tool_calls == 3


async def test_text_beside_tool_calls_is_kept_and_the_run_goes_on() -> None:
    script = Script(calls(call("c1", "add", a=1, b=2), text="let me add"), answer("3"))
    result = await Agent(model=script.model, tools=[add]).prompt("go")

    assert result.output == "3"
    assert result.messages[1].text == "let me add"
    assert [m.text for m in script.requests[1].messages if m.role == "assistant"] == ["let me add"]


async def test_structured_tool_output_is_sent_as_json() -> None:
    @tool
    def lookup(city: str) -> dict[str, object]:
        """Look a city up."""
        return {"city": city, "population": 3}

    script = Script(calls(call("c1", "lookup", city="Oslo")), answer("ok"))
    await Agent(model=script.model, tools=[lookup]).prompt("go")

    (sent,) = script.results(2)
    assert sent.content == '{"city":"Oslo","population":3}'


# -- instructions ----------------------------------------------------------------------------


async def test_string_instructions_are_the_first_system_message_of_every_call() -> None:
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("3"))
    result = await Agent(model=script.model, tools=[add], instructions="You are terse.").prompt("go")

    for request in script.requests:
        first = request.messages[0]
        assert first.role == "system"
        assert first.text == "You are terse."
        assert [m.role for m in request.messages].count("system") == 1
    assert all(m.role != "system" for m in result.messages)


async def test_callable_instructions_are_called_before_every_model_call() -> None:
    seen: list[tuple[int, int]] = []

    def instructions(state: State) -> str:
        seen.append((state.turn, state.usage.model_calls))
        return f"instructions for turn {state.turn}"

    script = Script(calls(call("c1", "add", a=1, b=2)), calls(call("c2", "add", a=3, b=4)), answer("done"))
    await Agent(model=script.model, tools=[add], instructions=instructions).prompt("go")

    assert seen == [(1, 0), (2, 1), (3, 2)]
    assert [r.messages[0].text for r in script.requests] == [f"instructions for turn {n}" for n in (1, 2, 3)]
    assert all(r.messages[0].role == "system" for r in script.requests)


async def test_no_instructions_means_no_system_message() -> None:
    script = Script(answer("ok"))
    await Agent(model=script.model).prompt("hi")
    assert [m.role for m in script.requests[0].messages] == ["user"]


# -- tools offered ---------------------------------------------------------------------------


async def test_static_tools_are_offered_on_every_model_call() -> None:
    script = Script(calls(call("c1", "add", a=1, b=2)), calls(call("c2", "mul", a=2, b=2)), answer("done"))
    await Agent(model=script.model, tools=[add, mul]).prompt("go")

    assert [script.tool_names(n) for n in (1, 2, 3)] == [["add", "mul"]] * 3
    assert script.requests[2].tools[0] == add.spec


async def test_dynamic_toolset_is_resolved_again_every_turn() -> None:
    turns: list[int] = []

    def pick(state: State) -> list[object]:
        turns.append(state.turn)
        return [add] if state.turn == 1 else [mul]

    script = Script(calls(call("c1", "add", a=2, b=3)), calls(call("c2", "add", a=1, b=1)), answer("done"))
    result = await Agent(model=script.model, tools=pick).prompt("go")

    assert turns == [1, 2, 3]
    assert [script.tool_names(n) for n in (1, 2, 3)] == [["add"], ["mul"], ["mul"]]
    first, second = script.results(3)
    assert (first.content, first.is_error) == ("5", False)
    # on turn 2 only `mul` is offered: the call to `add` is an unknown tool now
    assert second.is_error
    assert "add" in second.content
    assert "mul" in second.content
    assert result.stop_reason == "completed"


async def test_dynamic_toolset_may_return_plain_functions() -> None:
    def shout(text: str) -> str:
        """Shout the text."""
        return text.upper()

    script = Script(calls(call("c1", "shout", text="hey")), answer("done"))
    await Agent(model=script.model, tools=lambda state: [shout]).prompt("go")

    assert script.tool_names(1) == ["shout"]
    assert script.results(2)[0].content == "HEY"


# -- history and turns -----------------------------------------------------------------------


async def test_with_history_prepends_it_and_appends_this_runs_messages_in_order() -> None:
    history = [Message.user("my name is Ada"), Message.assistant("hello Ada")]
    before = list(history)
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("3"))
    result = await Agent(model=script.model, tools=[add]).prompt("1+2?").with_history(history)

    assert script.shapes(1) == ["user:my name is Ada", "assistant:hello Ada", "user:1+2?"]
    assert history[:2] == before
    assert shapes(history) == [
        "user:my name is Ada", "assistant:hello Ada",
        "user:1+2?", "assistant:calls(c1)", "tool:c1", "assistant:3",
    ]
    assert history[2:] == result.messages
    assert shapes(result.messages) == ["user:1+2?", "assistant:calls(c1)", "tool:c1", "assistant:3"]


async def test_with_history_carries_a_conversation_across_runs() -> None:
    history: list[Message] = []
    script = Script(answer("first"), answer("second"))
    agent = Agent(model=script.model)
    await agent.prompt("one").with_history(history)
    await agent.prompt("two").with_history(history)

    assert script.shapes(2) == ["user:one", "assistant:first", "user:two"]
    assert shapes(history) == ["user:one", "assistant:first", "user:two", "assistant:second"]


def _always_calling(request: ModelRequest) -> ModelResponse:
    number = sum(1 for m in request.messages if m.role == "assistant") + 1
    return calls(call(f"c{number}", "add", a=number, b=0))


async def test_multi_turn_raises_the_agents_max_turns_for_one_run() -> None:
    steps = [calls(call(f"c{n}", "add", a=n, b=0)) for n in range(1, 4)]
    script = Script(*steps, answer("done"))
    agent = Agent(model=script.model, tools=[add], max_turns=1)
    result = await agent.prompt("go").multi_turn(5)

    assert result.stop_reason == "completed"
    assert script.count == 4
    assert result.usage.model_calls == 4


async def test_multi_turn_lowers_the_agents_max_turns_for_one_run() -> None:
    script = Script(_always_calling, repeat_last=True)
    agent = Agent(model=script.model, tools=[add], max_turns=10)
    with pytest.raises(MaxTurnsExceeded):
        await agent.prompt("go").multi_turn(2)
    assert script.count == 2


async def test_an_answer_on_the_last_allowed_turn_completes() -> None:
    script = Script(calls(call("c1", "add", a=1, b=1)), answer("2"))
    result = await Agent(model=script.model, tools=[add], max_turns=2).prompt("go")
    assert result.stop_reason == "completed"
    assert result.output == "2"


async def test_continue_run_on_the_last_allowed_turn_exceeds_max_turns() -> None:
    from hookline import hook

    keep_going = hook(lambda state: state.control.continue_run())
    script = Script(answer("one"), answer("two"))
    with pytest.raises(MaxTurnsExceeded) as caught:
        await Agent(model=script.model, max_turns=2, hooks={"on_exit": [keep_going]}).prompt("go")
    assert script.count == 2
    assert shapes(caught.value.result.messages) == ["user:go", "assistant:one", "assistant:two"]


async def test_max_turns_exceeded_carries_the_partial_result() -> None:
    script = Script(_always_calling, repeat_last=True)
    agent = Agent(model=script.model, tools=[add], max_turns=2)
    with pytest.raises(MaxTurnsExceeded) as caught:
        await agent.prompt("go")

    partial = caught.value.result
    assert script.count == 2
    assert partial.stop_reason == "max_turns"
    assert shapes(partial.messages) == ["user:go", "assistant:calls(c1)", "tool:c1", "assistant:calls(c2)", "tool:c2"]
    assert partial.usage.model_calls == 2
    assert partial.usage.tool_calls == 2
    assert "2" in str(caught.value)


async def test_max_turns_exceeded_still_appends_to_the_history() -> None:
    history: list[Message] = []
    script = Script(_always_calling, repeat_last=True)
    with pytest.raises(MaxTurnsExceeded) as caught:
        await Agent(model=script.model, tools=[add], max_turns=1).prompt("go").with_history(history)
    assert history == caught.value.result.messages
    assert shapes(history) == ["user:go", "assistant:calls(c1)", "tool:c1"]


async def test_final_answer_on_max_turns_makes_one_last_call_without_tools() -> None:
    script = Script(
        calls(call("c1", "add", a=1, b=1)), calls(call("c2", "add", a=2, b=2)), answer("best effort: 4")
    )
    agent = Agent(model=script.model, tools=[add], max_turns=2, on_max_turns="final_answer")
    result = await agent.prompt("go")

    assert script.count == 3  # max_turns + 1
    assert [script.tool_names(n) for n in (1, 2, 3)] == [["add"], ["add"], []]
    assert result.stop_reason == "max_turns"
    assert result.output == "best effort: 4"
    assert shapes(result.messages)[-1] == "assistant:best effort: 4"
    assert result.usage.model_calls == 3


async def test_final_answer_call_that_still_calls_tools_keeps_the_conversation_valid() -> None:
    script = Script(calls(call("c1", "add", a=1, b=1)), calls(call("c2", "add", a=2, b=2)))
    agent = Agent(model=script.model, tools=[add], max_turns=1, on_max_turns="final_answer")
    result = await agent.prompt("go")

    assert script.count == 2
    assert result.stop_reason == "max_turns"
    assert shapes(result.messages) == ["user:go", "assistant:calls(c1)", "tool:c1", "assistant:calls(c2)", "tool:c2"]
    last = result.messages[-1].tool_results[0]
    assert last.is_error


# -- concurrent tool calls -------------------------------------------------------------------


async def test_tool_calls_of_one_turn_run_concurrently() -> None:
    barrier = asyncio.Barrier(2)

    @tool
    async def meet(who: str) -> str:
        """Wait for the other call."""
        async with asyncio.timeout(2):  # sequential calls would never meet
            await barrier.wait()
        return f"{who} met"

    script = Script(calls(call("c1", "meet", who="ann"), call("c2", "meet", who="bob")), answer("done"))
    result = await Agent(model=script.model, tools=[meet]).prompt("go")

    assert [(r.content, r.is_error) for r in script.results(2)] == [("ann met", False), ("bob met", False)]
    assert result.stop_reason == "completed"


def _in_flight_probe(calls: int, bound: int) -> tuple[object, list[int]]:
    """A tool counting its calls running at once, at most: each call holds until `bound` of them run
    (or every call has started), so a bound that lets fewer through times out and one that lets
    more through shows in the count."""
    peak = [0]
    running = [0]
    started = [0]
    changed = asyncio.Condition()

    @tool
    async def probe(n: int) -> int:
        """Count calls running at once."""
        async with changed:
            running[0] += 1
            started[0] += 1
            peak[0] = max(peak[0], running[0])
            changed.notify_all()
            async with asyncio.timeout(10):
                await changed.wait_for(lambda: running[0] >= bound or started[0] == calls)
            running[0] -= 1
        return n

    return probe, peak


@pytest.mark.parametrize(("concurrency", "expected_peak"), [(1, 1), (2, 2), (None, 4), (10, 6)])
async def test_tool_concurrency_bounds_calls_in_flight(concurrency: int | None, expected_peak: int) -> None:
    probe, peak = _in_flight_probe(6, expected_peak)
    script = Script(calls(*(call(f"c{n}", "probe", n=n) for n in range(1, 7))), answer("done"))
    options = {} if concurrency is None else {"tool_concurrency": concurrency}
    await Agent(model=script.model, tools=[probe], **options).prompt("go")

    assert peak[0] == expected_peak  # the default is 4
    assert [r.content for r in script.results(2)] == ["1", "2", "3", "4", "5", "6"]


async def test_closing_a_stream_early_cancels_the_run() -> None:
    from contextlib import aclosing

    outcome: list[str] = []

    @tool
    async def slow() -> str:
        """Take a long time."""
        try:
            await asyncio.sleep(10)  # the tool's work: far longer than the test lets it run
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        outcome.append("finished")
        return "late"

    script = Script(calls(call("c1", "slow")), answer("never"))
    async with aclosing(Agent(model=script.model, tools=[slow]).prompt("go").stream()) as events:
        async for event in events:
            if event.kind == "status" and event.text.startswith("running slow"):
                break
    assert outcome == ["cancelled"]
    assert script.count == 1


async def test_results_are_recorded_in_call_order_not_completion_order() -> None:
    finished: list[str] = []
    fast_finished = asyncio.Event()

    @tool
    async def finish(name: str) -> str:
        """Finish; the call named "slow" only once the one named "fast" has."""
        if name == "slow":
            async with asyncio.timeout(10):  # calls run one after the other would never get here
                await fast_finished.wait()
        finished.append(name)
        fast_finished.set()
        return f"{name} finished"

    script = Script(calls(call("slow", "finish", name="slow"), call("fast", "finish", name="fast")), answer("done"))
    result = await Agent(model=script.model, tools=[finish]).prompt("go")

    assert finished == ["fast", "slow"]
    assert shapes(result.messages)[2:4] == ["tool:slow", "tool:fast"]
    assert [r.content for r in script.results(2)] == ["slow finished", "fast finished"]


async def test_sync_tools_run_and_mix_with_async_ones() -> None:
    ran: list[str] = []

    def shout(text: str) -> str:
        """Shout."""
        ran.append("shout")
        return text.upper()

    @tool
    async def whisper(text: str) -> str:
        """Whisper."""
        ran.append("whisper")
        return text.lower()

    script = Script(calls(call("c1", "shout", text="hi"), call("c2", "whisper", text="HO")), answer("done"))
    await Agent(model=script.model, tools=[shout, whisper]).prompt("go")

    assert sorted(ran) == ["shout", "whisper"]
    assert [r.content for r in script.results(2)] == ["HI", "ho"]


async def test_threaded_sync_tools_run_concurrently() -> None:
    import threading

    barrier = threading.Barrier(2, timeout=2)

    @tool(thread=True)
    def meet(who: str) -> str:
        """Wait for the other call in another thread."""
        barrier.wait()
        return f"{who} met"

    script = Script(calls(call("c1", "meet", who="ann"), call("c2", "meet", who="bob")), answer("done"))
    await Agent(model=script.model, tools=[meet]).prompt("go")
    assert [(r.content, r.is_error) for r in script.results(2)] == [("ann met", False), ("bob met", False)]


async def test_prompt_may_be_a_user_message() -> None:
    script = Script(answer("ok"))
    message = Message(role="user", parts=[TextPart(text="from a message")])
    result = await Agent(model=script.model).prompt(message)
    assert script.shapes(1) == ["user:from a message"]
    assert result.messages[0] == message


async def test_async_script_is_awaited() -> None:
    async def script(request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(0)  # a real suspension point, as a model call has
        return answer(f"{len(request.messages)} message(s)")

    from hookline.models import FunctionModel

    result = await Agent(model=FunctionModel(script)).prompt("hi")
    assert result.output == "1 message(s)"
