"""A test MCP server whose tool asks the user a question (elicitation) before it answers.

`sign_up` asks for a name and a plan (its default: "free"): over a 2025-era connection with
`elicitation/create` while the call waits, on 2026-07-28 with an `input_required` result
that the client answers in a retry. `calls.log` gets one line per call the server saw, with
the answer it had: `sign_up asked`, `sign_up accept {...}`, `sign_up decline`.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from _common import Record, new_server, options, serve, text
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

QUESTION = "Which name and plan should the account have?"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "plan": {"type": "string", "enum": ["free", "pro"], "default": "free"}},
    "required": ["name"],
}
TOOLS = [types.Tool(name="sign_up", description="Open an account, asking the user for its details.",
                    input_schema={"type": "object", "properties": {}})]


def main() -> None:
    args = options()
    record = Record(args.state)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams
                        ) -> types.CallToolResult | types.InputRequiredResult:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            response = (params.input_responses or {}).get("details")
            if response is None:
                record.note("calls", "sign_up asked")
                request = {"method": "elicitation/create",
                           "params": {"mode": "form", "message": QUESTION, "requestedSchema": SCHEMA}}
                return types.InputRequiredResult.model_validate(
                    {"resultType": "input_required", "inputRequests": {"details": request}})
            answer = types.ElicitResult.model_validate(response.model_dump(by_alias=True))
        else:
            record.note("calls", "sign_up asked")
            answer = await ctx.session.elicit_form(QUESTION, SCHEMA, related_request_id=ctx.request_id)
        record.note("calls", f"sign_up {answer.action}" + (f" {json.dumps(answer.content)}" if answer.content else ""))
        if answer.action != "accept" or answer.content is None:
            return text(f"no account: the user chose {answer.action}")
        return text(f"signed up {answer.content['name']} on {answer.content.get('plan')}")

    server, _bus = new_server("asking", args, on_list_tools=list_tools, on_call_tool=call_tool)
    serve(server, args)


if __name__ == "__main__":
    main()
