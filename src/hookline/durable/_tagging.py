"""The tag a durable run signs what it writes with (`hookline.sessions._tagged.TaggedStore`).

Every event a workflow's run appends carries the workflow's id in its metadata. A
recovered workflow reads the log for that tag to know whether its run had begun: the
tag travels in the same transaction as the events, so the answer is exact. A begun
prompt run is resumed, never given its prompt a second time.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookline.events import Event
from hookline.sessions import SessionStore
from hookline.sessions._tagged import TaggedStore

__all__ = ["WORKFLOW_KEY", "began", "workflow_store"]

WORKFLOW_KEY = "dbos_workflow_id"
"""The metadata key of the id of the DBOS workflow that wrote an event."""


def began(log: Sequence[Event], workflow_id: str) -> bool:
    """Whether the workflow `workflow_id` wrote any event of `log`."""
    return any(e.metadata.get(WORKFLOW_KEY) == workflow_id for e in log)


def workflow_store(inner: SessionStore, workflow_id: str) -> TaggedStore:
    """A view of `inner` whose appends carry the workflow's id (`WORKFLOW_KEY`)."""
    return TaggedStore(inner, WORKFLOW_KEY, workflow_id)
