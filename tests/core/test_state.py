"""`State` (DESIGN §2 "State"): what each member holds where, how misuse fails, and that
every way of editing `state.messages` is checked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from hookline import Agent, HookError, Message, State, TextPart, ToolCallPart, ToolResultPart, hook

from .scripted import Script, add, answer, call, calls
from .tracer import at_every_point

pytestmark = pytest.mark.anyio


async def test_data_is_shared_by_every_hook_of_a_run_and_fresh_per_run() -> None:
    seen: list[dict[str, Any]] = []

    @hook
    def count(state: State) -> None:
        state.data["points"] = [*state.data.get("points", []), str(state.point)]
        if state.point == "after_run":
            seen.append(dict(state.data))

    script = Script(answer("one"), answer("two"))
    agent = Agent(model=script.model, hooks={"before_run": [count], "on_exit": [count], "after_run": [count]})
    await agent.prompt("a")
    await agent.prompt("b")
    assert seen == [{"points": ["before_run", "on_exit", "after_run"]}] * 2


async def test_usage_is_live_during_the_run() -> None:
    seen: list[tuple[str, int, int, int]] = []

    @hook
    def look(state: State) -> None:
        usage = state.usage
        seen.append((str(state.point), usage.model_calls, usage.tool_calls, usage.input_tokens))

    script = Script(calls(call("c1", "add", a=1, b=2), input_tokens=7), answer("done", input_tokens=5))
    hooks = {"before_llm": [look], "after_tool": [look], "after_run": [look]}
    agent = Agent(model=script.model, tools=[add], hooks=hooks)
    await agent.prompt("go")
    assert seen == [("before_llm", 0, 0, 0), ("after_tool", 1, 0, 7), ("before_llm", 1, 1, 7), ("after_run", 2, 1, 12)]


async def test_point_specific_members_are_empty_elsewhere() -> None:
    seen: dict[str, tuple[Any, ...]] = {}

    @hook
    def look(state: State) -> None:
        seen.setdefault(str(state.point), (state.response, state.tool_calls, state.tool_call, state.tool_result))

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    await Agent(model=script.model, tools=[add], hooks=at_every_point(look)).prompt("go")

    empty = (None, [], None, None)
    for point in ("before_run", "before_llm", "on_exit", "after_run"):
        assert seen[point] == empty, point
    assert seen["after_llm"][0] is not None
    assert seen["after_llm"][1:] == ([], None, None)
    assert [c.id for c in seen["before_tool"][1]] == ["c1"]
    assert seen["before_tool"][2:] == (None, None)
    assert seen["after_tool"][2].id == "c1"
    assert seen["after_tool"][3].content == "3"


async def test_turn_is_zero_before_the_first_call_and_one_based_after() -> None:
    turns: list[tuple[str, int]] = []
    look = hook(lambda state: turns.append((str(state.point), state.turn)))
    script = Script(calls(call("c1", "add", a=1, b=2)), calls(call("c2", "add", a=1, b=2)), answer("done"))
    hooks = {"before_run": [look], "before_llm": [look], "after_run": [look]}
    await Agent(model=script.model, tools=[add], hooks=hooks).prompt("go")
    assert turns == [("before_run", 0), ("before_llm", 1), ("before_llm", 2), ("before_llm", 3), ("after_run", 3)]


@pytest.mark.parametrize(
    ("point", "action", "expected"),
    [
        ("before_llm", lambda state: state.inject("not a message"), "Message"),
        ("before_llm", lambda state: setattr(state, "tool_result", "x"), "after_tool"),
        ("after_tool", lambda state: setattr(state, "tool_result", ToolResultPart(call_id="zz", content="x")), "zz"),
        ("before_llm", lambda state: state.skip_tool("c1", "x"), "before_tool"),
    ],
    ids=["inject-non-message", "tool-result-outside-after-tool", "tool-result-for-other-call", "skip-outside"],
)
async def test_misusing_state_fails_the_hook_with_a_clear_message(
    point: str, action: Callable[[State], Any], expected: str
) -> None:
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    with pytest.raises(HookError) as caught:
        await Agent(model=script.model, tools=[add], hooks={point: [hook(action, name="misuser")]}).prompt("go")
    assert caught.value.hook == "misuser"
    assert caught.value.point == point
    assert expected in str(caught.value)


def _orphan() -> Message:
    return Message(role="tool", parts=[ToolResultPart(call_id="ghost", content="boo")])


# Edits applied at turn 2's before_llm to [user:go, assistant:calls(c1), tool:c1].
BREAKING_EDITS: dict[str, Callable[[State], Any]] = {
    "append": lambda s: s.messages.append(_orphan()),
    "extend": lambda s: s.messages.extend([_orphan()]),
    "iadd": lambda s: s.messages.__iadd__([_orphan()]),
    "insert": lambda s: s.messages.insert(2, Message.user("between call and result")),
    "setitem": lambda s: s.messages.__setitem__(1, Message.user("no more call")),
    "setslice": lambda s: s.messages.__setitem__(slice(1, 3), [s.messages[2], s.messages[1]]),
    "delitem": lambda s: s.messages.__delitem__(1),
    "pop": lambda s: s.messages.pop(1),
    "remove": lambda s: s.messages.remove(s.messages[1]),
    "reverse": lambda s: s.messages.reverse(),
    "sort": lambda s: s.messages.sort(key=lambda m: m.role != "tool"),
    "assign": lambda s: setattr(s, "messages", [_orphan()]),
}


@pytest.mark.parametrize("edit", list(BREAKING_EDITS))
async def test_every_way_of_editing_messages_is_checked(edit: str) -> None:
    action = BREAKING_EDITS[edit]

    @hook(name="editor")
    def editor(state: State) -> None:
        if state.turn == 2:
            action(state)

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("never"))
    with pytest.raises(HookError) as caught:
        await Agent(model=script.model, tools=[add], hooks={"before_llm": [editor]}).prompt("go")
    assert (caught.value.hook, caught.value.point) == ("editor", "before_llm")
    assert script.count == 1


async def test_valid_edits_reach_the_model() -> None:
    @hook
    def rewrite(state: State) -> None:
        if state.turn == 2:
            state.messages.insert(0, Message.user("context: numbers are small"))
            state.messages[-1] = Message(role="tool", parts=[ToolResultPart(call_id="c1", content="three")])

    script = Script(calls(call("c1", "add", a=1, b=2)), answer("done"))
    await Agent(model=script.model, tools=[add], hooks={"before_llm": [rewrite]}).prompt("go")
    assert script.shapes(2) == ["user:context: numbers are small", "user:go", "assistant:calls(c1)", "tool:c1"]
    assert script.results(2)[0].content == "three"


def test_message_helpers() -> None:
    assert Message.user("hi") == Message(role="user", parts=[TextPart(text="hi")])
    assert Message.assistant("yo").role == "assistant"
    assert Message.system("be terse").role == "system"
    mixed = Message("assistant", [TextPart(text="a"), ToolCallPart(id="c1", name="f"), TextPart(text="b")])
    assert mixed.text == "ab"
    assert [c.id for c in mixed.tool_calls] == ["c1"]
    assert mixed.tool_calls[0].arguments == {}
    result = Message("tool", [ToolResultPart(call_id="c1", content="ok")])
    assert result.tool_results[0].is_error is False
    assert result.text == ""


def test_a_message_from_valid_parts_equals_a_validated_one() -> None:
    """`Message.from_valid_parts` skips validation through pydantic internals: pin its result."""
    from hookline import Message, TextPart, ToolResultPart

    parts = [TextPart(text="a"), ToolResultPart(call_id="c1", content="3", name="add")]
    fast = Message.from_valid_parts("user", list(parts))
    slow = Message(role="user", parts=list(parts))
    assert fast == slow
    assert fast.model_dump_json() == slow.model_dump_json()
    assert Message.model_validate_json(fast.model_dump_json()) == slow
    assert fast.model_copy(deep=True) == slow
    assert fast.model_fields_set == {"role", "parts"}


def test_a_result_from_valid_values_equals_a_validated_one() -> None:
    from hookline import ToolResultPart

    fast = ToolResultPart.from_valid("c1", "3", name="add", is_error=True)
    slow = ToolResultPart(call_id="c1", content="3", name="add", is_error=True)
    assert fast == slow
    assert fast.model_dump_json() == slow.model_dump_json()
    other = ToolResultPart.from_valid("c2", "4", name="add")
    with pytest.raises(ValidationError, match="frozen"):  # parts are values: a hook replaces them
        other.content = "5"  # type: ignore[misc]
    assert fast.content == "3"
    assert fast.model_fields_set >= slow.model_fields_set
