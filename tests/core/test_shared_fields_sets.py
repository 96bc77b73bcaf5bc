"""Frozen parts validated alike share one fields-set: the set pydantic keeps of the fields given.

Sharing must change nothing anyone can see: each part's `model_fields_set` stays what it
was, a copy with updates gets a set of its own, and a model that is not frozen keeps its own.
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from hookline import ToolCallPart
from hookline._hot_path import PLAIN
from hookline.messages import share_fields_sets
from hookline.models import ModelResponse


def _call(call_id: str) -> ToolCallPart:
    return ToolCallPart(id=call_id, name="add", arguments={"a": 1})


@pytest.mark.skipif(PLAIN, reason="a trick of hookline._hot_path, off under HOOKLINE_PLAIN_HOT_PATH=1")
def test_the_calls_a_model_answer_keeps_share_one_set() -> None:
    first, second = ModelResponse(tool_calls=[_call("c1"), _call("c2")]).to_message().tool_calls
    third = ModelResponse(tool_calls=[_call("c3")]).to_message().tool_calls[0]

    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__ is third.__pydantic_fields_set__
    assert first.model_fields_set == {"id", "name", "arguments"}


def test_a_copy_with_updates_gets_a_set_of_its_own() -> None:
    first, second = _call("c1"), _call("c2")
    share_fields_sets([first, second])

    copy = first.model_copy(update={"type": "tool_call"})

    assert copy.model_fields_set == {"id", "name", "arguments", "type"}
    assert first.model_fields_set == second.model_fields_set == {"id", "name", "arguments"}
    assert first.model_dump(exclude_unset=True) == {"id": "c1", "name": "add", "arguments": {"a": 1}}


def test_parts_given_other_fields_keep_their_own_set() -> None:
    plain, typed = _call("c1"), ToolCallPart(type="tool_call", id="c2", name="add")
    share_fields_sets([plain, typed])

    assert typed.model_fields_set == {"type", "id", "name"}
    assert plain.__pydantic_fields_set__ is not typed.__pydantic_fields_set__


def test_a_model_that_is_not_frozen_keeps_its_own_set() -> None:
    class Note(BaseModel):
        text: str
        seen: bool = False

    first, second = Note(text="a"), Note(text="b")
    share_fields_sets([first, second])
    first.seen = True  # pydantic adds "seen" to the first note's set

    assert first.__pydantic_fields_set__ is not second.__pydantic_fields_set__
    assert second.model_fields_set == {"text"}
