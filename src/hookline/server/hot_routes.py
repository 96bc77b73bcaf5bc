"""The light path of the requests every run makes: `POST /v1/sessions`, `POST /v1/sessions/{id}/runs`, and its viewers'.

FastAPI's way to a route (its exception and exit-stack middlewares, matching every route
in turn, building a `Request`, solving each dependency, parsing and validating the body,
building the answer) cost a served run about as much CPU as the run's own loop. This
ASGI layer, the innermost of the app's middlewares (tokens and body limits are checked
before it), answers these requests itself with the routes' own functions
(`routes.create_in_store`, `routes.answer_run_body`, and for a viewer's
`GET /v1/sessions/{id}/events/stream` without a query, `routes.open_event_stream`), and
hands every other request on.

It never answers differently from the routes. A request it is not sure of goes on to
FastAPI untouched, its body replayed: a body that is not a JSON object of the route's
schema (FastAPI's 422 lists the problems), a content type other than JSON, a chunked
body, a run whose deps a factory builds (the route checks the owner before calling it),
a stream with a query string or a `Last-Event-ID` other than one number in range.
Failures are answered by the same table as the routes' (`errors.failure_response`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hookline.server.auth import current_user
from hookline.server.errors import failure_response
from hookline.server.routes import ServerContext, answer_run_body, create_in_store, open_event_stream
from hookline.server.schemas import MAX_SEQ, CreateSession, RunBody
from hookline.server.sse import wants_sse

__all__ = ["HotRoutes"]

_RUNS = re.compile(r"^/v1/sessions/([^/]+)/runs$")
_STREAM = re.compile(r"^/v1/sessions/([^/]+)/events/stream$")
_SEQ_DIGITS = len(str(MAX_SEQ))
_JSON_TYPES = (b"application/json",)


class HotRoutes:
    """Answer `POST /v1/sessions` and `POST /v1/sessions/{id}/runs` without FastAPI's machinery.

    Args:
        app: The FastAPI app (and its inner middlewares): every other request goes there.
        context: The routes' context (`app.state.hookline`).

    """

    def __init__(self, app: ASGIApp, context: ServerContext) -> None:
        self.app = app
        self.context = context

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one of the requests, or hand the request on."""
        if scope["type"] == "http" and scope["method"] == "GET" and (stream := _stream_of(scope)) is not None:
            await self._stream(scope, receive, send, *stream)
        elif scope["type"] == "http" and scope["method"] == "POST":
            await self._post(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _stream(self, scope: Scope, receive: Receive, send: Send, session_id: str, after: int) -> None:
        """Answer a viewer's stream of the session's events after `after`."""
        respond = partial(open_event_stream, self.context, session_id, after=after, follow=False)
        await _answer(scope, receive, send, Request(scope, receive), respond)

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a session's creation or a run, or hand the request on."""
        route = _route_of(scope)
        if route is None or (route != "create" and self.context.deps is not None) or not _plain_json(scope):
            await self.app(scope, receive, send)
            return
        messages, body = await _read_body(receive)
        parsed = _parse(CreateSession if route == "create" else RunBody, body, allow_empty=route == "create")
        if parsed is None:  # FastAPI answers it, with its own words
            await self.app(scope, _replay(messages, receive), send)
            return
        request = Request(scope, _replay([], receive))

        async def respond(user: str) -> Response:
            if isinstance(parsed, CreateSession):
                return await create_in_store(self.context, user, parsed)
            return await answer_run_body(self.context, route, user, parsed, sse=wants_sse(request))

        await _answer(scope, receive, send, request, respond)


async def _answer(
    scope: Scope, receive: Receive, send: Send, request: Request, respond: Callable[[str], Awaitable[Response]]
) -> None:
    """Answer with what `respond` makes for the request's user; any failure with the routes' answer."""
    try:
        response = await respond(await current_user(request))
    except Exception as exc:  # every failure gets the routes' answer
        response = failure_response(scope["method"], scope["path"], exc)
    await response(scope, receive, send)


def _route_of(scope: Scope) -> str | None:
    """"create" for `POST /v1/sessions`, the session id for its runs, None for anything else."""
    path = scope["path"]
    if path == "/v1/sessions":
        return "create"
    found = _RUNS.match(path)
    return found.group(1) if found else None


def _stream_of(scope: Scope) -> tuple[str, int] | None:
    """`(session id, Last-Event-ID or 0)` for a stream of events without a query; None for anything else."""
    found = _STREAM.match(scope["path"])
    if found is None or scope["query_string"]:
        return None
    ids = [value for name, value in scope["headers"] if name == b"last-event-id"]
    if not ids:
        return found.group(1), 0
    if len(ids) > 1 or not (ids[0].isdigit() and len(ids[0]) <= _SEQ_DIGITS) or int(ids[0]) > MAX_SEQ:
        return None  # FastAPI says what is wrong with it
    return found.group(1), int(ids[0])


def _plain_json(scope: Scope) -> bool:
    """Whether the request declares its length and a JSON body (or none), as the light path reads it."""
    length = content_type = None
    for name, value in scope["headers"]:
        if name == b"content-length":
            length = value
        elif name == b"content-type":
            content_type = value.split(b";")[0].strip().lower()
        elif name == b"transfer-encoding":
            return False
    return length is not None and (content_type is None or content_type in _JSON_TYPES)


async def _read_body(receive: Receive) -> tuple[list[Message], bytes]:
    """The request's messages (to replay) and its body (the body limit has been checked before)."""
    messages, parts = [], []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return messages, b"".join(parts)


def _parse(schema: type[BaseModel], body: bytes, *, allow_empty: bool) -> Any:
    """The body as `schema`, as FastAPI validates it (JSON decoded first); None when FastAPI should answer."""
    if not body.strip():
        return schema() if allow_empty else None
    try:
        return schema.model_validate(json.loads(body))
    except (ValueError, ValidationError):  # not JSON, or not the schema (ValidationError is a ValueError)
        return None


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A `receive` that answers `messages` first, then reads on (a disconnect still reaches the app)."""
    pending = list(messages)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed
