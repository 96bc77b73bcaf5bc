"""Tool argument validation (`Tool.validate`) and a whole call (`Tool.answer`)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from hookline import Tool, ToolCallPart

from ._support import add, drive


@pytest.fixture(scope="module")
def add_tool() -> Tool:
    return Tool(add)


def test_validate(benchmark: Any, add_tool: Tool) -> None:
    assert benchmark(add_tool.validate, {"a": 1, "b": 2}) == {"a": 1, "b": 2}


def test_validate_invalid(benchmark: Any, add_tool: Tool) -> None:
    def bad() -> None:
        try:
            add_tool.validate({"a": "x", "b": 2})
        except ValidationError:
            return
        raise AssertionError("expected a ValidationError")

    benchmark(bad)


def test_answer(benchmark: Any, add_tool: Tool) -> None:
    """Validate, call the sync tool, wrap the result in a ToolResultPart."""
    call = ToolCallPart(id="call_1_1", name="add", arguments={"a": 1, "b": 2})
    result = benchmark(lambda: drive(add_tool.answer(call)))
    assert result.content == "3"


def test_answer_string_arguments(benchmark: Any, add_tool: Tool) -> None:
    """Arguments as a model's raw JSON string (decoded first)."""
    call = ToolCallPart(id="call_1_1", name="add", arguments='{"a": 1, "b": 2}')
    assert benchmark(lambda: drive(add_tool.answer(call))).content == "3"


def test_tool_construction(benchmark: Any) -> None:
    """Schema derivation from the signature (once per tool, not per run: a reference)."""
    benchmark(Tool, add)
