"""A test MCP server whose tool list changes: `grow` adds the tool `extra`, `shrink` takes it away."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from _common import Record, new_server, options, serve, text
from mcp.shared.subscriptions import ToolsListChanged

OBJECT = {"type": "object", "properties": {}}


def main() -> None:
    args = options()
    record = Record(args.state)
    extra = [False]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        record.note("lists", "list")
        tools = [types.Tool(name="grow", input_schema=OBJECT), types.Tool(name="shrink", input_schema=OBJECT)]
        if extra[0]:
            tools.append(types.Tool(name="extra", description="Only there after grow.", input_schema=OBJECT))
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        record.note("calls", params.name)
        if params.name in ("grow", "shrink"):
            extra[0] = params.name == "grow"
            if args.legacy:
                await ctx.session.send_tool_list_changed()
            else:
                await bus.publish(ToolsListChanged())
            return text(f"{params.name} done")
        if params.name == "extra" and extra[0]:
            return text("extra here")
        return types.CallToolResult(content=[types.TextContent(text=f"no tool {params.name}")], is_error=True)

    server, bus = new_server("changing", args, on_list_tools=list_tools, on_call_tool=call_tool)
    serve(server, args)


if __name__ == "__main__":
    main()
