"""The HTTP routes: sessions, their events, runs and resumes, health and the web page.

Every `/v1` route takes the user from `current_user` and reaches sessions only through
`_owned`, which answers 404 for another user's session exactly as for a missing one; a
run checks it as it opens the session (one read fewer per run), and asks `_owned` only
when the session is busy, so a busy session of someone else is still a 404. A resume asks
`_owned` first: it reads the session's log before its run starts.
Runs and resumes answer server-sent events when the client accepts `text/event-stream`,
and the `RunResult` as JSON otherwise; either way the run itself goes on in the server
(`RunManager`) if the client goes away.

Where the HTTP surface adds its own reading of an error:

- a resume whose approvals name a call that is not paused in the session answers 422
  `invalid_approvals`, and nothing is recorded: the body is well-formed but asks for
  something this session does not hold, so sending it again can never succeed (a 409
  would tell the client to retry once some conflict clears, and none will);
- a resume of a session with nothing to resume (no paused call, and the model has
  answered) answers 409 `nothing_paused` and starts no run: the session's state, not the
  body, is in the way, and the message says what to send instead (a prompt);
- deleting a session while a run is going on, in this process or in any other sharing
  the store, answers 409 `busy` (the store refuses while the run holds its lock);
- cancelling where no run is going on, here or elsewhere, answers 404 `not_running`
  (the session exists: a missing one is 404 `not_found`); a run another process holds
  that takes no cancel request (a library or CLI run) answers 409 `busy`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Protocol

from fastapi import APIRouter, Body, Depends, Header, Query, Request, Response
from fastapi.responses import FileResponse
from pydantic import TypeAdapter

from hookline import __version__
from hookline._redact import redact
from hookline._run.paused_turn import log_since_last_answer
from hookline._run.resume import parse_approvals
from hookline.agent import Agent, PromptRequest, RunResult
from hookline.errors import ConfigError, InvalidEvent, SessionBusy
from hookline.events import EVENTS_ADAPTER, Event
from hookline.server.auth import current_user
from hookline.server.deps import DepsContext, DepsFactory, apply_deps
from hookline.server.errors import error_response, json_response
from hookline.server.media import check_held, event_without_stored_bytes, without_stored_bytes
from hookline.server.relay import Relay
from hookline.server.resumes import check_resumable
from hookline.server.run_schemas import RunAccepted
from hookline.server.runs import RunChannel, RunManager, prompt_request, resume_request
from hookline.server.schemas import MAX_SEQ, CancelAccepted, CreateSession, ErrorBody, Health, ResumeBody, RunBody
from hookline.server.sse import replay, sse_response, subscription_frames, wants_sse
from hookline.server.titles import Titles
from hookline.sessions import Session, SessionStore
from hookline.types import View

__all__ = [
    "CUT_HEADER", "STATIC_DIR", "RunBuilder", "ServerContext", "ServiceRuns", "answer_run_body", "api",
    "create_in_store", "open_event_stream", "public", "stream_channel",
]

STATIC_DIR = Path(__file__).with_name("static")
"""The web page's files."""

_SESSIONS: TypeAdapter[list[Session]] = TypeAdapter(list[Session])
REPLAY_PAGE = 500
"""Stored events a stream reads from the log at a time."""
PAGE_LIMIT = 1000
"""The events of a page unless the request asks for fewer: the latest ones in `GET /v1/sessions/{id}`."""
MAX_PAGE = 5000
"""The most events a page may hold."""
SESSIONS_LISTED = 100
"""The sessions `GET /v1/sessions` answers unless the request asks for another number: the newest ones."""
MOST_SESSIONS_LISTED = 1000
"""The most sessions `GET /v1/sessions` answers."""
CUT_HEADER = "Hookline-Cut"
"""The header of a list of sessions that left older ones out: how many it answers."""
_ON_LOOP = 200  # a page longer than this is encoded in a worker thread: no other request waits for it
_RUN_GOING_ON = "a run on it is going on, in this or another server process; delete it once the run has ended"
_NOT_RUNNING = "no run is going on in session {!r}, in this server process or any other"
_NOT_PREPARABLE = "{!r} may not prepare parts here: they would join its next event as its own; expected one of {}"


@dataclass(frozen=True, slots=True)
class ServerContext:
    """What the routes work with: the agent, its store, the runs going on here, the link to other processes."""

    agent: Agent
    store: SessionStore
    runs: RunManager
    relay: Relay
    deps: DepsFactory | None = None
    """Builds each run's deps from its request (`create_app(deps=...)`); None: runs get none."""
    keepalive: float = 15.0
    """Seconds an event stream may stay silent before it sends a keepalive comment."""
    service: ServiceRuns | None = None
    """Runs with ids (`hookline.server.background`): background runs, webhooks, busy strategies."""
    titles: Titles = field(default_factory=Titles)
    """The session titles the inspector found so far (a first prompt never changes)."""


RunBuilder = Callable[[SessionStore], Awaitable[PromptRequest]]
"""Builds a run's request on the store it writes through (its deps applied)."""


class ServiceRuns(Protocol):
    """What takes the runs that ask for more than their answer (`hookline.server.background.BackgroundRuns`)."""

    async def take(self, session_id: str, user: str, body: RunBody, build: RunBuilder, *, sse: bool) -> Response:
        """Start (or queue) the run `build` makes; answer as `body` asks."""
        ...


async def _context(request: Request) -> ServerContext:
    context: ServerContext = request.app.state.hookline
    return context


Ctx = Annotated[ServerContext, Depends(_context)]
User = Annotated[str, Depends(current_user)]
SessionId = Annotated[str, "the session's id"]


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: {"model": ErrorBody} for code in codes}


_EVENT_STREAM = {"text/event-stream": {"schema": {"type": "string", "description": "SSE: one Event JSON per frame"}}}
_RUN_ANSWERS: dict[int | str, dict[str, Any]] = {
    200: {"description": "The run's result, or its events as SSE (`Accept: text/event-stream`)",
          "content": _EVENT_STREAM},
    202: {"description": "A background run (`\"background\": true`): its id, and where to ask after it",
          "model": RunAccepted},
    **_errors(400, 401, 404, 409, 413, 422, 500, 502, 503),
}

api = APIRouter(prefix="/v1", tags=["sessions"])
public = APIRouter(tags=["server"])


async def _owned(context: ServerContext, session_id: str, user: str, *, with_events: bool = False) -> Session:
    """Return the session if `user` owns it; `SessionNotFound` (404) otherwise."""
    return await context.store.get(session_id, user=user, with_events=with_events)


@api.post("/sessions", status_code=201, response_model=Session, responses=_errors(401, 409, 413, 422))
async def create_session(context: Ctx, user: User, body: Annotated[CreateSession | None, Body()] = None) -> Response:
    """Create a session (body `{}` or `{"id": ..., "state": {...}}`); answer it with its `id`."""
    return await create_in_store(context, user, body or CreateSession())


async def create_in_store(context: ServerContext, user: str, body: CreateSession) -> Response:
    """Create the session `body` asks for, for `user`: its 201 answer (also the light path's, `hot_routes`)."""
    session = await context.store.create(app=context.agent.app, user=user, session_id=body.id, state=body.state)
    return json_response(session, 201, {"Location": f"/v1/sessions/{session.id}"})


@api.get("/sessions", response_model=list[Session], responses=_errors(401, 422))
async def list_sessions(
    context: Ctx, user: User,
    limit: Annotated[int, Query(ge=1, le=MOST_SESSIONS_LISTED, description="the newest sessions to answer")]
    = SESSIONS_LISTED,
) -> Response:
    """The user's newest `limit` sessions (100 unless asked, 1000 at most), newest first, without their events.

    When the user has more, the header `CUT_HEADER` says how many are answered; older ones are
    found with a higher `limit`, or by what they say through the inspector's search
    (`GET /v1/inspect/sessions?q=`).
    """
    sessions = await context.store.list(app=context.agent.app, user=user, limit=limit + 1)  # one more: any left out?
    cut = {CUT_HEADER: str(limit)} if len(sessions) > limit else None
    return json_response(_SESSIONS.dump_json(sessions[:limit]), headers=cut)


@api.get("/sessions/{session_id}", response_model=Session, responses=_errors(401, 404))
async def get_session(context: Ctx, user: User, session_id: SessionId) -> Response:
    """One session, with the latest page of its events in the `ui` view (`Link: rel="prev"` for the older ones)."""
    session = await _owned(context, session_id, user)
    session.events = await context.store.page(session_id, view="ui", limit=PAGE_LIMIT, newest=True)
    return await _paged(session.model_dump_json, session.events, session_id, "ui", PAGE_LIMIT, newest=True)


@api.delete("/sessions/{session_id}", status_code=204, responses=_errors(401, 404, 409))
async def delete_session(context: Ctx, user: User, session_id: SessionId) -> Response:
    """Delete a session and its log (409 while a run on it is going on, in any process)."""
    await _owned(context, session_id, user)
    if context.runs.get(session_id) is not None:
        raise SessionBusy(session_id, _RUN_GOING_ON)
    try:
        await context.store.delete(session_id, user=user)
    except SessionBusy as exc:
        raise SessionBusy(session_id, _RUN_GOING_ON) from exc
    context.relay.session_deleted(session_id)
    return Response(status_code=204)


@api.get("/sessions/{session_id}/events", response_model=list[Event], responses=_errors(401, 404, 422))
async def list_events(
    context: Ctx,
    user: User,
    session_id: SessionId,
    view: View = "ui",
    after_seq: Annotated[int, Query(ge=0, le=MAX_SEQ)] = 0,
    before_seq: Annotated[int | None, Query(ge=1, le=MAX_SEQ)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = PAGE_LIMIT,
) -> Response:
    """A page of the session's events of `view` (`prompt`, `ui`, `all`), as a JSON array.

    The first `limit` events after `after_seq`; with `before_seq`, the last `limit` events
    before it. A full page links the next one (`Link: <...>; rel="next"`, or `rel="prev"`
    reading backward); a page that reaches the log's end holds the pending (partial) events.
    """
    await _owned(context, session_id, user)
    newest = before_seq is not None
    events = await context.store.page(session_id, view=view, after_seq=after_seq, before_seq=before_seq, limit=limit,
                                      newest=newest)
    return await _paged(partial(EVENTS_ADAPTER.dump_json, events), events, session_id, view, limit, newest=newest)


async def _paged(
    encode: Callable[[], bytes | str], events: list[Event], session_id: str, view: View, limit: int, *, newest: bool
) -> Response:
    """Answer what `encode` makes (in a worker thread for a long page), linking the next page when this one is full."""
    stored = [e.seq for e in events if e.seq is not None and not e.partial]
    headers = {}
    if len(stored) >= limit:
        cursor, rel = (f"before_seq={stored[0]}", "prev") if newest else (f"after_seq={stored[-1]}", "next")
        headers["Link"] = f'</v1/sessions/{session_id}/events?view={view}&{cursor}&limit={limit}>; rel="{rel}"'
    content = await asyncio.to_thread(encode) if len(events) > _ON_LOOP else encode()
    return Response(content, media_type="application/json", headers=headers)


@api.get(
    "/sessions/{session_id}/events/stream",
    responses={200: {"description": "SSE: stored events after Last-Event-ID, then live ones until the run ends "
                                    "(with `follow=true`: across runs, until the client leaves)",
                     "content": _EVENT_STREAM}, **_errors(401, 404, 422)},
)
async def stream_events(
    context: Ctx,
    user: User,
    session_id: SessionId,
    after_seq: Annotated[int, Query(ge=0, le=MAX_SEQ)] = 0,
    last_event_id: Annotated[int | None, Header(alias="Last-Event-ID", ge=0, le=MAX_SEQ)] = None,
    follow: bool = False,
) -> Response:
    """Every stored event after `Last-Event-ID` (or `after_seq`), the live ones not stored yet, then what comes.

    Without `follow`, the stream ends with the run going on (at once when none does); with
    `follow=true` it stays open across runs, whoever starts them, in any process sharing the
    store, until the client leaves, the session is deleted or the server stops.
    """
    after = last_event_id if last_event_id is not None else after_seq
    return await open_event_stream(context, session_id, user, after=after, follow=follow)


async def open_event_stream(
    context: ServerContext, session_id: str, user: str, *, after: int, follow: bool
) -> Response:
    """`stream_events`' answer to `user` (also the light path's, `hot_routes`)."""
    await _owned(context, session_id, user)
    hub, here = context.runs.hub(session_id), context.runs.get(session_id) is not None
    if not follow and not here and await context.relay.run_active(session_id):  # a run in another process
        hub.run_started()
    # Subscribe before reading the log: an event is stored before its stored copy is
    # published, so each one is in the log, in the subscription, or in both (repeats are
    # dropped by seq); a reader bound to a run that is over is closed at once.
    subscription = hub.subscribe(follow=follow)
    try:
        first = await context.store.page(session_id, view="all", after_seq=after, limit=REPLAY_PAGE)
    except BaseException:
        subscription.close()
        raise
    here = context.runs.get(session_id) is not None
    watch = partial(context.relay.watch, hub) if not subscription.closed and not here else None
    pages = _pages(context.store, session_id, first)
    return sse_response(replay(pages, subscription, after_seq=after, keepalive=context.keepalive, caught_up=watch))


async def _pages(store: SessionStore, session_id: str, first: list[Event]) -> AsyncIterator[list[Event]]:
    """The stored events from `first` on, a page at a time: a long log is never read whole."""
    page = first
    while True:
        yield page
        stored = [e for e in page if not e.partial]
        if len(stored) < REPLAY_PAGE or stored[-1].seq is None:
            return
        page = await store.page(session_id, view="all", after_seq=stored[-1].seq, limit=REPLAY_PAGE)


@api.post("/sessions/{session_id}/cancel", status_code=202, response_model=CancelAccepted,
          responses=_errors(401, 404, 409, 503))
async def cancel_run(context: Ctx, user: User, session_id: SessionId) -> Response:
    """Cancel the run going on in this session, in this server process or any other: 202, or 404 if none runs.

    The run stops within moments with `stop_reason: "cancelled"` (its log says "run
    cancelled"); its own request answers, or its stream ends, as usual.
    """
    await _owned(context, session_id, user)
    if not await context.relay.cancel(session_id):
        return error_response(ErrorBody(error="not_running", message=_NOT_RUNNING.format(session_id)), 404)
    return json_response(CancelAccepted(session_id=session_id), 202)


@api.post("/sessions/{session_id}/prepare", response_model=Event, responses=_errors(401, 404, 413, 422))
async def prepare_event(
    context: Ctx, user: User, session_id: SessionId, event: Event, request: Request
) -> Response:
    """Add an event's parts to its author's pending (partial) event; answer the partial event.

    The store fills `id`, `session_id`, `seq` and `created_at`; values sent for them are ignored.
    Only the user prepares: `author` must be `"user"`, or an author the app declares
    (`create_app(prepare_authors=...)`), since the parts join that author's next event (the
    agent's message, a tool's result) as though it wrote them. A tool result must answer a
    tool call prepared before it that has no result yet. Either way 422, and nothing is kept.
    An image or file part naming a `blob` (without `data`) the session does not hold answers 422.
    """
    await _owned(context, session_id, user)
    if event.author not in request.app.state.prepare_authors:
        raise InvalidEvent(_NOT_PREPARABLE.format(event.author, sorted(request.app.state.prepare_authors)),
                           field="author")
    event = event.model_copy(update={"id": None, "session_id": None, "seq": None, "created_at": None})
    await check_held(context.store, session_id, event)
    return json_response(event_without_stored_bytes(await context.store.prepare_event(session_id, event)))


@api.post("/sessions/{session_id}/runs", response_model=RunResult, responses=_RUN_ANSWERS)
async def start_run(context: Ctx, user: User, session_id: SessionId, body: RunBody, request: Request) -> Response:
    """Run the agent on `prompt` in this session: SSE of its events, or its `RunResult` as JSON.

    `attachments` (images, files: base64 `data` or a `url`) join the prompt's message and
    its log entry; `documents` reach the model for this run only and are never stored.
    The run's deps come from the app's deps factory, if any, before anything is recorded
    (a factory that fails answers 500 `deps_failed`, or its own `HTTPException`).
    """
    deps = DepsContext(request, user, session_id, "run") if context.deps is not None else None
    return await answer_run_body(context, session_id, user, body, sse=wants_sse(request), deps=deps)


async def answer_run_body(
    context: ServerContext, session_id: str, user: str, body: RunBody, *, sse: bool, deps: DepsContext | None = None
) -> Response:
    """Start the run `body` asks for and answer it (also the light path's, which has no `deps`).

    A run asking for more than its answer (`body.service()`: a background run, a webhook, a
    busy strategy) goes to the app's `ServiceRuns`.
    """
    if deps is not None:
        await _owned(context, session_id, user)  # the factory is called for the session's owner only

    async def build(store: SessionStore) -> PromptRequest:
        prompt = body.message() if body.attachments else body.prompt
        run = prompt_request(context.agent, store, session_id, user, prompt, body.document_parts())
        return await apply_deps(context.deps, deps, run) if deps is not None else run

    if body.service():
        assert context.service is not None  # create_app sets it
        return await context.service.take(session_id, user, body, build, sse=sse)
    return await _answer_run(context, session_id, user, await build(context.store), sse=sse)


@api.post("/sessions/{session_id}/resume", response_model=RunResult, responses=_RUN_ANSWERS)
async def resume_run(context: Ctx, user: User, session_id: SessionId, body: ResumeBody, request: Request) -> Response:
    """Resume an interrupted run: `{"approvals": {call_id: true | false | "reason" | {"args": {...}}}}`.

    `{"args": {...}}` runs the call with these arguments instead of the model's. A session
    with nothing to resume (no paused call, and the model has answered) answers 409
    `nothing_paused` and runs nothing (`resumes.py`). Approvals naming a call that is not
    paused in the session, or edited arguments that do not fit the tool's schema, answer 422
    and record nothing. Each paused call they decide gets a line in the log before it runs:
    who approved or denied it (or edited it), and when; the resume writes it while it holds
    the session, so one that answers 409 `busy` records nothing. The deps factory, if any,
    runs before anything is written: one that fails records nothing.
    """
    try:
        approvals = parse_approvals(body.answers())
    except ConfigError as exc:
        return _invalid_approvals(exc)
    await _owned(context, session_id, user)  # before its log is read; and the deps factory is the owner's only
    if context.runs.get(session_id) is None:  # else: 409 `busy` below, whatever the log says mid-run
        check_resumable(session_id, await log_since_last_answer(context.store, session_id), approvals)
    try:
        run = resume_request(context.agent, context.store, session_id, user, approvals)
    except ConfigError as exc:
        return _invalid_approvals(exc)
    # Before anything is recorded: a factory that fails leaves the log as it was.
    run = await apply_deps(context.deps, DepsContext(request, user, session_id, "resume"), run)
    try:
        return await _answer_run(context, session_id, user, run, sse=wants_sse(request))
    except ConfigError as exc:
        return _invalid_approvals(exc)


def _invalid_approvals(exc: ConfigError) -> Response:
    # The approvals are the only input of a resume: a ConfigError is about them.
    return error_response(ErrorBody(error="invalid_approvals", message=redact(str(exc))), 422)


async def _answer_run(context: ServerContext, session_id: str, user: str, run: PromptRequest, *, sse: bool) -> Response:
    """Start `run` and answer it: SSE, or its result as JSON.

    The run itself checks that `user` owns the session as it opens it (404 otherwise): the
    route reads nothing first. A run that finds the session busy answers 409 only to its
    owner; to anyone else a held session is as missing as any other of theirs (404).
    """
    try:
        channel = context.runs.start(session_id, run)
        if sse:
            return await stream_channel(channel, context.keepalive)
        return json_response(without_stored_bytes(await channel.outcome()))
    except SessionBusy:
        await _owned(context, session_id, user)
        raise


async def stream_channel(channel: RunChannel, keepalive: float) -> Response:
    """The run's events as SSE (a run that failed before it wrote anything: a plain HTTP error)."""
    subscription = channel.hub.subscribe()
    await channel.started()
    if channel.published == 0 and channel.error is not None:
        # It failed before writing anything (not found, busy in another process): a plain HTTP error.
        subscription.close()
        raise channel.error
    return sse_response(subscription_frames(subscription, keepalive=keepalive))


@public.get("/healthz", response_model=Health)
async def healthz() -> Health:
    """Liveness: answers 200 while the process serves requests (no token needed)."""
    return Health(version=__version__)


@public.get("/", include_in_schema=False)
async def web_page() -> FileResponse:
    """Serve the web page (no token needed to load it; it asks for one if the API wants it)."""
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html", headers={"Cache-Control": "no-cache"})
