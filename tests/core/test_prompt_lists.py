"""Each model call gets the conversation as it stood, in a list that stays as it was given.

The prompt view extends the list it gave the last call rather than copying the history
again, but only while nothing can tell: these tests keep, change and drop what models get
while hooks edit the conversation, and check every request against a copy taken as it came.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookline import Agent, DocumentPart, Message, State, hook
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.state import TrackedMessages

from .scripted import add, answer, call, calls

pytestmark = pytest.mark.anyio

Keep = Literal["drop", "request", "list", "append", "replace", "clear"]
"""What a model does with what it got: drop it, keep the request or its list, or change the list and drop it."""
Edit = Literal["none", "append", "insert", "replace", "reassign", "pop_and_put_back"]
"""What a `before_llm` hook does to the conversation: each keeps it valid."""


def _edit(state: State, edit: Edit) -> None:
    messages = state.messages
    if edit == "append":
        messages.append(Message.user("one more thing"))
    elif edit == "insert":
        messages.insert(0, Message.user("some context first"))
    elif edit == "replace":
        messages[0] = Message.user(f"{messages[0].text}, again")
    elif edit == "reassign":
        state.messages = list(messages)
    elif edit == "pop_and_put_back":
        messages.append(messages.pop())


def _treat(request: ModelRequest, keep: Keep, kept: list[tuple[Callable[[], list[Message]], list[Message]]]) -> None:
    got = request.messages
    if keep == "request":
        kept.append((lambda: request.messages, list(got)))
    elif keep == "list":
        kept.append((lambda: got, list(got)))
    elif keep == "append":
        got.append(Message.user("the model's own"))
    elif keep == "replace":
        got[-1] = Message.user("the model's own")
    elif keep == "clear":
        got.clear()


def _agent(edits: list[Edit], keeps: list[Keep], instructions: str | None) -> tuple[Agent, list[str]]:
    """An agent whose n-th model call is edited by edits[n] and treated by keeps[n]; the problems it saw."""
    problems: list[str] = []
    expected: list[list[Message]] = []
    kept: list[tuple[Callable[[], list[Message]], list[Message]]] = []  # (what a model kept, a copy as given)

    @hook
    def edit(state: State) -> None:
        _edit(state, edits[state.turn - 1])

    @hook
    def expect(state: State) -> None:
        expected.append(([] if instructions is None else [Message.system(instructions)]) + list(state.messages))

    def model(request: ModelRequest) -> ModelResponse:
        number, got = len(expected), request.messages
        want = expected[-1]
        if len(got) != len(want) or any(a != b for a, b in zip(got, want, strict=False)):
            problems.append(f"call {number} got {[m.text for m in got]}, expected {[m.text for m in want]}")
        _treat(request, keeps[number - 1], kept)
        for number_kept, (now, then) in enumerate(kept, 1):
            if now() != then:
                problems.append(f"what a model kept ({number_kept}) changed by call {number}")
        return answer("done") if number == len(keeps) else calls(call(f"c{number}", "add", a=number, b=1))

    agent = Agent(model=FunctionModel(model), tools=[add], instructions=instructions, max_turns=len(keeps),
                  hooks={"before_llm": [edit, expect]})
    return agent, problems


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    turns=st.lists(st.tuples(st.sampled_from(Edit.__args__), st.sampled_from(Keep.__args__)), min_size=1, max_size=6),
    instructions=st.sampled_from([None, "be brief"]),
)
def test_every_call_gets_the_conversation_as_it_stood_and_what_a_model_keeps_stays(
    turns: list[tuple[Edit, Keep]], instructions: str | None
) -> None:
    agent, problems = _agent([e for e, _ in turns], [k for _, k in turns], instructions)
    result = agent.prompt("add them").run_sync()
    assert result.output == "done"
    assert problems == []


@pytest.mark.parametrize("instructions", [None, "be brief"])
async def test_a_list_nothing_kept_grows_into_the_next_calls(instructions: str | None) -> None:
    """The list a call got, dropped by its model, is the next call's, extended: no copy of the history per call."""
    given_before: list[weakref.ref[Any]] = []

    def model(request: ModelRequest) -> ModelResponse:
        if given_before:
            assert given_before[-1]() is request.messages, "the last call's list was not extended"
        given_before.append(weakref.ref(request.messages))
        number = len(given_before)
        return answer("done") if number == 4 else calls(call(f"c{number}", "add", a=number, b=1))

    agent = Agent(model=FunctionModel(model), tools=[add], instructions=instructions)
    assert (await agent.prompt("add them")).output == "done"
    assert len(given_before) == 4


@pytest.mark.parametrize("documents", [False, True], ids=["instructions from a function", "documents"])
async def test_a_call_with_parts_of_its_own_gets_a_fresh_list(documents: bool) -> None:
    """Instructions made for each call, or documents put into the latest user message: never a list extended."""
    lists: list[list[Message]] = []

    def model(request: ModelRequest) -> ModelResponse:
        lists.append(request.messages)
        return answer("done") if len(lists) == 3 else calls(call(f"c{len(lists)}", "add", a=1, b=1))

    agent = Agent(model=FunctionModel(model), tools=[add],
                  instructions="be brief" if documents else (lambda state: f"turn {state.turn}"))
    request = agent.prompt("add them")
    if documents:
        request = request.documents(DocumentPart(title="notes", text="read me"))
    assert (await request).output == "done"
    assert len({id(messages) for messages in lists}) == 3
    assert [len(messages) for messages in lists] == [2, 4, 6]


MUTATIONS: dict[str, Callable[[TrackedMessages], Any]] = {
    "setitem": lambda m: m.__setitem__(0, m[0]),
    "delitem": lambda m: m.__delitem__(0),
    "+=": lambda m: m.__iadd__([m[0]]),
    "*=": lambda m: m.__imul__(1),
    "append": lambda m: m.append(m[0]),
    "insert": lambda m: m.insert(0, m[0]),
    "extend": lambda m: m.extend([]),
    "pop": lambda m: m.pop(),
    "remove": lambda m: m.remove(m[0]),
    "clear": lambda m: m.clear(),
    "sort": lambda m: m.sort(key=id),
    "reverse": lambda m: m.reverse(),
}


@pytest.mark.parametrize("mutate", MUTATIONS.values(), ids=MUTATIONS.keys())
def test_every_change_to_a_tracked_list_is_noted(mutate: Callable[[TrackedMessages], Any]) -> None:
    messages = TrackedMessages([Message.user("a"), Message.user("b")])
    mutate(messages)
    assert (messages.changed, messages.edits) == (True, 1)
