"""`GET /readyz`: whether this server can serve sessions now, for a load balancer or an orchestrator.

`/healthz` is liveness: it answers while the process serves requests, whatever its store
does, so restarting the process on its answer never helps a database that is down.
`/readyz` asks the session store: 200 when it answers, 503 `store_unavailable` (with
`Retry-After`) when it does not, so traffic goes elsewhere until the database is back, and
503 `draining` once the server has begun to stop (its runs finishing: `hookline serve --drain`). The
probe looks up a session id no session can have (one that starts with `-`), which every
store answers with one indexed read; the store's own error goes to the server log as one
warning line, since a probe that fails every few seconds would fill it with tracebacks.
"""

from __future__ import annotations

from contextlib import suppress

from fastapi import APIRouter, Request, Response

from hookline import __version__
from hookline.errors import SessionNotFound, StoreError
from hookline.server.errors import RETRY_AFTER, STORE_UNAVAILABLE, error_response, json_response, logger
from hookline.server.schemas import ErrorBody, Health

__all__ = ["readiness"]

readiness = APIRouter(tags=["server"])

_PROBE = "-hookline-readiness-probe"


@readiness.get("/readyz", response_model=Health, responses={503: {"model": ErrorBody}})
async def readyz(request: Request) -> Response:
    """Readiness: 200 when the session store answers, else 503; 503 `draining` once the server is stopping."""
    if request.app.state.hookline.runs.closing:  # runs drain: send new ones elsewhere
        body = ErrorBody(error="draining", message="this server is stopping; its runs are finishing")
        return error_response(body, 503, {"Retry-After": RETRY_AFTER})
    try:
        with suppress(SessionNotFound):  # the answer expected: the store answered
            await request.app.state.hookline.store.get(_PROBE, with_events=False)
    except StoreError as exc:
        logger.warning("not ready: %s", exc)
        body = ErrorBody(error="store_unavailable", message=STORE_UNAVAILABLE)
        return error_response(body, 503, {"Retry-After": RETRY_AFTER})
    return json_response(Health(version=__version__))
