"""A message's views (`text`, `tool_calls`, `tool_results`) are remembered by its parts list: never stale.

The list of a message remembers which kinds of part it holds until it is edited. Each test
reads the views first (so that the list remembers), then edits the message in some way,
then compares the views with a reference computed from scratch. The edits also move the
edit clock (`edit_stamp`) that the loop's conversation check relies on.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookline import DocumentPart, Event, Message, TextPart, ToolCallPart, ToolResultPart
from hookline._hot_path import PLAIN
from hookline.messages import edit_stamp, tracks_edits

QUICK = settings(max_examples=300, deadline=None, derandomize=True)
POOL = (
    TextPart(text="a"),
    TextPart(text="b"),
    ToolCallPart(id="c1", name="add", arguments={"a": 1}),
    ToolCallPart(id="c2", name="add", arguments={"a": 2}),
    ToolResultPart(call_id="c1", content="1"),
    ToolResultPart(call_id="c2", content="2"),
    DocumentPart(title="doc", text="words"),
)
parts = st.lists(st.sampled_from(POOL), max_size=4)


def reference(message: Message) -> tuple[str, list[int], list[int]]:
    """The views worked out from scratch, as identities of the parts they hold."""
    snapshot = list(message.parts)
    return (
        "".join(p.text for p in snapshot if isinstance(p, TextPart)),
        [id(p) for p in snapshot if isinstance(p, ToolCallPart)],
        [id(p) for p in snapshot if isinstance(p, ToolResultPart)],
    )


def views(message: Message) -> tuple[str, list[int], list[int]]:
    return message.text, [id(p) for p in message.tool_calls], [id(p) for p in message.tool_results]


def _nonempty(edit: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    """`edit`, or an append where the list is empty and `edit` needs an item."""
    return lambda ps: edit(ps) if ps else ps.append(POOL[1])


EDITS: dict[str, Callable[[list[Any]], Any]] = {
    "append": lambda ps: ps.append(POOL[2]),
    "extend": lambda ps: ps.extend([POOL[4], POOL[0]]),
    "insert": lambda ps: ps.insert(0, POOL[5]),
    "set an item": _nonempty(lambda ps: ps.__setitem__(0, POOL[3])),
    "set a slice": lambda ps: ps.__setitem__(slice(0, 1), [POOL[1], POOL[6]]),
    "delete an item": _nonempty(lambda ps: ps.__delitem__(0)),
    "delete a slice": lambda ps: ps.__delitem__(slice(0, 2)),
    "pop": _nonempty(lambda ps: ps.pop()),
    "remove": _nonempty(lambda ps: ps.remove(ps[-1])),
    "clear": lambda ps: ps.clear(),
    "sort": lambda ps: ps.sort(key=lambda p: p.type),
    "reverse": lambda ps: ps.reverse(),
    "+=": lambda ps: ps.__iadd__([POOL[2]]),
    "*=": lambda ps: ps.__imul__(2),
}

BUILDS: dict[str, Callable[[list[Any]], Message]] = {
    "Message()": lambda ps: Message("assistant", ps),
    "model_validate": lambda ps: Message.model_validate({"role": "assistant", "parts": ps}),
    "model_validate_json": lambda ps: Message.model_validate_json(Message("assistant", ps).model_dump_json()),
    "from_valid_parts": lambda ps: Message.from_valid_parts("assistant", ps),
    "Event.to_message": lambda ps: Event(author="a", role="assistant", parts=ps).to_message(),
    "deepcopy": lambda ps: copy.deepcopy(Message("assistant", ps)),
    "model_copy(deep)": lambda ps: Message("assistant", ps).model_copy(deep=True),
    "pickle": lambda ps: pickle.loads(pickle.dumps(Message("assistant", ps))),
}


@QUICK
@given(
    start=parts,
    build=st.sampled_from(sorted(BUILDS)),
    edits=st.lists(st.sampled_from(sorted(EDITS)), min_size=1, max_size=6),
)
def test_views_follow_every_edit_of_the_parts_in_place(start: list[Any], build: str, edits: list[str]) -> None:
    message = BUILDS[build](list(start))
    assert tracks_edits(message)
    assert views(message) == reference(message)
    for name in edits:
        before = edit_stamp()
        EDITS[name](message.parts)
        assert edit_stamp() != before, f"{name} did not move the edit clock"
        assert views(message) == reference(message), f"stale views after {name}"


@QUICK
@given(start=parts, replacement=parts, edits=st.lists(st.sampled_from(sorted(EDITS)), max_size=4))
def test_views_follow_a_parts_list_assigned_by_hand_and_edited_in_place(
    start: list[Any], replacement: list[Any], edits: list[str]
) -> None:
    message = Message("assistant", list(start))
    assert views(message) == reference(message)
    before = edit_stamp()
    mine = list(replacement)
    message.parts = mine
    assert edit_stamp() != before
    assert message.parts is mine, "the message holds the very list it was given"
    assert not tracks_edits(message)
    for name in edits:
        EDITS[name](mine)
        assert views(message) == reference(message), f"stale views after {name}"


def test_assigning_any_attribute_moves_the_edit_clock() -> None:
    message = Message.user("hi")
    before = edit_stamp()
    message.role = "assistant"
    assert edit_stamp() != before
    assert message.text == "hi"


def test_a_shallow_copy_shares_the_parts_list_and_both_see_an_edit() -> None:
    message = Message("assistant", [POOL[2]])
    twin = message.model_copy()
    assert (message.tool_calls, twin.tool_calls) == ([POOL[2]], [POOL[2]])
    twin.parts.append(POOL[3])
    assert message.tool_calls == twin.tool_calls == [POOL[2], POOL[3]]


def test_a_copy_with_new_parts_has_its_own_views() -> None:
    message = Message("assistant", [POOL[2]])
    assert message.tool_calls == [POOL[2]]
    other = message.model_copy(update={"parts": [POOL[0]]})
    assert (other.text, other.tool_calls) == ("a", [])
    assert (message.text, message.tool_calls) == ("", [POOL[2]])


@pytest.mark.parametrize("view", ["tool_calls", "tool_results"])
def test_each_view_is_a_fresh_list_the_caller_may_change(view: str) -> None:
    message = Message("assistant", [POOL[2], POOL[4]])
    first = getattr(message, view)
    assert getattr(message, view) is not first
    expected = list(first)
    first.append(POOL[3])
    first.reverse()
    assert getattr(message, view) == expected
    assert len(message.parts) == 2


def test_a_message_made_without_parts_tracks_its_edits() -> None:
    message = Message(role="user")
    assert tracks_edits(message)
    assert (message.text, message.tool_calls) == ("", [])
    message.parts.append(POOL[0])
    assert message.text == "a"


def test_model_construct_keeps_a_plain_list_and_its_views_are_still_right() -> None:
    given = [POOL[0], POOL[2]]
    message = Message.model_construct(role="assistant", parts=given)
    assert message.parts is given
    assert views(message) == reference(message)
    given.pop()
    assert views(message) == reference(message)


def test_a_part_that_is_not_a_known_kind_counts_as_none_of_the_views() -> None:
    message = Message.from_valid_parts("assistant", [POOL[6], POOL[0]])
    assert views(message) == reference(message) == ("a", [], [])


def test_a_subclass_of_a_part_is_seen_as_its_kind() -> None:
    class Quoted(TextPart):
        """A text part of another class."""

    quoted = Quoted(text="q")
    message = Message.from_valid_parts("user", [quoted, POOL[4]])
    assert message.text == "q"
    assert message.tool_results == [POOL[4]]


# -- fields-sets --------------------------------------------------------------------------------


def test_validated_parts_and_messages_report_the_fields_they_were_given() -> None:
    bare = ToolCallPart(id="x3", name="noop")
    assert ToolCallPart(id="x1", name="add", arguments={"a": 1}).model_fields_set == {"id", "name", "arguments"}
    assert bare.model_fields_set == {"id", "name"}
    assert bare.model_dump(exclude_unset=True) == {"id": "x3", "name": "noop"}
    first, second = Message(role="user"), Message(role="user")
    first.parts = [POOL[0]]
    assert (first.model_fields_set, second.model_fields_set) == ({"role", "parts"}, {"role"})


def test_messages_and_results_built_without_validation_share_one_fields_set_of_every_field() -> None:
    one = Message.from_valid_parts("tool", [ToolResultPart.from_valid("c1", "1", name="add")])
    two = Message.from_valid_parts("tool", [ToolResultPart.from_valid("c2", "2", name="add")])
    if not PLAIN:  # a trick of hookline._hot_path; its plain twin gives each a set of its own
        assert one.__pydantic_fields_set__ is two.__pydantic_fields_set__
        assert one.parts[0].__pydantic_fields_set__ is two.parts[0].__pydantic_fields_set__
    one.parts = [POOL[0]]  # adds a name the set holds already
    one.role = "user"
    assert two.model_fields_set == {"role", "parts"}
    assert two.parts[0].model_fields_set == {"type", "call_id", "content", "is_error", "name", "attachments"}


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle", "model_copy(deep)"])
def test_copying_a_message_is_no_edit_and_the_copy_tracks_its_own(how: str) -> None:
    copies: dict[str, Callable[[Message], Message]] = {
        "copy": lambda m: Message("assistant", copy.copy(m.parts)),
        "deepcopy": copy.deepcopy,
        "pickle": lambda m: pickle.loads(pickle.dumps(m)),
        "model_copy(deep)": lambda m: m.model_copy(deep=True),
    }
    message = Message("assistant", [POOL[0], POOL[2]])
    before = edit_stamp()
    twin = copies[how](message)
    assert edit_stamp() == before, "the loop would read the whole conversation again after any copy"
    assert tracks_edits(twin)
    assert twin.parts is not message.parts
    twin.parts.append(POOL[3])
    assert edit_stamp() != before
    assert (len(message.tool_calls), len(twin.tool_calls)) == (1, 2)
