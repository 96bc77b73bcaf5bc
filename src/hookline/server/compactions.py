"""`POST /v1/sessions/{id}/compactions/undo`: a user undoes the compaction of a session's conversation.

A compaction's summary is an event of the log (authored "compaction", `metadata["compaction"]`
with its `id`), so the page shows it where it happened (`hookline.compaction`). Undoing it
records a status line by the user (`metadata["compaction_undone"]`), under the session's run
lock; the next run starts from the messages it had replaced. Without a body, the compaction
in effect is undone; `{"id": ...}` names one. No compaction to undo answers 422
`invalid_compaction`; a run going on, 409 `busy`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Response
from pydantic import BaseModel, ConfigDict, Field

from hookline._redact import redact
from hookline.compaction import undo_compaction
from hookline.errors import ConfigError
from hookline.events import Event
from hookline.server.errors import error_response, json_response
from hookline.server.routes import Ctx, SessionId, User
from hookline.server.schemas import ErrorBody

__all__ = ["UndoCompaction", "compactions_api"]

compactions_api = APIRouter(prefix="/v1", tags=["sessions"])


class UndoCompaction(BaseModel):
    """Which compaction to undo."""

    model_config = ConfigDict(extra="forbid")
    id: str | None = Field(default=None, max_length=64)
    """The compaction's id (`metadata["compaction"]["id"]` of its summary); None: the one in effect."""


@compactions_api.post("/sessions/{session_id}/compactions/undo", response_model=Event,
                      responses={code: {"model": ErrorBody} for code in (401, 404, 409, 422)})
async def undo(context: Ctx, user: User, session_id: SessionId,
               body: Annotated[UndoCompaction | None, Body()] = None) -> Response:
    """Undo a compaction of the session's conversation; answer the line that records it."""
    try:
        line = await undo_compaction(context.store, session_id, (body or UndoCompaction()).id, user=user, wait=0.0)
    except ConfigError as exc:
        return error_response(ErrorBody(error="invalid_compaction", message=redact(str(exc))), 422)
    return json_response(line)
