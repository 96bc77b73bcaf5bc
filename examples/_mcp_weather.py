"""A small MCP server, written with the `mcp` SDK: the server `mcp_client.py` starts.

    .venv/bin/python examples/_mcp_weather.py      # speaks MCP on stdin/stdout
"""

from __future__ import annotations

import warnings

from mcp.server.mcpserver import Context, MCPServer

warnings.simplefilter("ignore")  # ctx.info() is the 2025 logging API, deprecated in 2026-07-28

server = MCPServer("weather", log_level="WARNING")


@server.tool()
def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    return f"{city}: sunny, 24 °C"


@server.tool()
async def station_report(city: str, ctx: Context) -> str:
    """Read every weather station of a city (slow: reports its progress)."""
    stations = ["north", "centre", "south"]
    for done, station in enumerate(stations, start=1):
        await ctx.report_progress(done, len(stations), f"read station {station}")
    await ctx.info(f"{city}: station south reports gusts")
    return f"{city}: 3 stations read, light wind, gusts in the south"


if __name__ == "__main__":
    server.run()
