"""An MCP server's resources and prompts through `MCPToolset`, and the log level it is asked for.

Against a real server (`servers/catalog_server.py`), in both protocol eras, over both transports.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hookline import Agent
from hookline.mcp import MCPPrompt, MCPRequestError, MCPResource, MCPToolset
from hookline.messages import DocumentPart, FilePart, ImagePart, TextPart
from hookline.models import FunctionModel, ModelRequest, ModelResponse

from .harness import lines

pytestmark = pytest.mark.anyio


async def test_resources_are_listed_and_read_as_parts(toolset_of: Callable[..., MCPToolset]) -> None:
    async with toolset_of("catalog_server") as toolset:
        listed = await toolset.resources()
        (notes,) = await toolset.read("file:///docs/notes.txt")
        (logo,) = await toolset.read("file:///img/logo.png")
        (report,) = await toolset.read("file:///docs/report.pdf")

    assert listed[0] == MCPResource("file:///docs/notes.txt", "notes", "Meeting notes", None, "text/plain")
    assert [r.uri for r in listed] == ["file:///docs/notes.txt", "file:///img/logo.png", "file:///docs/report.pdf"]
    assert notes == DocumentPart(title="notes.txt", text="Ship on Friday.", source="file:///docs/notes.txt")
    assert isinstance(logo, ImagePart)
    assert (logo.media_type, logo.data[:4]) == ("image/png", b"\x89PNG")
    assert isinstance(report, FilePart)
    assert (report.media_type, report.name, report.data) == ("application/pdf", "report.pdf", b"%PDF-1.4\n%%EOF\n")


async def test_a_resource_the_server_does_not_have_is_a_clear_error(toolset_of: Callable[..., MCPToolset]) -> None:
    async with toolset_of("catalog_server") as toolset:
        with pytest.raises(MCPRequestError) as refused:
            await toolset.read("file:///nowhere")
    assert "refused to read file:///nowhere: Resource not found: file:///nowhere (JSON-RPC error -32602)" in str(
        refused.value)


async def test_prompts_are_listed_and_got_as_messages(toolset_of: Callable[..., MCPToolset]) -> None:
    async with toolset_of("catalog_server") as toolset:
        listed = await toolset.prompts()
        summarize = await toolset.prompt("summarize", {"topic": "the release"})
        hello = await toolset.prompt("hello")
        with pytest.raises(MCPRequestError, match="summarize needs a topic"):
            await toolset.prompt("summarize")

    assert listed[0] == MCPPrompt("summarize", None, "Summarize a topic from the notes.",
                                  (listed[0].arguments[0],))
    assert (listed[0].arguments[0].name, listed[0].arguments[0].required) == ("topic", True)
    assert [(m.role, m.parts) for m in summarize] == [
        ("user", [TextPart(text="Summarize the release.")]),
        ("user", [DocumentPart(title="file:///docs/notes.txt", text="Ship on Friday.",
                               source="file:///docs/notes.txt")]),
    ]
    assert [(m.role, m.text) for m in hello] == [("user", "Hello!"), ("assistant", "Hi, what can I do?")]


async def test_a_prompt_starts_a_run(toolset_of: Callable[..., MCPToolset]) -> None:
    seen: list[ModelRequest] = []

    def answer(request: ModelRequest) -> ModelResponse:
        seen.append(request)
        return ModelResponse(text="Friday.")

    toolset = toolset_of("catalog_server")
    async with Agent(model=FunctionModel(answer), tools=[toolset]) as agent:
        *history, last = await toolset.prompt("summarize", {"topic": "the release"})
        result = await agent.prompt(last).with_history(history)

    assert result.output == "Friday."
    assert [m.role for m in seen[0].messages if m.role != "system"] == ["user", "user"]


@pytest.mark.parametrize("level", ["info", "warning"])
async def test_a_2025_server_is_asked_for_the_log_level(toolset_of: Callable[..., MCPToolset], state: Path,
                                                        legacy: bool, level: str) -> None:
    async with toolset_of("catalog_server", log_level=level):
        pass
    assert lines(state, "levels") == ([level] if legacy else []), "2026-07-28 sends the level with each request"
