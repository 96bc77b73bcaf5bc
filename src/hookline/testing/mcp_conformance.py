"""The server the MCP conformance kit tests, served by hookline's own serving code.

The kit (npm `@modelcontextprotocol/conformance`) calls tools, reads resources and gets
prompts of fixed names (`test_simple_text`, `test://static-text`, `test_simple_prompt`,
...) and checks what comes back, over both protocol eras. This module is that fixture,
built on the SDK's low-level `Server` like the served agent, and served by
`hookline.mcp.serving.serve_http`, so the kit's verdict on the transport (sessions,
`server/discover`, DNS rebinding, streams) is a verdict on what `hookline mcp --http`
serves:

```
python -m hookline.testing.mcp_conformance --port 0     # prints "PORT <n>" once it listens
```

What each tool, resource and prompt answers is in `hookline.testing._mcp_fixture`.
"""

from __future__ import annotations

import argparse
import socket
import sys

import anyio

from hookline.mcp.serving import serve_http
from hookline.testing._mcp_fixture import build_server

__all__ = ["build_server", "main"]


def main(argv: list[str] | None = None) -> int:
    """Serve the fixture on 127.0.0.1 until stopped; print `PORT <n>` on stdout once it listens."""
    parser = argparse.ArgumentParser(prog="python -m hookline.testing.mcp_conformance")
    parser.add_argument("--port", type=int, default=0, help="the port (0: any free one)")
    args = parser.parse_args(argv)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    with sock:
        anyio.run(serve, sock)
    return 0


async def serve(sock: socket.socket) -> None:
    """Serve the fixture on the bound `sock`."""
    await serve_http(build_server(), "127.0.0.1", sock.getsockname()[1], sock=sock)


if __name__ == "__main__":
    sys.exit(main())
