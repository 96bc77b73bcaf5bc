"""A test MCP server with a tool it runs only as an MCP task (`taskSupport: "required"`, 2025-11-25)."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from _common import Record, new_server, options, serve, text
from mcp.shared.exceptions import MCPError

OBJECT = {"type": "object", "properties": {}}
TOOLS = [
    types.Tool(name="quick", description="Answers at once.", input_schema=OBJECT),
    types.Tool(name="report", description="A long report, only as a task.", input_schema=OBJECT,
               execution=types.ToolExecution(task_support="required")),
]


def main() -> None:
    args = options()
    record = Record(args.state)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        record.note("lists", "list")
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        record.note("calls", params.name)
        if params.name == "report" and params.task is None:
            raise MCPError(types.METHOD_NOT_FOUND, "report must be called as a task")
        return text(f"{params.name} done")

    server, _bus = new_server("tasks", args, on_list_tools=list_tools, on_call_tool=call_tool)
    serve(server, args)


if __name__ == "__main__":
    main()
