"""The HTTP server: `create_app(agent)` builds a FastAPI app serving the API of docs/contract.md.

```python
from hookline.server import create_app

app = create_app(agent, SQLiteSessionStore("hookline.db"), tokens={"s3cret": "alice"})
# uvicorn module:app   (or: hookline serve module:agent)
```

Needs the `server` extra (`pip install hookline[server]`).
"""

from hookline.server.app import create_app
from hookline.server.auth import parse_tokens, read_tokens_file, tokens_from_env
from hookline.server.deps import DepsContext, DepsFactory
from hookline.server.webhooks import Webhooks, sign

__all__ = [
    "DepsContext", "DepsFactory", "Webhooks", "create_app", "parse_tokens", "read_tokens_file", "sign",
    "tokens_from_env",
]
