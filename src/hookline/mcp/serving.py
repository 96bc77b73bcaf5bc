"""How hookline serves an MCP server (the SDK's low-level `Server`): over stdio, or streamable HTTP on loopback.

The served agent (`hookline.mcp.server`) and the conformance fixture
(`hookline.testing.mcp_conformance`) are served by these two functions, so what the MCP
conformance kit checks against the fixture is the serving the agent gets.

Over HTTP one endpoint (`/mcp`) speaks both protocol eras: the 2026-07-28 revision, where
each request stands alone (`server/discover`, no session id), and the `initialize`
handshake before it, with a session per client (`Mcp-Session-Id`). Requests whose `Host`
or `Origin` is not a loopback one are refused (DNS rebinding).
"""

from __future__ import annotations

import socket
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from hookline._cli.serve import is_loopback
from hookline.errors import ConfigError

__all__ = ["serve_http", "serve_stdio"]


async def serve_stdio(server: Server[Any]) -> None:
    """Serve `server` over this process's stdin and stdout until stdin ends."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(server: Server[Any], host: str = "127.0.0.1", port: int = 8000, *,
                     sock: socket.socket | None = None) -> None:
    """Serve `server` over streamable HTTP at `http://host:port/mcp` until stopped (Ctrl-C).

    Args:
        server: The MCP server.
        host: The address to listen on: loopback only, since the server has no authentication.
        port: The port (0: any free one).
        sock: A socket already bound (then `host` and `port` only name it).

    Raises:
        ConfigError: `host` is not a loopback address.
    """
    import uvicorn

    if not is_loopback(host):
        raise ConfigError(f"refusing to serve MCP on {host}: the MCP server has no authentication, so it listens "
                          "on loopback only (--host 127.0.0.1); put an authenticating proxy in front to expose it")
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock] if sock is not None else None)
