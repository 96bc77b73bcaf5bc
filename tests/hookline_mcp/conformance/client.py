"""The MCP conformance kit's client driver: hookline's `MCPToolset` doing what each client scenario asks.

The kit runs `python client.py <server url>` with `MCP_CONFORMANCE_SCENARIO` naming the
scenario, against a server of its own that checks what the client sends. The driver calls
each tool the server lists in a run of an agent (a scripted model asks for the call); when
the server asks the user something, the run pauses, and the driver resumes it as a user
who accepts the form as offered (its defaults, or a value of each required field's type).

In the `auth/*` scenarios the toolset runs OAuth (`hookline.mcp.OAuth`) against the kit's
authorization server, whose authorize endpoint grants at once: it redirects to the
`redirect_uri` with a code, so the "user" follows the authorization URL one hop and hands
back where it was sent. A pre-registered client's credentials come in `MCP_CONFORMANCE_CONTEXT`.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import httpx2

from hookline import Agent, ToolCallPart
from hookline.mcp import MCPTool, MCPToolset, OAuth
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import InMemorySessionStore

CUSTOM_HEADERS = {
    "region": "us-west1", "priority": 5, "verbose": False, "debug": True, "empty_val": "", "method_val": "GET",
    "float_val": 1.5, "non_ascii_val": "日本語", "whitespace_val": " padded ", "leading_space_val": " leading",
    "trailing_space_val": "trailing ", "internal_space_val": "a b c", "control_char_val": "bell\x07",
    "crlf_val": "line\r\nbreak", "tab_val": "\ttabbed", "query": "what",
}
"""The arguments of `test_custom_headers`: each kind of value a `Mcp-Param-*` header must encode."""

EXAMPLES = {"string": "test", "integer": 1, "number": 1, "boolean": True}


def example(schema: dict[str, Any]) -> dict[str, Any]:
    """A value of the right type for each required property of an object schema."""
    properties = schema.get("properties") or {}
    types = {name: str(properties.get(name, {}).get("type")) for name in schema.get("required", [])}
    return {name: EXAMPLES.get(kind, "test") for name, kind in types.items()}


def arguments_for(tool: MCPTool, tools: dict[str, MCPTool]) -> dict[str, Any]:
    """What the driver calls `tool` with."""
    if tool.name == "test_custom_headers":
        return CUSTOM_HEADERS
    if tool.name == "json_schema_echo":  # the input schema of its sibling, as the toolset offers it to a model
        return {"schema": tools["json_schema_2020_12_tool"].parameters}
    return example(tool.parameters)


def one_call(name: str, arguments: dict[str, Any]) -> FunctionModel:
    """A model that asks for one call, then answers with its result."""

    def answer(request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if last.role == "user":
            return ModelResponse(tool_calls=[ToolCallPart(id="call", name=name, arguments=arguments)])
        return ModelResponse(text=last.tool_results[0].content)

    return FunctionModel(answer)


async def call_in_a_run(toolset: MCPToolset, tool: MCPTool, arguments: dict[str, Any]) -> str:
    """Call `tool` in an agent's run, answering every question the server asks on the way."""
    agent = Agent(model=one_call(tool.name, arguments), tools=[toolset], session_store=InMemorySessionStore())
    result = await agent.prompt(f"call {tool.name}").session(tool.name)
    for _ in range(10):
        if result.stop_reason != "interrupted":
            break
        answers = {q.call_id: {"response": example(q.response_schema or {})} for q in result.interruptions}
        result = await agent.resume(tool.name, approvals=answers)
    return str(result.output)


CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The client ID metadata document the kit's `auth/basic-cimd` scenario expects as the client ID."""


async def authorize(url: str) -> str:
    """The user at the kit's authorization page: it grants at once, redirecting to the callback with a code."""
    async with httpx2.AsyncClient() as client:
        response = await client.get(url, follow_redirects=False)
    assert response.is_redirect, f"the authorize endpoint answered {response.status_code}, not a redirect"
    return response.headers["location"]


def oauth_for(context: dict[str, Any]) -> OAuth:
    """The toolset's OAuth in an `auth/*` scenario: pre-registered when the kit gives credentials."""
    return OAuth(authorize, redirect_uri="http://localhost:3000/callback", client_name="hookline conformance",
                 client_id=context.get("client_id"), client_secret=context.get("client_secret"),
                 client_metadata_url=CLIENT_METADATA_URL)


async def main(url: str) -> None:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    auth = oauth_for(context) if scenario.startswith("auth/") else None
    async with MCPToolset.http(url, auth=auth) as toolset:
        tools = {tool.name: tool for tool in toolset.tools() if isinstance(tool, MCPTool)}
        if scenario == "json-schema-2020-12-preservation":
            tools = {name: tools[name] for name in ("json_schema_echo", "json_schema_2020_12_tool")}
        for tool in tools.values():
            print(tool.name, (await call_in_a_run(toolset, tool, arguments_for(tool, tools)))[:200], flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[-1]))
