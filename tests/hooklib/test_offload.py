from __future__ import annotations

import re

import pytest

from hookline import Agent, ConfigError, ToolCallPart, ToolResultPart, tool
from hookline.conversation import conversation_problem
from hookline.hooklib import OffloadLargeResults
from hookline.models import FunctionModel, ModelRequest, ModelResponse

pytestmark = pytest.mark.anyio

PAGE = "".join(f"line {i:04d}\n" for i in range(500))  # 5000 characters


@tool
def fetch(size: int) -> str:
    """Fetch a document of `size` characters."""
    return PAGE[:size]


def results(request: ModelRequest) -> list[ToolResultPart]:
    return [r for m in request.messages for r in m.tool_results]


class Reader:
    """Fetches a page, then reads every stored page back and answers with the whole text."""

    def __init__(self, size: int, length: int = 2000) -> None:
        self.size = size
        self.length = length
        self.seen: list[ToolResultPart] = []

    def __call__(self, request: ModelRequest) -> ModelResponse:
        done = results(request)
        if not done:
            return ModelResponse(tool_calls=[ToolCallPart(id="f", name="fetch", arguments={"size": self.size})])
        self.seen.append(done[-1])
        first = done[0].content
        match = re.search(r"ref '([0-9a-f]+)'", first)
        if match is None:
            return ModelResponse(text=first)
        last = done[-1].content
        next_offset = re.search(r"offset=(\d+)", last.rsplit("[", 1)[-1])
        if next_offset is None:  # end of result
            pages = [r.content.rsplit("\n[", 1)[0] for r in done[1:]]
            return ModelResponse(text=first.split("\n[...", 1)[0] + "".join(pages))
        arguments = {"ref": match.group(1), "offset": int(next_offset.group(1)), "length": self.length}
        return ModelResponse(tool_calls=[ToolCallPart(id=f"r{len(done)}", name="read_result", arguments=arguments)])


async def test_a_large_result_is_replaced_by_a_preview_and_read_back_in_pages() -> None:
    offload = OffloadLargeResults(max_chars=1000, preview_chars=300)
    script = Reader(size=5000, length=5000)
    agent = Agent(
        model=FunctionModel(script), tools=[fetch, offload.read_tool], hooks={"after_tool": [offload]}, max_turns=20
    )

    result = await agent.prompt("fetch it")

    assert result.output == PAGE
    shown = script.seen[0].content
    assert len(shown) < 500
    assert shown.startswith(PAGE[:300])
    assert "5000 characters" in shown
    # the pages are capped at max_chars even though the model asked for 5000
    assert result.usage.tool_calls == 1 + 5
    assert all(len(r.content) <= 1000 + 60 for r in script.seen[1:])
    assert list(offload.store.values()) == [PAGE]
    assert conversation_problem(result.messages) is None


async def test_a_small_result_is_left_alone() -> None:
    offload = OffloadLargeResults(max_chars=1000)
    agent = Agent(model=FunctionModel(Reader(size=1000)), tools=[fetch], hooks={"after_tool": [offload]})

    result = await agent.prompt("fetch it")

    assert result.output == PAGE[:1000]
    assert offload.store == {}


async def test_a_given_store_receives_the_results() -> None:
    store: dict[str, str] = {}
    offload = OffloadLargeResults(max_chars=100, store=store)
    agent = Agent(
        model=FunctionModel(Reader(size=250)), tools=[fetch, offload.read_tool], hooks={"after_tool": [offload]}
    )

    result = await agent.prompt("fetch it")

    assert result.output == PAGE[:250]
    assert list(store.values()) == [PAGE[:250]]


async def test_an_unknown_ref_or_bad_offset_is_an_error_result_for_the_model() -> None:
    offload = OffloadLargeResults(max_chars=100)
    offload.store["abc"] = "x" * 10
    calls = [
        ToolCallPart(id="a", name="read_result", arguments={"ref": "nope"}),
        ToolCallPart(id="b", name="read_result", arguments={"ref": "abc", "offset": 11}),
        ToolCallPart(id="c", name="read_result", arguments={"ref": "abc", "offset": 4, "length": 3}),
    ]

    def script(request: ModelRequest) -> ModelResponse:
        if not results(request):
            return ModelResponse(tool_calls=calls)
        return ModelResponse(text="|".join(r.content for r in results(request)))

    agent = Agent(model=FunctionModel(script), tools=[offload.read_tool], hooks={"after_tool": [offload]})
    result = await agent.prompt("read")

    unknown, beyond, page = [m.tool_results[0] for m in result.messages if m.role == "tool"]
    assert unknown.is_error
    assert "no stored result has ref 'nope'; stored refs: abc" in unknown.content
    assert beyond.is_error
    assert "offset must be 0..10" in beyond.content
    assert not page.is_error
    assert page.content == "xxx\n[characters 4-7 of 10; next: offset=7]"


def test_the_read_tool_has_a_schema_for_the_model() -> None:
    spec = OffloadLargeResults().read_tool.spec

    assert spec.name == "read_result"
    assert spec.parameters["required"] == ["ref"]
    assert set(spec.parameters["properties"]) == {"ref", "offset", "length"}
    assert spec.parameters["properties"]["length"]["default"] == 2000
    assert "large tool result" in spec.description


@pytest.mark.parametrize("kwargs", [{"max_chars": 0}, {"preview_chars": -1}, {"max_chars": "big"}])
def test_bad_sizes_are_config_errors(kwargs: dict) -> None:
    with pytest.raises(ConfigError, match="OffloadLargeResults"):
        OffloadLargeResults(**kwargs)
