"""`ConversationCheck` reads only what was appended since its last check: it must answer as a full check would.

Random conversations grow by appends, list edits, edits of a message in place (its parts,
its role, a parts list assigned by hand and edited afterwards); after each step the
incremental check is compared with `conversation_problem` on the whole list. Then the
same through a run: an in-place edit of an old message by a hook, turns after the check
began, is still caught before the model sees it, on a fresh run and on a resumption.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookline import Agent, HookError, Message, State, TextPart, ToolCallPart, ToolResultPart, hook
from hookline.conversation import ConversationCheck, conversation_problem, response_problem
from hookline.sessions import InMemorySessionStore
from hookline.state import TrackedMessages

from .scripted import Script, add, answer, call, calls

QUICK = settings(max_examples=400, deadline=None, derandomize=True)
IDS = ("c1", "c2", "c3")


def _call(call_id: str) -> ToolCallPart:
    return ToolCallPart(id=call_id, name="add", arguments={})


def _result(call_id: str) -> ToolResultPart:
    return ToolResultPart(call_id=call_id, content="3")


def _message(kind: str, call_id: str) -> Message:
    """A message of one of a few shapes, valid or not depending on where it lands."""
    shapes: dict[str, Callable[[], Message]] = {
        "user": lambda: Message.user("hi"),
        "calls": lambda: Message("assistant", [_call(call_id)]),
        "two calls": lambda: Message("assistant", [TextPart(text="go"), _call(call_id), _call(call_id + "b")]),
        "result": lambda: Message("tool", [_result(call_id)]),
        "second result": lambda: Message("tool", [_result(call_id + "b")]),
        "user action": lambda: Message("user", [_call(call_id), _result(call_id)]),
        "system": lambda: Message.system("be terse"),
        "answer": lambda: Message.assistant("done"),
    }
    return shapes[kind]()


KINDS = ("user", "calls", "two calls", "result", "second result", "user action", "system", "answer")


@dataclass(frozen=True)
class Step:
    """One change to the live conversation, then a check of one kind."""

    change: str
    kind: str
    call_id: str
    at: int
    check: str


steps = st.builds(
    Step,
    change=st.sampled_from(
        ["append", "append", "append", "insert", "replace", "delete", "truncate",
         "part append", "part pop", "part replace", "part clear", "role", "assign parts", "edit assigned"]
    ),
    kind=st.sampled_from(KINDS),
    call_id=st.sampled_from(IDS),
    at=st.integers(min_value=0, max_value=20),
    check=st.sampled_from(["plain", "open tail", "pending", "response"]),
)


def _change(messages: TrackedMessages, step: Step, assigned: list[list[Any]]) -> bool:
    """Apply `step.change`; return whether the list itself changed otherwise than by an append."""
    new = _message(step.kind, step.call_id)
    if step.change == "append" or not messages:
        list.append(messages, new)  # as the loop appends: not through the tracked list
        return False
    target = messages[step.at % len(messages)]
    part = new.parts[0]
    in_place: dict[str, Callable[[], Any]] = {
        "part append": lambda: target.parts.append(part),
        "part pop": lambda: target.parts.pop() if target.parts else target.parts.append(part),
        "part replace": lambda: target.parts.__setitem__(0, part) if target.parts else None,
        "part clear": lambda: target.parts.clear(),
        "role": lambda: setattr(target, "role", new.role),
        "assign parts": lambda: (setattr(target, "parts", list(new.parts)), assigned.append(target.parts)),
        "edit assigned": lambda: assigned[-1].append(part) if assigned else None,
    }
    if step.change in in_place:
        in_place[step.change]()
        return False
    index = step.at % len(messages)
    list_edits: dict[str, Callable[[], Any]] = {
        "insert": lambda: messages.insert(index, new),
        "replace": lambda: messages.__setitem__(index, new),
        "delete": lambda: messages.__delitem__(index),
        "truncate": lambda: messages.__delitem__(slice(index, None)),
    }
    list_edits[step.change]()
    return True


def _compare(check: ConversationCheck, messages: TrackedMessages, step: Step, edited: bool) -> None:
    snapshot = list(messages)
    last = next((m for m in reversed(snapshot) if m.role == "assistant"), None)
    if step.check == "response":
        response = _message("two calls" if step.kind == "calls" else "answer", step.call_id)
        assert check.response_problem(messages, response, edited=edited) == response_problem(snapshot, response)
    elif step.check == "pending":
        pending = last.tool_calls if last is not None else []
        expected = conversation_problem(snapshot, pending=pending)
        assert check.problem(messages, edited=edited, pending=pending) == expected
    else:
        tail = step.check == "open tail"
        expected = conversation_problem(snapshot, allow_open_tail=tail)
        assert check.problem(messages, edited=edited, allow_open_tail=tail) == expected


@QUICK
@given(start=st.lists(st.sampled_from(KINDS), max_size=4), plan=st.lists(steps, min_size=1, max_size=14))
def test_the_incremental_check_answers_as_the_full_check_after_every_change(
    start: list[str], plan: list[Step]
) -> None:
    messages = TrackedMessages(_message(kind, "c0") for kind in start)
    check = ConversationCheck()
    assigned: list[list[Any]] = []
    _compare(check, messages, Step("append", "user", "c0", 0, "plain"), edited=True)
    for step in plan:
        edited = _change(messages, step, assigned)
        _compare(check, messages, step, edited)


def test_a_new_list_is_read_from_the_start_even_when_told_it_was_only_appended_to() -> None:
    check = ConversationCheck()
    valid = [Message.user("hi"), Message("assistant", [_call("c1")]), Message("tool", [_result("c1")])]
    assert check.problem(valid, edited=False) is None
    broken = [Message("tool", [_result("c9")]), *valid]
    assert check.problem(broken, edited=False) == conversation_problem(broken)
    assert check.problem(broken, edited=False) is not None


# -- through a run ----------------------------------------------------------------------------


def _breaker(at_turn: int, edit: Callable[[list[Message]], None]) -> Any:
    @hook
    def break_an_old_message(state: State) -> None:
        if state.turn == at_turn:
            edit(state.messages)

    return break_an_old_message


@hook
def look(state: State) -> None:
    """A hook that reads and changes nothing: the loop then checks before every model call."""


EDITS_OF_OLD_MESSAGES: dict[str, Callable[[list[Message]], None]] = {
    "drop a result part": lambda ms: next(m for m in ms if m.role == "tool").parts.clear(),
    "add a call to an old answer": lambda ms: next(m for m in ms if m.role == "assistant").parts.append(_call("x")),
    "turn a result into text": lambda ms: next(m for m in ms if m.role == "tool").parts.__setitem__(
        0, TextPart(text="no")
    ),
    "change an old role": lambda ms: setattr(next(m for m in ms if m.role == "tool"), "role", "user"),
}


def _turns(n: int) -> Script:
    return Script(*(calls(call(f"t{k}", "add", a=k, b=1)) for k in range(n)), answer("done"))


@pytest.mark.anyio
@pytest.mark.parametrize("edit", sorted(EDITS_OF_OLD_MESSAGES))
async def test_an_in_place_edit_of_an_old_message_is_caught_turns_later(edit: str) -> None:
    script = _turns(5)
    breaker = _breaker(4, EDITS_OF_OLD_MESSAGES[edit])
    agent = Agent(model=script.model, tools=[add], hooks={"before_llm": [look], "after_llm": [breaker]})

    with pytest.raises(HookError, match="in-place edit"):
        await agent.prompt("count")

    assert script.count == 4, "the model never gets the broken conversation"


@pytest.mark.anyio
async def test_an_old_message_whose_parts_were_assigned_by_hand_is_still_checked_when_that_list_changes() -> None:
    kept: list[list[Any]] = []

    @hook
    def assign(state: State) -> None:
        if state.turn == 2:
            old = next(m for m in state.messages if m.role == "tool")
            old.parts = list(old.parts)  # valid, and a list the message does not watch
            kept.append(old.parts)
        if state.turn == 4:
            kept[0].clear()

    script = _turns(5)
    agent = Agent(model=script.model, tools=[add], hooks={"before_llm": [look, assign]})

    with pytest.raises(HookError, match="in-place edit"):
        await agent.prompt("count")

    assert script.count == 3


@pytest.mark.anyio
async def test_a_resumed_run_checks_what_it_loaded_and_what_it_adds() -> None:
    @hook
    def pause(state: State) -> None:
        for pending in state.tool_calls:
            if pending.id == "t1":
                state.interrupt(pending.id, "approve first")

    store = InMemorySessionStore()
    script = _turns(4)
    breaker = _breaker(4, EDITS_OF_OLD_MESSAGES["drop a result part"])
    agent = Agent(model=script.model, tools=[add], session_store=store,
                  hooks={"before_llm": [look], "after_llm": [breaker], "before_tool": [pause]})
    paused = await agent.prompt("count").session("s")
    assert paused.stop_reason == "interrupted"

    with pytest.raises(HookError, match="in-place edit"):
        await agent.resume("s", approvals={"t1": True})

    assert script.count == 4


@pytest.mark.anyio
async def test_hooks_that_only_read_leave_a_long_run_valid() -> None:
    script = _turns(30)
    agent = Agent(model=script.model, tools=[add], hooks={"before_llm": [look], "after_tool": [look]}, max_turns=40)

    result = await agent.prompt("count")

    assert result.output == "done"
    assert conversation_problem(result.messages) is None
