"""The conformance kit's fixture: the tools its scenarios of the tasks extension call, and which run as tasks.

A call of one of them runs as a task (`hookline.mcp._tasks`) where the client declared the
extension: `TASK_SUPPORT` says whether it may ("optional") or must ("required").
"""

from __future__ import annotations

from typing import Literal

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from hookline.testing._mcp_wire import (
    Call,
    Context,
    Handler,
    answer,
    elicit_request,
    input_required,
    string_arguments,
    text,
    tool,
)

__all__ = ["TASK_SUPPORT", "TASK_TOOLS", "task_support"]


async def greet(ctx: Context, call: Call) -> types.CallToolResult:
    return text(f"Hello, {(call.arguments or {}).get('name', 'World')}!")


async def slow_compute(ctx: Context, call: Call) -> types.CallToolResult:
    arguments = call.arguments or {}
    seconds = arguments.get("seconds", 1)
    if not isinstance(seconds, int | float) or not 0 <= seconds <= 600:
        raise MCPError(types.INVALID_PARAMS, "seconds must be a number from 0 to 600")
    await anyio.sleep(seconds)
    return text(f"Computed {arguments.get('label', '')!s} in {seconds} s")


async def failing_job(ctx: Context, call: Call) -> types.CallToolResult:
    await anyio.sleep(0.2)
    return text("The job failed, as this tool always does", is_error=True)


async def protocol_error_job(ctx: Context, call: Call) -> types.CallToolResult:
    await anyio.sleep(0.1)
    raise MCPError(types.INTERNAL_ERROR, "protocol_error_job fails with a JSON-RPC error, on purpose")


async def confirm_delete(ctx: Context, call: Call) -> types.CallToolResult | types.InputRequiredResult:
    filename = str((call.arguments or {}).get("filename", ""))
    got = answer(call, "confirm")
    if got is None:
        return input_required({"confirm": elicit_request(f"Delete {filename}?", {"confirm": {"type": "boolean"}},
                                                         ["confirm"])})
    confirmed = got.get("action") == "accept" and (got.get("content") or {}).get("confirm") is True
    return text(f"Deleted {filename}" if confirmed else f"Kept {filename}")


async def multi_input(ctx: Context, call: Call) -> types.CallToolResult | types.InputRequiredResult:
    names = [(answer(call, key) or {}).get("content", {}).get("name") for key in ("first", "second")]
    if all(names):
        return text(f"Got {names[0]} and {names[1]}")
    ask = {"name": {"type": "string"}, "confirm": {"type": "boolean"}}
    return input_required({"first": elicit_request("First name?", ask, ["name"]),
                           "second": elicit_request("Second name?", ask, ["name"])})


TASK_SUPPORT: dict[str, Literal["optional", "required"]] = {
    "slow_compute": "optional", "failing_job": "required", "protocol_error_job": "optional",
    "confirm_delete": "optional", "multi_input": "optional",
}


def task_support(call: Call) -> Literal["optional", "required"] | None:
    """Whether a call runs as a task when the client has the tasks extension (`hookline.mcp._tasks`)."""
    if call.name == "test_tool_with_task":  # asks the user's name as a plain call, then runs as a task
        return "required" if call.input_responses else None
    return TASK_SUPPORT.get(call.name)


TASK_TOOLS: list[tuple[types.Tool, Handler]] = [
    (tool("greet", "Greets by name, at once", string_arguments("name")), greet),
    (tool("slow_compute", "Sleeps `seconds`, then answers; a task when it can be", {
        "type": "object", "properties": {"seconds": {"type": "number"}, "label": {"type": "string"}}}), slow_compute),
    (tool("failing_job", "Runs only as a task, and answers with an error result"), failing_job),
    (tool("protocol_error_job", "Fails with a JSON-RPC error"), protocol_error_job),
    (tool("confirm_delete", "Asks before it deletes `filename`", string_arguments("filename")), confirm_delete),
    (tool("multi_input", "Asks two things at once"), multi_input),
]
"""The tools, with their handlers, as the fixture lists them."""
