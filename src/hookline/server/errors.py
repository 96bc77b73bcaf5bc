"""How failures become HTTP answers: one table, one error body.

Library errors are converted through `_STATUS` (most specific class first, as httpx's
`map_httpcore_exceptions` does), validation errors become 422 with every problem listed,
and anything unexpected becomes a 500 that names no internals. Every error answer is an
`ErrorBody`: `{"error": code, "message": text, ...}`.

A failing hook answers 500 `hook_failed` (its body names the hook and the point): a hook
is the server owner's code, so its failure is a server error, not the client's; so is a
failing deps factory (500 `deps_failed`, `hookline.server.deps`). A failing
session store answers 503 `store_unavailable` with a message that says only that: what
failed inside (the database, its address, its own error) goes to the server log.

A run that crashes (an exception hookline does not know) is logged once, by its run
(`runs.RunManager`), with its traceback and its session's id; what answers the run (the
request awaiting it, a stream, a protocol surface) gets a `RunCrashed` from it, answers 500
`internal_error` and logs nothing more.

No answer and no log line carries a credential: every message goes through
`hookline._redact.redact`, and the `hookline.server` logger redacts its records (message
and traceback) with `RedactingFilter`, whatever handler the program gives it. A 503 says
when to try again (`Retry-After`): what failed is the store's connection, not the request.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from hookline._redact import RedactingFilter, redact
from hookline.errors import (
    ConfigError,
    HookError,
    HooklineError,
    InvalidEvent,
    ModelError,
    SessionBusy,
    SessionExists,
    SessionNotFound,
    StoreError,
)
from hookline.server.deps import DepsFailed
from hookline.server.schemas import ErrorBody, ValidationIssue

__all__ = [
    "RETRY_AFTER",
    "ProtocolError",
    "STORE_UNAVAILABLE",
    "RedactingFilter",
    "RunCrashed",
    "error_body",
    "error_response",
    "failure_response",
    "install_error_handlers",
    "json_response",
    "status_of",
]

STORE_UNAVAILABLE = "the session store is unavailable; try again later (the server log says why)"
"""The message of every 503 `store_unavailable`: the store's own error stays in the server log."""

RETRY_AFTER = "1"
"""The `Retry-After` (seconds) of a 503: a dropped connection is opened again on the next request."""


logger = logging.getLogger("hookline.server")
logger.addFilter(RedactingFilter())


class ProtocolError(HooklineError):
    """A request a protocol surface cannot take (`hookline.server.protocols`).

    It carries its status, its code and a message saying what to send instead; answered as any
    error, or in the protocol's own error form.
    """

    def __init__(self, message: str, *, status: int = 422, code: str = "invalid_request") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class RunCrashed(HooklineError):
    """A run that failed with an exception hookline does not know (its `__cause__`), logged where it failed.

    The run's task logs the traceback once, naming the session; whoever answers the run
    answers 500 `internal_error` (the message sends the reader to the server log) and does
    not log it again.
    """

    def __init__(self, session_id: str) -> None:
        super().__init__(f"the run on session {session_id!r} failed (see the server log)")
        self.session_id = session_id


_STATUS: tuple[tuple[type[Exception], int, str], ...] = (
    (SessionNotFound, 404, "not_found"),
    (SessionBusy, 409, "busy"),
    (SessionExists, 409, "exists"),
    (InvalidEvent, 422, "invalid_event"),
    (ConfigError, 400, "bad_request"),
    (ModelError, 502, "model_failed"),
    (HookError, 500, "hook_failed"),
    (DepsFailed, 500, "deps_failed"),
    (StoreError, 503, "store_unavailable"),
)
_HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
               413: "too_large"}


def json_response(body: BaseModel | bytes, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """Answer `body` as JSON serialised by pydantic (`model_dump_json` or a `TypeAdapter`), never by hand."""
    content = body.model_dump_json() if isinstance(body, BaseModel) else body
    return Response(content, status_code=status, media_type="application/json", headers=headers)


def error_response(body: ErrorBody, status: int, headers: dict[str, str] | None = None) -> Response:
    """Answer an error: its `ErrorBody` as JSON, keys without a value left out."""
    return json_response(body.model_dump_json(exclude_none=True).encode(), status, headers)


def status_of(exc: BaseException) -> tuple[int, str]:
    """Return the HTTP status and error code for an exception (500 `internal_error` if unknown)."""
    if isinstance(exc, ProtocolError):
        return exc.status, exc.code
    for kind, status, code in _STATUS:
        if isinstance(exc, kind):
            return status, code
    return 500, "internal_error"


def error_body(exc: BaseException) -> tuple[int, ErrorBody]:
    """Return the status and body answering `exc`; unknown errors say nothing about internals."""
    status, code = status_of(exc)
    if code == "internal_error":
        return status, ErrorBody(error=code, message="internal server error (see the server log)")
    if code == "store_unavailable":
        return status, ErrorBody(error=code, message=STORE_UNAVAILABLE)
    body = ErrorBody(error=code, message=redact(str(exc)))
    if isinstance(exc, HookError):
        body.hook, body.point = exc.hook, exc.point
    if isinstance(exc, ModelError):
        body.status_code = exc.status_code
    return status, body


def failure_response(method: str, path: str, exc: Exception) -> Response:
    """The answer to a request that failed with `exc` (a 5xx logged with its traceback), as the handlers give it."""
    if not isinstance(exc, HooklineError):
        logger.error("%s %s failed", method, path, exc_info=exc)
        return error_response(ErrorBody(error="internal_error", message="internal server error (see the server log)"),
                              500)
    status, body = error_body(exc)
    # A protocol error is the request's, not a fault; a crashed run was logged by the run.
    if status >= 500 and not isinstance(exc, ProtocolError | RunCrashed):
        logger.error("%s %s failed: %s", method, path, exc, exc_info=exc)
    return error_response(body, status, {"Retry-After": RETRY_AFTER} if status == 503 else None)


async def _library_error(request: Request, exc: Exception) -> Response:
    return failure_response(request.method, request.url.path, exc)


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    issues = [
        ValidationIssue(loc=[p if isinstance(p, int) else str(p) for p in e.get("loc", ())],
                        msg=str(e.get("msg", "")).removeprefix("Value error, "), type=str(e.get("type", "")))
        for e in exc.errors()
    ]
    summary = "; ".join(f"{'.'.join(map(str, i.loc))}: {i.msg}" for i in issues[:3]) or "invalid request"
    return error_response(ErrorBody(error="invalid_request", message=summary, detail=issues), 422)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    return error_response(ErrorBody(error=code, message=str(exc.detail)), exc.status_code, dict(exc.headers or {}))


async def _unexpected(request: Request, exc: Exception) -> Response:
    return failure_response(request.method, request.url.path, exc)


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers that turn every failure into an `ErrorBody` answer."""
    app.add_exception_handler(HooklineError, _library_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
