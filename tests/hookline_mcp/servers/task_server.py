"""A test MCP server with a tool it runs only as an MCP task.

Before 2026-07-28 (`--legacy`) the tool is marked `taskSupport: "required"` (the 2025-11-25
draft's field) and a plain call to it fails. On 2026-07-28 requests it is served as a task
of the tasks extension by hookline's `Tasks`: a client that does not declare the extension
is refused (-32021). `report` takes `seconds` (0.2 by default) and writes `report done`, or
`report cancelled` when its task is cancelled, to the calls log; `confirm` asks the user
"Go ahead?" (through the task's `input_required`) and answers `confirm <action>`; `crash`
raises `RuntimeError`.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from _common import Record, new_server, options, serve, text
from mcp.shared.exceptions import MCPError

from hookline.mcp._tasks import Tasks
from hookline.testing._mcp_wire import answer, elicit_request, input_required

OBJECT = {"type": "object", "properties": {}}
TOOLS = [
    types.Tool(name="quick", description="Answers at once.", input_schema=OBJECT),
    types.Tool(name="report", description="A long report, only as a task.", input_schema=OBJECT,
               execution=types.ToolExecution(task_support="required")),
    types.Tool(name="confirm", description="Asks the user to go ahead, only as a task.", input_schema=OBJECT,
               execution=types.ToolExecution(task_support="required")),
    types.Tool(name="crash", description="Crashes, only as a task.", input_schema=OBJECT,
               execution=types.ToolExecution(task_support="required")),
]
TASK_ONLY = {tool.name for tool in TOOLS if tool.execution is not None}


def main() -> None:
    args = options()
    record = Record(args.state)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        record.note("lists", "list")
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams
                        ) -> types.CallToolResult | types.InputRequiredResult:
        record.note("calls", params.name)
        if params.name not in TASK_ONLY:
            return text(f"{params.name} done")
        if args.legacy and params.task is None:
            raise MCPError(types.METHOD_NOT_FOUND, f"{params.name} must be called as a task")
        if params.name == "crash":
            raise RuntimeError("the crash tool crashed")
        if params.name == "confirm":
            got = answer(params, "go")
            if got is None:
                return input_required({"go": elicit_request("Go ahead?", {"ok": {"type": "boolean"}}, ["ok"])})
            return text(f"confirm {got.get('action')}")
        try:
            await anyio.sleep(float((params.arguments or {}).get("seconds", 0.2)))
        except anyio.get_cancelled_exc_class():
            record.note("calls", "report cancelled")
            raise
        record.note("calls", "report done")
        return text("report done")

    server, _bus = new_server("tasks", args, on_list_tools=list_tools, on_call_tool=call_tool)
    if not args.legacy:
        Tasks(lambda params: "required" if params.name in TASK_ONLY else None, ttl_ms=args.task_ttl_ms,
              limit=args.task_limit).install(server)
    serve(server, args)


if __name__ == "__main__":
    main()
