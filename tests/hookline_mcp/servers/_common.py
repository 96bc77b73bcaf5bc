"""What the test MCP servers share: the command line, the era, the record of what happened, the transport.

A server is run as `python <server>.py [--legacy] [--http --port N] --state DIR`:

- `--legacy` refuses `server/discover`, as servers written before the 2026-07-28 protocol
  do, so a client falls back to the `initialize` handshake (and list changes come as
  unasked notifications instead of `subscriptions/listen` events);
- `--http` serves streamable HTTP on 127.0.0.1 (port 0: any free port) and prints
  `PORT <n>` on stdout once it listens; otherwise the server speaks over stdio;
- `--session-gone 400` answers a request for a session the server does not know (it
  restarted) with 400, as the TypeScript SDK's servers do, instead of the Python SDK's 404;
- `--bearer TOKEN` lets in only requests that carry `Authorization: Bearer TOKEN` (the SDK's
  bearer middleware: 401 with `WWW-Authenticate` otherwise);
- `--task-limit N` and `--task-ttl-ms MS` bound the tasks of `task_server` (hookline's `Tasks`);
- `--state DIR` is where it writes its pid (`pid`) and one line per listing (`lists.log`)
  and per call (`calls.log`), so tests check what the server saw, not what the client says.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from pydantic import AnyHttpUrl

# The test servers use the deprecated logging API on purpose: it is what servers send today.
warnings.simplefilter("ignore")


class Record:
    """The server's own record of what it saw, in files a test reads."""

    def __init__(self, directory: str) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "pid").write_text(str(os.getpid()))

    def note(self, kind: str, line: str) -> None:
        with open(self.directory / f"{kind}.log", "a") as file:
            file.write(line + "\n")


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--legacy", action="store_true")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--session-gone", type=int, choices=[400, 404], default=404)
    parser.add_argument("--bearer")
    parser.add_argument("--state", required=True)
    parser.add_argument("--task-limit", type=int, default=100, help="task_server: tasks kept per user")
    parser.add_argument("--task-ttl-ms", type=int, default=3_600_000, help="task_server: how long a task is kept")
    return parser.parse_args()


def new_server(name: str, args: argparse.Namespace, **handlers: Any) -> tuple[Server[Any], InMemorySubscriptionBus]:
    bus = InMemorySubscriptionBus()
    # Every tool takes any object: with `get_tool_input_schema`, a 2026-07-28 HTTP server checks a
    # call's headers without running `tools/list` itself, so `lists.log` counts the client's listings only.
    server: Server[Any] = Server(name, version="1.0", on_subscriptions_listen=ListenHandler(bus),
                                 get_tool_input_schema=lambda tool: {"type": "object"}, **handlers)
    if args.legacy:
        server.add_request_handler("server/discover", types.RequestParams, _refuse_discover)
    return server, bus


async def _refuse_discover(ctx: Any, params: Any) -> types.DiscoverResult:
    raise MCPError(types.METHOD_NOT_FOUND, "Method not found")


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


def serve(server: Server[Any], args: argparse.Namespace) -> None:
    if args.http:
        _serve_http(server, args)
    else:
        anyio.run(_serve_stdio, server, args.legacy)


async def _serve_stdio(server: Server[Any], legacy: bool) -> None:
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read_stream, write_stream):
        if not legacy:
            await server.run(read_stream, write_stream, options)
            return
        # The handshake-only loop: what a server written before 2026-07-28 speaks.
        async with server.lifespan(server) as state:
            await serve_loop(server, read_stream, write_stream, lifespan_state=state, init_options=options)


def _serve_http(server: Server[Any], args: argparse.Namespace) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)  # before the port is announced: a client may connect at once
    port = sock.getsockname()[1]
    print(f"PORT {port}", flush=True)
    app = server.streamable_http_app(**_bearer(args.bearer, port) if args.bearer else {})
    config = uvicorn.Config(app if args.session_gone == 404 else _SessionGone400(app), log_level="warning",
                            lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
    sys.exit(0)


def _bearer(token: str, port: int) -> dict[str, Any]:
    """The app's options that let in only `Authorization: Bearer <token>`."""

    class Verifier:
        async def verify_token(self, given: str) -> AccessToken | None:
            return AccessToken(token=given, client_id="test", scopes=[]) if given == token else None

    where = f"http://127.0.0.1:{port}"
    return {"auth": AuthSettings(issuer_url=AnyHttpUrl(where), resource_server_url=AnyHttpUrl(f"{where}/mcp")),
            "token_verifier": Verifier()}


class _SessionGone400:
    """Answers 400 where the SDK answers 404 for an unknown session id, with the TypeScript SDK's body."""

    BODY = b'{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}'

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not any(name == b"mcp-session-id" for name, _ in scope["headers"]):
            await self.app(scope, receive, send)
            return
        replaced = False

        async def reply(message: Any) -> None:
            nonlocal replaced
            if message["type"] == "http.response.start" and message["status"] == 404:
                replaced = True
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": self.BODY})
            elif not replaced:
                await send(message)

        await self.app(scope, receive, reply)
