"""The inspector's routes: session titles, status and search, timelines and traces, model calls, forks, cases.

Each reads the session's log (`hookline.server.inspection`) or copies it
(`hookline.server.forking`); like every `/v1` route it takes the user from the token and
answers 404 for another user's session exactly as for a missing one. A fork, a model call
or a case that the log cannot give answers 422 with a message that says why and what would do.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response
from pydantic import TypeAdapter

from hookline._redact import redact
from hookline.errors import ConfigError
from hookline.evals import Case
from hookline.evals._export import CASE_VIEW, case_json
from hookline.events import TITLE_EVENTS, Event, title_of
from hookline.models import ToolSpec
from hookline.server.errors import error_response, json_response
from hookline.server.forking import fork_session
from hookline.server.inspect_schemas import ForkBody, ModelCall, SessionState, SessionSummary, Timeline, Traces
from hookline.server.inspection import model_calls, prompts_of, rebuild_call, runs_of, status_of
from hookline.server.log_window import AFTER, events_before, events_within, whole_runs
from hookline.server.recorded_state import SCAN, recorded_states
from hookline.server.routes import CUT_HEADER, Ctx, ServerContext, SessionId, User
from hookline.server.schemas import MAX_SEQ, ErrorBody
from hookline.sessions import Session, SessionMatch

__all__ = ["CASE_MOST_EVENTS", "CUT_HEADER", "FOUND_MOST", "inspect_api"]

_SUMMARIES: TypeAdapter[list[SessionSummary]] = TypeAdapter(list[SessionSummary])
_TOOLS: TypeAdapter[list[ToolSpec]] = TypeAdapter(list[ToolSpec])
_TAIL = 50
"""The last events of a session read for its status in the list (waiting calls, how its last run ended)."""
_AROUND = 40
"""Characters of context on each side of a search match in its snippet."""
FOUND_MOST = 50
"""The most sessions the list answers, with a search or without: the newest (that mention it)."""
_LINES_AT_ONCE = 4
"""Sessions of the list read at once: with PostgreSQL each takes a pooled connection, and runs need the others."""
CASE_MOST_EVENTS = 10_000
"""The most events of a log read for its case (about 0.2 s of work); a longer one answers 422 `too_long`."""
_TOO_LONG = ("session {id!r} holds more than {most} events, more than this server reads for a case; make its case "
             "with the command line, on this server's store: hookline sessions export {arg} --as-case --db URL")


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: {"model": ErrorBody} for code in codes}


inspect_api = APIRouter(prefix="/v1", tags=["inspector"])
Seq = Annotated[int, Path(ge=1, le=MAX_SEQ, description="an event's seq")]


@inspect_api.get("/inspect/sessions", response_model=list[SessionSummary], responses=_errors(401, 422))
async def session_summaries(
    context: Ctx, user: User,
    q: Annotated[str, Query(max_length=200, description="words to find in titles, ids and messages")] = "",
) -> Response:
    """The user's newest sessions, newest first, with titles (first prompts) and status; `q` keeps those mentioning it.

    The newest `FOUND_MOST` at most, so that a poll of the page costs a bounded number of reads
    however many sessions the user has: the store's `list`, or with `q` its `search`, each one
    query. When older ones were left out, the header `CUT_HEADER` says how many are answered (a
    search finds the older ones). Each session's status costs two small reads (its last events,
    its first one) and a check of its run lock; a title not known yet, a third (the first events
    of its prompt view).
    """
    needle = q.strip()
    found = await _newest(context, user, needle, FOUND_MOST + 1)  # one more: whether any is left out
    lines = await _lines(context, found[:FOUND_MOST], needle)
    cut = {CUT_HEADER: str(FOUND_MOST)} if len(found) > FOUND_MOST else None
    return json_response(_SUMMARIES.dump_json(lines), headers=cut)


async def _newest(context: ServerContext, user: str, needle: str, most: int) -> list[SessionMatch]:
    """The user's newest `most` sessions, newest first: those that mention `needle`, if any."""
    app = context.agent.app
    if needle:
        return await context.store.search(needle, app=app, user=user, limit=most)
    return [SessionMatch(s, None) for s in await context.store.list(app=app, user=user, limit=most)]


async def _lines(context: ServerContext, found: list[SessionMatch], needle: str) -> list[SessionSummary]:
    """The lines of `found`, in order, `_LINES_AT_ONCE` read at a time (each holds a connection while it reads)."""
    gate = asyncio.Semaphore(_LINES_AT_ONCE)

    async def line(match: SessionMatch) -> SessionSummary:
        async with gate:
            return await _line(context, match, needle)

    return await asyncio.gather(*(line(match) for match in found))


async def _line(context: ServerContext, match: SessionMatch, needle: str) -> SessionSummary:
    """A session's line of the list: with a `needle`, the words around its mention."""
    title = await _title(context, match.session)
    snippet = _snippet(needle, title, match) if needle else None
    return await _summary(context, match.session, title, snippet)


@inspect_api.get("/inspect/sessions/{session_id}", response_model=SessionSummary, responses=_errors(401, 404))
async def session_summary(
    context: Ctx, user: User, session_id: SessionId
) -> Response:
    """One session's line of the list: its title, whether a run holds it, the calls waiting for approval."""
    session = await context.store.get(session_id, user=user, with_events=False)
    return json_response(await _summary(context, session, await _title(context, session), None))


async def _title(context: ServerContext, session: Session) -> str:
    """The session's title: known already, or read from the first events of its prompt view (and kept)."""
    title = context.titles.get(session)
    if title is None:
        title = title_of(await context.store.page(session.id, view="prompt", limit=TITLE_EVENTS))
        context.titles.keep(session, title)
    return title


async def _summary(context: ServerContext, session: Session, title: str, snippet: str | None) -> SessionSummary:
    waiting, last_run = status_of(await context.store.page(session.id, view="all", limit=_TAIL, newest=True))
    first = await context.store.page(session.id, view="all", limit=1)
    origin = first[0].metadata.get("copied_from") if first else None
    return SessionSummary(id=session.id, title=title, created_at=session.created_at, updated_at=session.updated_at,
                          running=await context.relay.run_active(session.id), waiting=waiting, last_run=last_run,
                          snippet=snippet, forked_from=str(origin["session_id"]) if isinstance(origin, dict) else None)


def _snippet(needle: str, title: str, match: SessionMatch) -> str:
    """The words around the first mention of `needle`: in the title, else the id, else the text the store found."""
    folded = needle.casefold()
    for text in (title, match.session.id, match.text or ""):
        at = text.casefold().find(folded)
        if at >= 0:
            return _around(text, at, len(needle))
    # The store folds case its own way (PostgreSQL: as its locale does): its text, from the start.
    return _around(match.text or match.session.id, 0, 0)


def _around(text: str, at: int, length: int) -> str:
    """The words of `text` from `_AROUND` characters before `at` to as many after `at + length`, on one line."""
    start, end = max(0, at - _AROUND), min(len(text), at + length + _AROUND)
    line = " ".join(text[start:end].split())
    return ("…" if start else "") + line + ("…" if end < len(text) else "")


@inspect_api.get("/sessions/{session_id}/state", response_model=SessionState, responses=_errors(401, 404, 422))
async def session_state(
    context: Ctx, user: User, session_id: SessionId,
    at_seq: Annotated[int | None, Query(ge=1, le=MAX_SEQ, description="the state as recorded at this event")] = None,
) -> Response:
    """The session's `state.data` alone (the session itself comes with a page of its events).

    With `at_seq`, the state as recorded at that event, and the one recorded before it: what
    runs with `StatusOptions(state=True)` keep (422 where none is on record).
    """
    session = await context.store.get(session_id, user=user, with_events=False)
    if at_seq is None:  # {"session_id", "state"}: the fields of a state at an event left out
        return json_response(SessionState(session_id=session_id, state=session.state).model_dump_json(
            exclude_none=True).encode())
    found = await recorded_states(context.store, session_id, at_seq)
    if not found:
        message = (f"no state is on record at or before event {at_seq} (within the {SCAN} events before it): "
                   "a run records its state with StatusOptions(state=True)")
        return error_response(ErrorBody(error="state_not_recorded", message=message), 422)
    (recorded_seq, state), *earlier = found
    return json_response(SessionState(session_id=session_id, state=state, at_seq=at_seq, recorded_seq=recorded_seq,
                                      previous=earlier[0][1] if earlier else None))


@inspect_api.get("/inspect/tools", response_model=list[ToolSpec], responses=_errors(401))
async def tools(context: Ctx, user: User) -> Response:
    """The agent's tools with their JSON schemas (the page checks edited arguments against them as they are typed)."""
    return json_response(_TOOLS.dump_json(list(context.agent.tool_catalog().specs)))


@inspect_api.get("/sessions/{session_id}/timeline", response_model=Timeline, responses=_errors(401, 404, 422))
async def timeline(context: Ctx, user: User, session_id: SessionId) -> Response:
    """The session's runs, each with its model and tool calls over time, their tokens and durations.

    Those of its latest 5,000 events (`complete` False when the log holds runs before them).
    """
    events, complete = await _latest(context, session_id, user)
    return json_response(Timeline(session_id=session_id, runs=runs_of(events), complete=complete))


@inspect_api.get("/sessions/{session_id}/traces", response_model=Traces, responses=_errors(401, 404, 422))
async def traces(context: Ctx, user: User, session_id: SessionId) -> Response:
    """The session's prompts, each with one trace across its resumes: runs, model and tool calls, hooks, approvals.

    Those of its latest 5,000 events (`complete` False when the log holds prompts before them).
    """
    events, complete = await _latest(context, session_id, user)
    return json_response(Traces(session_id=session_id, prompts=prompts_of(events), complete=complete))


@inspect_api.get("/sessions/{session_id}/model-calls/{seq}", response_model=ModelCall,
                 responses=_errors(401, 404, 422))
async def model_call(context: Ctx, user: User, session_id: SessionId, seq: Seq) -> Response:
    """The model call that event `seq` belongs to ("calling model" line, model status line or answer).

    What it was sent (messages, tools, settings) is rebuilt from the log and the agent; its
    `notes` say where that may differ from what the provider got (from the 5,000 events
    before it at most).
    """
    await context.store.get(session_id, user=user, with_events=False)
    events, complete = await events_before(context.store, session_id, seq + 1)
    events += await context.store.page(session_id, view="all", after_seq=seq, limit=AFTER)
    call = next((c for c in model_calls(events) if seq in c.seqs), None)
    if call is not None:
        return json_response(rebuild_call(context.agent, session_id, events, call, from_start=complete))
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

    Then `POST /v1/sessions/{new id}/resume` with `{"approvals": {}}` runs the agent from there (409
    `nothing_paused` when the fork ends with an answer: nothing to run).
    """
    source = await context.store.get(session_id, user=user, with_events=False)
    try:
        created = await fork_session(context.store, source, body, user)
    except ConfigError as exc:
        return error_response(ErrorBody(error="invalid_fork", message=redact(str(exc))), 422)
    return json_response(created, 201, {"Location": f"/v1/sessions/{created.id}"})


@inspect_api.get("/sessions/{session_id}/case", response_model=Case, responses=_errors(401, 404, 422))
async def session_case(
    context: Ctx, user: User, session_id: SessionId,
    name: Annotated[str | None, Query(min_length=1, max_length=200,
                                      description="the case's name; the session's id if not given")] = None,
) -> Response:
    """The eval case the session makes, as a file to save: what `hookline sessions export ID --as-case` prints.

    The log is read a page at a time, at most `CASE_MOST_EVENTS` events: a longer one answers
    422 `too_long` (the command line makes its case), one without a prompt 422 `no_prompt`.
    """
    await context.store.get(session_id, user=user, with_events=False)
    events = await events_within(context.store, session_id, CASE_VIEW, CASE_MOST_EVENTS)
    if events is None:
        message = _TOO_LONG.format(id=session_id, most=CASE_MOST_EVENTS, arg=shlex.quote(session_id))
        return error_response(ErrorBody(error="too_long", message=redact(message)), 422)
    try:
        text = await asyncio.to_thread(case_json, events, name or session_id, session_id)
    except ConfigError as exc:
        return error_response(ErrorBody(error="no_prompt", message=redact(str(exc))), 422)
    # A session made through the library may have any id; the header takes only a plain name.
    file = re.sub(r"[^A-Za-z0-9_.:-]", "_", session_id)
    return Response(text, media_type="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{file}.case.json"'})


async def _latest(context: ServerContext, session_id: str, user: str) -> tuple[list[Event], bool]:
    """The user's session's latest events, from the first run that begins among them; whether they are the whole log."""
    await context.store.get(session_id, user=user, with_events=False)
    events, complete = await events_before(context.store, session_id)
    return (events, True) if complete else (whole_runs(events), False)
