"""The MCP conformance kit's client driver: hookline's `MCPToolset` doing what each client scenario asks.

The kit runs `python client.py <server url>` with `MCP_CONFORMANCE_SCENARIO` naming the
scenario, against a server of its own that checks what the client sends. Most scenarios
want the tools listed and called; a few want particular arguments (below).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from hookline.mcp import MCPTool, MCPToolset

CUSTOM_HEADERS = {
    "region": "us-west1", "priority": 5, "verbose": False, "debug": True, "empty_val": "", "method_val": "GET",
    "float_val": 1.5, "non_ascii_val": "日本語", "whitespace_val": " padded ", "leading_space_val": " leading",
    "trailing_space_val": "trailing ", "internal_space_val": "a b c", "control_char_val": "bell\x07",
    "crlf_val": "line\r\nbreak", "tab_val": "\ttabbed", "query": "what",
}
"""The arguments of `test_custom_headers`: each kind of value a `Mcp-Param-*` header must encode."""


def example(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool: a value of the right type for each required property."""
    values = {"string": "test", "integer": 1, "number": 1, "boolean": True}
    properties = schema.get("properties") or {}
    return {name: values.get(str(properties.get(name, {}).get("type")), "test") for name in schema.get("required", [])}


async def call_each(tools: dict[str, MCPTool]) -> None:
    """Call every tool with example arguments."""
    for tool in tools.values():
        arguments = CUSTOM_HEADERS if tool.name == "test_custom_headers" else example(tool.parameters)
        print(tool.name, repr(await tool.call(arguments))[:200], flush=True)


async def echo_schema(tools: dict[str, MCPTool]) -> None:
    """Send back the input schema of `json_schema_2020_12_tool` as the toolset offers it to a model."""
    focal = tools["json_schema_2020_12_tool"]
    print(await tools["json_schema_echo"].call({"schema": focal.parameters}), flush=True)


SCENARIOS: dict[str, Callable[[dict[str, MCPTool]], Awaitable[None]]] = {
    "json-schema-2020-12-preservation": echo_schema,
}


async def main(url: str) -> None:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    async with MCPToolset.http(url) as toolset:
        tools = {tool.name: tool for tool in toolset.tools() if isinstance(tool, MCPTool)}
        await SCENARIOS.get(scenario, call_each)(tools)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[-1]))
