"""`GET /v1/sessions/{id}/children`: the sessions in which a session's sub-agents ran.

An agent used as a tool (`Agent.as_tool`) runs in a child session of the same store
(`hookline.subagents`); the parent's log names each one on a line holding
`metadata["child_session_id"]`. This route reads them back from the parent's log, a page
at a time (a long log never stalls the server), whatever the number of children; a child's
own log is at `GET /v1/sessions/{child id}` (the same user owns both).
"""

from __future__ import annotations

from fastapi import APIRouter, Response
from pydantic import TypeAdapter

from hookline.events import Event
from hookline.server.errors import json_response
from hookline.server.log_window import pages_of
from hookline.server.routes import Ctx, SessionId, User
from hookline.server.schemas import ErrorBody
from hookline.subagents import ChildLink, children_of

__all__ = ["children_api"]

_CHILDREN: TypeAdapter[list[ChildLink]] = TypeAdapter(list[ChildLink])

children_api = APIRouter(prefix="/v1", tags=["sessions"])


@children_api.get("/sessions/{session_id}/children", response_model=list[ChildLink],
                  responses={code: {"model": ErrorBody} for code in (401, 404)})
async def children(context: Ctx, user: User, session_id: SessionId) -> Response:
    """The child sessions of the session's sub-agent calls, in the order they first ran."""
    await context.store.get(session_id, user=user, with_events=False)
    links = [e async for page in pages_of(context.store, session_id, "all") for e in page if _names_a_child(e)]
    return json_response(_CHILDREN.dump_json(children_of(links)))


def _names_a_child(event: Event) -> bool:
    return event.kind != "message" and "child_session_id" in event.metadata
