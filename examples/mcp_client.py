"""An agent using an MCP server's tools beside a plain tool: `MCPToolset.stdio(...)` in `tools=[...]`.

    .venv/bin/python examples/mcp_client.py
    HOOKLINE_MODEL=openai:gpt-4o-mini .venv/bin/python examples/mcp_client.py

The weather server (`_mcp_weather.py`) runs as a subprocess and speaks MCP over its stdin
and stdout. Its tools are listed once, when the run starts; its progress and log lines
during a call arrive as status events of the run, beside the loop's own.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from _model import pick_model

from hookline import Agent, ToolCallPart, tool
from hookline.mcp import MCPToolset
from hookline.models import ModelRequest, ModelResponse


@tool
def packing_list(weather: str) -> str:
    """What to pack for some weather."""
    return "sunglasses and a light jacket" if "wind" in weather else "sunglasses"


def script(request: ModelRequest) -> ModelResponse:
    results = [r.content for m in request.messages for r in m.tool_results]
    if not results:
        return ModelResponse(tool_calls=[ToolCallPart(id="w1", name="weather_station_report",
                                                      arguments={"city": "Lyon"})])
    if len(results) == 1:
        return ModelResponse(tool_calls=[ToolCallPart(id="p1", name="packing_list", arguments={"weather": results[0]})])
    return ModelResponse(text=f"Lyon tomorrow: {results[0].split(': ', 1)[1]}. Pack {results[1]}.")


weather = MCPToolset.stdio(sys.executable, [str(Path(__file__).with_name("_mcp_weather.py"))], prefix="weather")
agent = Agent(
    name="trip-planner",
    model=pick_model(script),
    instructions="Check the weather with the weather tools, then say what to pack.",
    tools=[packing_list, weather],
)


async def main() -> None:
    async with agent:  # closing the agent stops the weather server
        async for event in agent.prompt("I go to Lyon tomorrow: what should I pack?").stream():
            if event.kind == "status" and event.source == "tool":
                print(f"  [{event.author}] {event.text}")
            elif event.kind == "message" and event.role == "assistant" and event.text:
                print(f"answer: {event.text}")
        print("tools offered:", ", ".join(t.name for t in weather.tools()))


if __name__ == "__main__":
    asyncio.run(main())
