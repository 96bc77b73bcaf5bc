"""How hookline serves an MCP server (the SDK's low-level `Server`): over stdio, or streamable HTTP.

The served agent (`hookline.mcp.server`) and the conformance fixture
(`hookline.testing.mcp_conformance`) are served by these two functions, so what the MCP
conformance kit checks against the fixture is the serving the agent gets.

Over HTTP one endpoint (`/mcp`) speaks both protocol eras: the 2026-07-28 revision, where
each request stands alone (`server/discover`, no session id), and the `initialize`
handshake before it, with a session per client (`Mcp-Session-Id`).

With bearer tokens (`HOOKLINE_TOKENS`, as `hookline serve`), every HTTP request needs a
known one (`hookline.mcp._auth`), and `request_user(ctx)` is the user of the request that
carried a call. Without tokens it listens on loopback only. On loopback, requests whose
`Host` or `Origin` is not a loopback one are refused (DNS rebinding: a web page the user
opens must not reach it through a name of its own). Beyond loopback that check is off: the
bearer token guards the server instead, which a browser never sends on a page's behalf.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings

from hookline._hosts import is_loopback
from hookline._tokens import TOKENS_ENV, tokens_from_env
from hookline.errors import ConfigError
from hookline.mcp._auth import BearerAuth, request_user

__all__ = ["request_user", "serve_http", "serve_stdio"]

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


async def serve_stdio(server: Server[Any]) -> None:
    """Serve `server` over this process's stdin and stdout until stdin ends."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(server: Server[Any], host: str = "127.0.0.1", port: int = 8000, *,
                     sock: socket.socket | None = None, tokens: Mapping[str, str] | None = None) -> None:
    """Serve `server` over streamable HTTP at `http://host:port/mcp` until stopped (Ctrl-C).

    Args:
        server: The MCP server.
        host: The address to listen on: beyond loopback only with tokens.
        port: The port (0: any free one).
        sock: A socket already bound (then `host` and `port` only name it).
        tokens: `{bearer token: user}`: every request then needs `Authorization: Bearer <token>`.
            None reads `HOOKLINE_TOKENS` / `HOOKLINE_TOKENS_FILE`; empty (or nothing
            configured): no authentication, every call is user `"default"`.

    Raises:
        ConfigError: `host` is not a loopback address and there are no tokens, or a token
            entry is malformed.
    """
    import uvicorn

    tokens = dict(tokens_from_env() or {}) if tokens is None else dict(tokens)
    if not tokens and not is_loopback(host):
        raise ConfigError(f"refusing to serve MCP on {host} without authentication: set {TOKENS_ENV}=token:user,... "
                          "(bearer tokens, as for hookline serve), or listen on loopback (--host 127.0.0.1)")
    app: Any = server.streamable_http_app(host=host, transport_security=_rebinding_check(host))
    if tokens:
        app = BearerAuth(app, tokens)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock] if sock is not None else None)


def _rebinding_check(host: str) -> TransportSecuritySettings:
    """On loopback, only loopback `Host` and `Origin` headers (the address served included); beyond it, any."""
    if not is_loopback(host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    name = f"[{host.strip('[]')}]" if ":" in host else host
    names = dict.fromkeys((*_LOOPBACK_NAMES, name))
    return TransportSecuritySettings(allowed_hosts=[f"{n}:*" for n in names],
                                     allowed_origins=[f"http://{n}:*" for n in names])
