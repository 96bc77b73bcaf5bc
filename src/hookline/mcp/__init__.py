"""MCP both ways: an MCP server's tools in an agent (`MCPToolset`), and an agent as an MCP server.

```python
from hookline.mcp import MCPToolset

agent = Agent(tools=[add, MCPToolset.stdio("npx", args=["-y", "@modelcontextprotocol/server-everything"])])
```

A server behind OAuth: `MCPToolset.http(url, auth=OAuth(authorize, tokens=FileTokens(path)))`
(see `hookline.mcp.oauth`).

Serving an agent: `hookline mcp module:agent` (stdio) or `--http` (see `hookline.mcp.server`).

The names here load the `mcp` SDK (the `hookline[mcp]` extra) when first used, not when
`hookline` or `hookline.mcp` is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hookline.mcp.oauth import FileTokens, MemoryTokens, NotAuthorized, OAuth
    from hookline.mcp.toolset import (
        MCPConnectionError,
        MCPPrompt,
        MCPRequestError,
        MCPResource,
        MCPTool,
        MCPToolset,
    )

__all__ = ["FileTokens", "MCPConnectionError", "MCPPrompt", "MCPRequestError", "MCPResource", "MCPTool", "MCPToolset",
           "MemoryTokens", "NotAuthorized", "OAuth"]

_OAUTH = {"FileTokens", "MemoryTokens", "NotAuthorized", "OAuth"}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'hookline.mcp' has no attribute {name!r}")
    try:
        from hookline.mcp import oauth, toolset
    except ImportError as exc:
        if exc.name not in ("mcp", "mcp_types") and not str(exc.name).startswith(("mcp.", "mcp_types.")):
            raise
        raise ImportError(f"hookline.mcp.{name} needs the MCP SDK: pip install 'hookline[mcp]' ({exc})") from exc
    return getattr(oauth if name in _OAUTH else toolset, name)
