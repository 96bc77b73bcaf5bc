"""A2A 1.0 agents as tools: `A2AAgent` calls a remote agent through the official `a2a-sdk`.

```python
from hookline.a2a import A2AAgent

researcher = A2AAgent("http://127.0.0.1:8001", name="researcher")
agent = Agent(tools=[researcher.as_tool()])
```

Serving an agent over A2A is the server's part (`hookline serve`: the Agent Card at
`/.well-known/agent-card.json` and JSON-RPC at `POST /a2a`, `hookline.server.protocols.a2a`).

The names here load the SDK (the `hookline[a2a]` extra) when first used, not when `hookline`
or `hookline.a2a` is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hookline.a2a.client import A2AAgent

__all__ = ["A2AAgent"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'hookline.a2a' has no attribute {name!r}")
    try:
        from hookline.a2a import client
    except ImportError as exc:
        if exc.name != "a2a" and not str(exc.name).startswith("a2a."):
            raise
        raise ImportError(f"hookline.a2a.{name} needs the A2A SDK: pip install 'hookline[a2a]' ({exc})") from exc
    return getattr(client, name)
