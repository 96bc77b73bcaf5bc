"""The served agent's sessions as read-only MCP resources, one per session of the caller.

`hookline://sessions/{id}` (the id percent-encoded) is a session of the agent's store. The
list holds the caller's newest `LISTED` sessions of the agent's app, each named by the first
line of its first prompt (one small read per session listed; never its whole log). Reading one
answers JSON of its log in the `ui` view (messages and status lines, as a front end shows
them): the newest `PAGE_EVENTS` events, and under `"earlier"` the URI of the page before them
(`?before_seq=N`), null at the log's start, so a long session is read a page at a time. A
session of another user is not found, as an unknown one is.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

import mcp_types as types
from mcp.shared.exceptions import MCPError

from hookline.errors import SessionNotFound
from hookline.events import TITLE_EVENTS, Event, title_of
from hookline.sessions import Session, SessionStore

__all__ = ["LISTED", "PAGE_EVENTS", "TEMPLATE", "list_sessions", "read_session", "session_uri", "templates"]

LISTED = 100
"""The most sessions `resources/list` answers: the caller's newest."""
PAGE_EVENTS = 200
"""The most events one read of a session answers: its log's newest (before `before_seq`)."""
TEMPLATE = "hookline://sessions/{session_id}"
"""The URI template of a session's resource."""

_SCHEME, _HOST = "hookline", "sessions"
_MIME = "application/json"
_READS = (f"JSON of its log in the ui view: its newest {PAGE_EVENTS} events, and under 'earlier' the URI "
          "of the page before them (null at the log's start)")


def session_uri(session_id: str, before_seq: int | None = None) -> str:
    """The resource URI of session `session_id` (the page of its log before `before_seq`, when given)."""
    uri = f"{_SCHEME}://{_HOST}/{quote(session_id, safe='')}"
    return uri if before_seq is None else f"{uri}?before_seq={before_seq}"


async def list_sessions(store: SessionStore, *, app: str, user: str) -> types.ListResourcesResult:
    """The newest `LISTED` sessions of `app` owned by `user`, newest first, as resources."""
    sessions = await store.list(app=app, user=user, limit=LISTED)
    return types.ListResourcesResult(resources=[await _resource(store, s) for s in sessions])


def templates() -> types.ListResourceTemplatesResult:
    """The one template: a session by its id (also those older than the list holds)."""
    template = types.ResourceTemplate(uri_template=TEMPLATE, name="session", title="A session's log",
                                      description=f"The log of one of your sessions ({_READS})", mime_type=_MIME)
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def read_session(store: SessionStore, uri: str, *, user: str) -> types.ReadResourceResult:
    """A page of the log of the session `uri` names, if `user` owns it.

    Raises:
        MCPError: `INVALID_PARAMS`: `uri` names no session of `user` ("Resource not found"),
            or its `before_seq` is not a positive integer.
    """
    session_id, before_seq = _parse(uri)
    try:
        session = await store.get(session_id, user=user, with_events=False)
        page = await store.page(session_id, view="ui", before_seq=before_seq, limit=PAGE_EVENTS, newest=True)
    except SessionNotFound:
        raise _not_found(uri) from None
    text = json.dumps(_log(session, page, before_seq), ensure_ascii=False)
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=_MIME, text=text)])


async def _resource(store: SessionStore, session: Session) -> types.Resource:
    title = await _title(store, session.id)
    updated = f", last changed {session.updated_at.isoformat()}" if session.updated_at else ""
    return types.Resource(uri=session_uri(session.id), name=title or session.id, title=title or None,
                          description=f"Session {session.id!r}{updated}: {_READS}", mime_type=_MIME)


async def _title(store: SessionStore, session_id: str) -> str:
    """The first line of the session's first prompt, shortened; empty when it has none (or is gone)."""
    try:
        return title_of(await store.page(session_id, view="prompt", limit=TITLE_EVENTS))
    except SessionNotFound:  # deleted since it was listed
        return ""


def _parse(uri: str) -> tuple[str, int | None]:
    """The session id and `before_seq` of a session's URI."""
    parts = urlsplit(uri)
    session_id = unquote(parts.path[1:])
    if parts.scheme != _SCHEME or parts.netloc != _HOST or not session_id or "/" in parts.path[1:] or parts.fragment:
        raise _not_found(uri)
    query = parse_qs(parts.query, keep_blank_values=True)
    if set(query) - {"before_seq"}:
        raise MCPError(types.INVALID_PARAMS, f"a session's URI takes only ?before_seq=N, not {parts.query!r}: "
                       f"read {session_uri(session_id)} for its newest events")
    if "before_seq" not in query:
        return session_id, None
    given = query["before_seq"]
    if len(given) != 1 or not given[0].isdigit() or int(given[0]) < 1:
        raise MCPError(types.INVALID_PARAMS, f"before_seq must be one positive integer (the page ends before "
                       f"that event), not {'&'.join(given)!r}: take it from the 'earlier' URI of a page read before")
    return session_id, int(given[0])


def _log(session: Session, page: list[Event], before_seq: int | None) -> dict[str, Any]:
    stored = [e for e in page if not e.partial]
    more = len(stored) == PAGE_EVENTS and (stored[0].seq or 0) > 1
    return {
        "session_id": session.id,
        "created_at": session.created_at.isoformat() if session.created_at else None,
        "updated_at": session.updated_at.isoformat() if session.updated_at else None,
        "view": "ui",
        "before_seq": before_seq,
        "events": [e.model_dump(mode="json") for e in page],
        "earlier": session_uri(session.id, stored[0].seq) if more else None,
    }


def _not_found(uri: str) -> MCPError:
    return MCPError(types.INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri})
