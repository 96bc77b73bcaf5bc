"""The conversation invariant under random hook edits (DESIGN §2, after "State"): a hook
that edits `state.messages` either leaves the conversation valid — the run goes on, and
every request a model receives has each tool call answered exactly once right after its
call and no orphan result — or the run stops with a `HookError` naming that hook and point.

The oracle is `invariant.conversation_error`, written independently of
`hookline.conversation`; the library's own check is compared with it where they must agree.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from hookline import Agent, HookError, Message, State, ToolCallPart, ToolResultPart, hook
from hookline.conversation import conversation_problem

from .invariant import conversation_error
from .scripted import Script, add, answer, call, calls

# turn -> the calls the scripted model makes on that turn (turn 3 answers in text)
TURN_CALLS = {1: ["c1", "c2"], 2: ["c3"]}
TOOL_POINTS = ("before_tool", "after_tool")
OTHER_POINTS = ("before_run", "before_llm", "after_llm", "on_exit")

MessageKind = Literal["user", "assistant", "calls", "result"]


@dataclass(frozen=True)
class NewMessage:
    """A message to put in; `ids` index the call ids known when it is built."""

    kind: MessageKind
    ids: tuple[int, ...]

    def build(self, known: list[str]) -> Message:
        chosen = [known[i % len(known)] for i in self.ids]
        if self.kind == "user":
            return Message.user("random user text")
        if self.kind == "assistant":
            return Message.assistant("random assistant text")
        if self.kind == "calls":
            return Message("assistant", [ToolCallPart(id=c, name="add", arguments={"a": 1, "b": 1}) for c in chosen])
        return Message("tool", [ToolResultPart(call_id=chosen[0], content="random result", name="add")])


@dataclass(frozen=True)
class Edit:
    """One edit of `state.messages`; indices are taken modulo the list's length when applied."""

    kind: Literal["delete", "insert", "swap", "replace"]
    i: int = 0
    j: int = 0
    new: tuple[NewMessage, ...] = ()

    def apply(self, state: State, known: list[str]) -> None:
        messages = state.messages
        size = len(messages)
        if self.kind == "delete" and size:
            del messages[self.i % size]
        elif self.kind == "insert":
            messages.insert(self.i % (size + 1), self.new[0].build(known))
        elif self.kind == "swap" and size >= 2:
            a, b = self.i % size, self.j % size
            messages[a], messages[b] = messages[b], messages[a]
        elif self.kind == "replace":
            state.messages = [n.build(known) for n in self.new]


new_messages = st.builds(
    NewMessage,
    kind=st.sampled_from(["user", "assistant", "calls", "result"]),
    ids=st.lists(st.integers(0, 20), min_size=1, max_size=2).map(tuple),
)
edits = st.one_of(
    st.builds(Edit, kind=st.just("delete"), i=st.integers(0, 20)),
    st.builds(Edit, kind=st.just("insert"), i=st.integers(0, 20), new=st.tuples(new_messages)),
    st.builds(Edit, kind=st.just("swap"), i=st.integers(0, 20), j=st.integers(0, 20)),
    st.builds(Edit, kind=st.just("replace"), new=st.lists(new_messages, max_size=4).map(tuple)),
)


@dataclass
class Observed:
    edited: bool = False
    valid_after_edit: bool = True
    library_agrees: bool = True


def _pending_results(point: str, state: State) -> list[Message]:
    """The results the loop will still append for this tool turn, after the hooks ran."""
    if point not in TOOL_POINTS:
        return []
    return [Message("tool", [ToolResultPart(call_id=c, content="r")]) for c in TURN_CALLS[state.turn]]


def _run_with_edit(point: str, firing: int, edit: Edit) -> tuple[Observed, HookError | None, Script]:
    observed = Observed()
    fired = [0]

    @hook(name="editor")
    def editor(state: State) -> None:
        fired[0] += 1
        if fired[0] != firing + 1:
            return
        known = [c.id for m in state.messages for c in m.tool_calls] + ["c1", "c3", "x1"]
        edit.apply(state, known)
        observed.edited = True
        after = [*state.messages, *_pending_results(point, state)]
        observed.valid_after_edit = conversation_error(after) is None
        if point not in TOOL_POINTS:
            observed.library_agrees = (conversation_problem(state.messages) is None) == observed.valid_after_edit

    script = Script(
        calls(call("c1", "add", a=1, b=2), call("c2", "add", a=3, b=4)),
        calls(call("c3", "add", a=5, b=6)),
        answer("done"),
    )
    agent = Agent(model=script.model, tools=[add], hooks={point: [editor]})

    async def go() -> None:
        await agent.prompt("go")

    try:
        asyncio.run(go())
    except HookError as error:
        return observed, error, script
    return observed, None, script


def _check(point: str, firing: int, edit: Edit) -> None:
    # every request the model receives is checked inside Script (an AssertionError otherwise)
    observed, error, script = _run_with_edit(point, firing, edit)
    event("no edit" if not observed.edited else "valid edit" if observed.valid_after_edit else "breaking edit")
    assert observed.library_agrees, "hookline.conversation disagrees with the independent checker"
    if observed.valid_after_edit:
        assert error is None, f"a valid edit was refused: {error}"
        assert script.count == 3
    else:
        assert error is not None, "an edit that broke the conversation was not reported"
        assert (error.hook, error.point) == ("editor", point)
        assert "editor" in str(error)
        assert point in str(error)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(point=st.sampled_from(OTHER_POINTS), firing=st.integers(0, 2), edit=edits)
@example(point="before_llm", firing=1, edit=Edit("delete", i=2))  # a result of c1/c2
@example(point="before_llm", firing=1, edit=Edit("swap", i=1, j=2))  # a result before its call
@example(point="after_llm", firing=0, edit=Edit("insert", i=1, new=(NewMessage("calls", (2,)),)))
@example(point="on_exit", firing=0, edit=Edit("insert", i=0, new=(NewMessage("user", (0,)),)))
@example(point="before_run", firing=0, edit=Edit("replace", new=()))
def test_edits_outside_tool_turns_keep_the_conversation_valid_or_fail_the_hook(
    point: str, firing: int, edit: Edit
) -> None:
    _check(point, firing, edit)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(point=st.sampled_from(TOOL_POINTS), firing=st.integers(0, 2), edit=edits)
@example(point="before_tool", firing=0, edit=Edit("delete", i=1))  # the message holding the pending calls
@example(point="after_tool", firing=0, edit=Edit("insert", i=2, new=(NewMessage("result", (0,)),)))
def test_edits_during_tool_turns_keep_the_conversation_valid_or_fail_the_hook(
    point: str, firing: int, edit: Edit
) -> None:
    _check(point, firing, edit)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    point=st.sampled_from(TOOL_POINTS),
    firing=st.integers(0, 2),
    edit=st.one_of(
        st.builds(Edit, kind=st.just("insert"), i=st.just(0), new=st.tuples(new_messages)),
        st.builds(Edit, kind=st.just("swap"), i=st.just(0), j=st.just(0)),
    ),
)
def test_edits_before_the_pending_calls_in_tool_turns(point: str, firing: int, edit: Edit) -> None:
    """Edits at the head of the conversation during a tool turn (these do not hit the known bug)."""
    _check(point, firing, edit)


def test_the_independent_checker_itself() -> None:
    c1 = Message("assistant", [ToolCallPart(id="c1", name="f"), ToolCallPart(id="c2", name="f")])

    def res(call_id: str) -> Message:
        return Message("tool", [ToolResultPart(call_id=call_id, content="")])

    assert conversation_error([Message.user("u"), c1, res("c2"), res("c1"), Message.assistant("a")]) is None
    assert conversation_error([Message.user("u"), c1, res("c1")]) is not None
    assert conversation_error([Message.user("u"), c1, res("c1")], allow_open_tail=True) is None
    assert conversation_error([Message.user("u"), c1, res("c1"), res("c1"), res("c2")]) is not None
    assert conversation_error([Message.user("u"), res("c1")]) is not None
    assert conversation_error([c1, Message.user("between"), res("c1"), res("c2")]) is not None
    assert conversation_error([]) is None
