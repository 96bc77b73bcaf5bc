"""Durable runs on an existing engine: `hookline[dbos]` runs an agent as a DBOS workflow.

```python
from hookline.durable import DurableAgent, dbos_config, launched, register_queue
```

A killed worker's run is recovered by another process and goes on from the session log;
each model call and tool call is a DBOS step, and no tool runs twice. See docs/durable.md.
"""

from __future__ import annotations

try:
    import dbos as _dbos  # noqa: F401 - fail here, with the fix, rather than deep inside
except ModuleNotFoundError as exc:  # pragma: no cover - the extra is installed in development
    if exc.name != "dbos":
        raise
    raise ImportError("hookline.durable needs DBOS: pip install 'hookline[dbos]'") from exc

from hookline.durable._steps import DurableModel, DurableTool
from hookline.durable._tagging import WORKFLOW_KEY
from hookline.durable.dbos import DEFAULT_QUEUE, DurableAgent, dbos_config, launched, register_queue

__all__ = [
    "DEFAULT_QUEUE",
    "WORKFLOW_KEY",
    "DurableAgent",
    "DurableModel",
    "DurableTool",
    "dbos_config",
    "launched",
    "register_queue",
]
