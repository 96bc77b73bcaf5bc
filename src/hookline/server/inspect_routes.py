"""The inspector's routes: session titles and search, a session's timeline, its model calls, forks.

Each reads the session's log (`hookline.server.inspection`) or copies it
(`hookline.server.forking`); like every `/v1` route it takes the user from the token and
answers 404 for another user's session exactly as for a missing one. A fork or a model
call that the log cannot give answers 422 with a message that says why and what would do.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from pydantic import TypeAdapter

from hookline._redact import redact
from hookline.errors import ConfigError
from hookline.events import Event
from hookline.messages import ToolResultPart
from hookline.server.errors import error_response, json_response
from hookline.server.forking import fork_session
from hookline.server.inspect_schemas import ForkBody, ModelCall, SessionSummary, Timeline
from hookline.server.inspection import model_calls, rebuild_call, runs_of, title_of
from hookline.server.routes import Ctx, ServerContext, SessionId, User
from hookline.server.schemas import MAX_SEQ, ErrorBody
from hookline.sessions import Session

__all__ = ["Titles", "inspect_api"]

_SUMMARIES: TypeAdapter[list[SessionSummary]] = TypeAdapter(list[SessionSummary])


class Titles:
    """The session titles found so far, by (session id, creation time): a first prompt never changes."""

    def __init__(self, kept: int = 4096) -> None:
        self._kept = kept
        self._titles: OrderedDict[tuple[str, datetime | None], str] = OrderedDict()

    def get(self, session: Session) -> str | None:
        """The title found before for `session`, if any."""
        return self._titles.get((session.id, session.created_at))

    def keep(self, session: Session, title: str) -> None:
        """Remember a session's title (the oldest go first once `kept` are kept)."""
        if title:
            self._titles[(session.id, session.created_at)] = title
            while len(self._titles) > self._kept:
                self._titles.popitem(last=False)


async def _titles(request: Request) -> Titles:
    titles: Titles = request.app.state.titles
    return titles


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: {"model": ErrorBody} for code in codes}


inspect_api = APIRouter(prefix="/v1", tags=["inspector"])
Seq = Annotated[int, Path(ge=1, le=MAX_SEQ, description="an event's seq")]


@inspect_api.get("/inspect/sessions", response_model=list[SessionSummary], responses=_errors(401, 422))
async def session_summaries(
    context: Ctx, user: User, titles: Annotated[Titles, Depends(_titles)],
    q: Annotated[str, Query(max_length=200, description="words to find in titles, ids and messages")] = "",
) -> Response:
    """The user's sessions with their titles (first prompts), newest first; `q` keeps those that mention it."""
    needle = q.strip().casefold()
    found = []
    for session in await context.store.list(app=context.agent.app, user=user):
        title = titles.get(session)
        events: list[Event] | None = None
        if title is None or needle:
            events = await context.store.events(session.id, view="prompt")
            title = title_of(events)
            titles.keep(session, title)
        if needle and not _mentions(needle, session.id, title, events or []):
            continue
        found.append(SessionSummary(id=session.id, title=title, created_at=session.created_at,
                                    updated_at=session.updated_at))
    return json_response(_SUMMARIES.dump_json(found))


def _mentions(needle: str, session_id: str, title: str, events: Sequence[Event]) -> bool:
    if needle in session_id.casefold() or needle in title.casefold():
        return True
    for event in events:
        texts = [event.text, *(p.content for p in event.parts if isinstance(p, ToolResultPart))]
        if any(needle in text.casefold() for text in texts):
            return True
    return False


@inspect_api.get("/sessions/{session_id}/timeline", response_model=Timeline, responses=_errors(401, 404, 422))
async def timeline(context: Ctx, user: User, session_id: SessionId) -> Response:
    """The session's runs, each with its model and tool calls over time, their tokens and durations."""
    events = await _log(context, session_id, user)
    return json_response(Timeline(session_id=session_id, runs=runs_of(events)))


@inspect_api.get("/sessions/{session_id}/model-calls/{seq}", response_model=ModelCall,
                 responses=_errors(401, 404, 422))
async def model_call(context: Ctx, user: User, session_id: SessionId, seq: Seq) -> Response:
    """The model call that event `seq` belongs to ("calling model" line, model status line or answer).

    What it was sent (messages, tools, settings) is rebuilt from the log and the agent; its
    `notes` say where that may differ from what the provider got.
    """
    events = await _log(context, session_id, user)
    call = next((c for c in model_calls(events) if seq in c.seqs), None)
    if call is not None:
        return json_response(rebuild_call(context.agent, session_id, events, call))
    event = next((e for e in events if e.seq == seq and not e.partial), None)
    if event is None:
        return error_response(ErrorBody(error="not_found", message=f"session {session_id!r} has no event {seq}"), 404)
    message = (f"event {seq} is no part of a model call; pick its 'calling model' line, the model's status line "
               "or the answer")
    return error_response(ErrorBody(error="not_a_model_call", message=message), 422)


@inspect_api.post("/sessions/{session_id}/fork", status_code=201, response_model=Session,
                  responses=_errors(401, 404, 409, 413, 422))
async def fork(context: Ctx, user: User, session_id: SessionId, body: ForkBody) -> Response:
    """Copy the log before event `at_seq` into a new session, with that message edited; answer the new session.

    Then `POST /v1/sessions/{new id}/resume` with `{"approvals": {}}` runs the agent from there.
    """
    source = await context.store.get(session_id, user=user, with_events=False)
    try:
        created = await fork_session(context.store, source, body, user)
    except ConfigError as exc:
        return error_response(ErrorBody(error="invalid_fork", message=redact(str(exc))), 422)
    return json_response(created, 201, {"Location": f"/v1/sessions/{created.id}"})


async def _log(context: ServerContext, session_id: str, user: str) -> list[Event]:
    await context.store.get(session_id, user=user, with_events=False)
    return await context.store.events(session_id, view="all")
