"""Fake model providers for testing agents, as hookline tests its own.

Each fake is a small server speaking a provider's real wire format (JSON and
server-sent events) on 127.0.0.1, so the official SDK, hookline's adapter, retries,
timeouts and streaming all run for real; only the model's answers are scripted:

```python
from hookline.models.openai import OpenAIModel
from hookline.testing import FakeOpenAIServer

with FakeOpenAIServer() as server:
    server.enqueue_tool_calls([("add", {"a": 2, "b": 3})])
    server.enqueue_text("5")
    model = OpenAIModel("gpt-4o-mini", base_url=server.base_url, api_key="test")
    ...                                  # run the agent
    assert server.requests[1]["messages"][-1]["role"] == "tool"
    server.assert_complete()             # every scripted answer was used
```

Faults are scripted the same way, one per request: `enqueue_error(429, retry_after=1)`,
`enqueue_delay(seconds)` (past a timeout), `enqueue_cut_stream(text)` (the connection drops
before the answer's end), `enqueue_stalled_stream(text, after=2, seconds=30)`,
`enqueue_garbled_stream(text, at=2)` (an event that is not JSON), `enqueue_cut_body(text)`
and `enqueue_malformed_json()` (a JSON body cut short).

The contract suites that hookline's own stores and adapters pass, for a backend of your
own to pass too, are `hookline.testing.store_contract` and `hookline.testing.model_contract`
(they need pytest, so they are imported only when named).

This module needs the `server` extra (`pip install 'hookline[server]'`) for Starlette
and uvicorn.
"""

from __future__ import annotations

try:
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("hookline.testing needs Starlette and uvicorn: pip install 'hookline[server]'") from exc

from hookline.testing._serve import Reply, ScriptedServer, ToolCallSpec, serve_in_thread
from hookline.testing.anthropic_server import FakeAnthropicServer
from hookline.testing.openai_server import FakeOpenAIServer

__all__ = ["FakeAnthropicServer", "FakeOpenAIServer", "Reply", "ScriptedServer", "ToolCallSpec", "serve_in_thread"]
