"""What the loop builds without validation (results, messages, the prompt's text) is light and acts validated.

`ToolResultPart.from_valid`, `Message.from_valid_parts` and `TextPart.from_valid` set an
instance's fields one by one rather than assigning it a dict: on CPython the instances
then share one table of keys, and a message holds no dict until one is asked for. Nothing
anyone can see may differ from a validated instance.
"""

from __future__ import annotations

import copy
import pickle
import platform
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from hookline import Message, TextPart, ToolResultPart
from hookline.messages import edit_stamp

BUILT: dict[str, tuple[Callable[[], BaseModel], Callable[[], BaseModel]]] = {
    "result": (lambda: ToolResultPart.from_valid("c1", "3", name="add"),
               lambda: ToolResultPart(call_id="c1", content="3", name="add")),
    "error result": (lambda: ToolResultPart.from_valid("c1", "no", name="add", is_error=True),
                     lambda: ToolResultPart(call_id="c1", content="no", name="add", is_error=True)),
    "text": (lambda: TextPart.from_valid("hi"), lambda: TextPart(text="hi")),
    "message": (lambda: Message.from_valid_parts("tool", [ToolResultPart.from_valid("c1", "3", name="add")]),
                lambda: Message(role="tool", parts=[ToolResultPart(call_id="c1", content="3", name="add")])),
}


@pytest.mark.parametrize("kind", BUILT)
def test_a_built_instance_equals_and_serializes_as_a_validated_one(kind: str) -> None:
    build, validate = BUILT[kind]
    built, validated = build(), validate()

    assert built == validated
    assert validated == built
    assert built.model_dump() == validated.model_dump()
    assert built.model_dump_json() == validated.model_dump_json()
    assert list(built.__dict__) == list(type(built).model_fields)
    assert repr(built) == repr(validated)


@pytest.mark.parametrize("kind", BUILT)
def test_a_built_instance_copies_and_pickles(kind: str) -> None:
    built = BUILT[kind][0]()

    for again in (pickle.loads(pickle.dumps(built)), copy.copy(built), copy.deepcopy(built), built.model_copy()):
        assert again == built
        assert again.model_dump() == built.model_dump()


def test_a_built_part_hashes_as_a_validated_one() -> None:
    assert hash(TextPart.from_valid("hi")) == hash(TextPart(text="hi"))
    assert hash(ToolResultPart.from_valid("c1", "3", name="add")) == hash(
        ToolResultPart(call_id="c1", content="3", name="add"))


def test_a_built_message_is_edited_as_any_other() -> None:
    message = Message.from_valid_parts("assistant", [TextPart.from_valid("hi")])
    before = edit_stamp()

    message.role = "user"
    message.parts.append(TextPart(text="there"))

    assert edit_stamp() != before
    assert message.role == "user"
    assert message.text == "hithere"
    assert message.model_dump()["role"] == "user"


def test_a_model_copy_with_updates_leaves_the_built_one_alone() -> None:
    built = ToolResultPart.from_valid("c1", "3", name="add")

    changed = built.model_copy(update={"content": "4"})

    assert (built.content, changed.content) == ("3", "4")
    assert built.model_fields_set == set(ToolResultPart.model_fields)


def _bytes_each(build: Callable[[], Any], count: int = 2000) -> float:
    build()
    tracemalloc.start()
    try:
        kept = [build() for _ in range(count)]
        size, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(kept) == count
    return size / count


@pytest.mark.skipif(platform.python_implementation() != "CPython", reason="shared keys are CPython's")
def test_built_results_and_messages_hold_no_dict_of_their_own() -> None:
    parts = [TextPart.from_valid("x")]
    ToolResultPart(call_id="c0", content="0")  # a validated one first: the built ones must still share keys

    result = _bytes_each(lambda: ToolResultPart.from_valid("c1", "3", name="add"))
    message = _bytes_each(lambda: Message.from_valid_parts("tool", parts))

    # A result with a dict of its own took 360 bytes, a message 184 beside its parts list.
    assert result < 200, f"{result:.0f} bytes a result"
    assert message < 220, f"{message:.0f} bytes a message, with its parts list"
