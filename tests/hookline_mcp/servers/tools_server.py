"""A test MCP server with tools that answer, wait, fail, report progress and log, and crash."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from _common import Record, new_server, options, serve, text

TOOLS = [
    types.Tool(name="add", description="Add two integers.", input_schema={
        "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
    types.Tool(name="slow", description="Wait, then answer.", input_schema={
        "type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]}),
    types.Tool(name="fail", description="Always fails.", input_schema={"type": "object", "properties": {}}),
    types.Tool(name="progress", description="Report progress and log while working.", input_schema={
        "type": "object", "properties": {"steps": {"type": "integer"}}, "required": ["steps"]}),
    types.Tool(name="crash", description="Exit the server in the middle of the call.",
               input_schema={"type": "object", "properties": {}}),
    types.Tool(name="env", description="The value of an environment variable.", input_schema={
        "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
    types.Tool(name="cwd", description="The working directory.", input_schema={"type": "object", "properties": {}}),
    types.Tool(name="picture", description="A picture, its caption and its report.",
               input_schema={"type": "object", "properties": {}}),
    types.Tool(name="snapshot", description="A picture, and its size and data as structured content.",
               input_schema={"type": "object", "properties": {}}),
]
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
REPORT = "JVBERi0xLjQKJSVFT0YK"  # "%PDF-1.4\n%%EOF\n"


def main() -> None:
    args = options()
    record = Record(args.state)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        record.note("lists", "list")
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        record.note("calls", params.name)
        record.note("eras", ctx.protocol_version)
        if params.name == "add":
            return text(str(int(arguments["a"]) + int(arguments["b"])))
        if params.name == "slow":
            await anyio.sleep(float(arguments["seconds"]))  # the tool's work
            return text("slept")
        if params.name == "fail":
            return types.CallToolResult(content=[types.TextContent(text="the disk is full")], is_error=True)
        if params.name == "progress":
            return await _progress(ctx, int(arguments["steps"]))
        if params.name == "crash":
            os._exit(3)
        if params.name in PLAIN:
            return PLAIN[params.name](arguments)
        raise ValueError(f"no tool {params.name}")

    server, _bus = new_server("tools", args, on_list_tools=list_tools, on_call_tool=call_tool)
    serve(server, args)


def _picture(arguments: dict[str, Any]) -> types.CallToolResult:
    report = types.BlobResourceContents(uri="file:///reports/r.pdf", mime_type="application/pdf", blob=REPORT)
    return types.CallToolResult(content=[
        types.TextContent(text="a red dot"),
        types.ImageContent(data=PIXEL, mime_type="image/png"),
        types.EmbeddedResource(resource=report),
    ])


async def _progress(ctx: Any, steps: int) -> types.CallToolResult:
    for step in range(1, steps + 1):
        await ctx.session.report_progress(step, steps, f"step {step}")
    await ctx.session.send_log_message(level="warning", data="almost out of steps", logger="worker",
                                       related_request_id=ctx.request_id)
    await ctx.session.send_log_message(level="debug", data="too chatty to show", related_request_id=ctx.request_id)
    return text(f"did {steps} steps")


def _snapshot(arguments: dict[str, Any]) -> types.CallToolResult:
    # As servers built on output schemas answer: the image, and a structure that repeats it (here as a data: URL too).
    return types.CallToolResult(content=[types.ImageContent(data=PIXEL, mime_type="image/png")],
                                structured_content={"width": 1, "height": 1, "data": PIXEL,
                                                    "preview": f"data:image/png;base64,{PIXEL}"})


PLAIN: dict[str, Callable[[dict[str, Any]], types.CallToolResult]] = {
    "env": lambda arguments: text(os.environ.get(str(arguments["name"]), "<unset>")),
    "cwd": lambda arguments: text(os.getcwd()),
    "picture": _picture,
    "snapshot": _snapshot,
}
"""The tools that answer at once, from their arguments alone."""


if __name__ == "__main__":
    main()
