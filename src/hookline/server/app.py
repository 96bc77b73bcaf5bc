"""`create_app`: the FastAPI application of a hookline agent (wiring only).

The pieces live beside it: `routes` (the API and the page), `auth` (tokens to users),
`limits` (the body limit), `runs` (runs that outlive requests), `hub` (a session's live
events and their readers), `deps` (each run's deps, built from its request), `relay` (runs
of other processes sharing the store: `watcher` follows their logs, `live_bus` carries their
live events over PostgreSQL; and cancel), `sse` (the stream encoder),
`errors` (failures to answers), `audit` (approvals and failures noted in the log),
`blob_routes` (a session's stored images and files), `inspect_routes` (the
inspector's routes: titles, timelines, model calls, forks), `page_files` (the web page's
files, compressed), `children` (the sessions of a session's sub-agents), `compactions`
(undoing a compaction), `readiness` (`/readyz`), `hot_routes` (the light path of the two
requests every run makes), `background` (runs with ids: background runs, busy strategies,
`GET /v1/runs/{id}`) and `webhooks`; the protocols (AG-UI, the AI SDK, A2A) in `protocols/`.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.routing import BaseRoute

from hookline import __version__
from hookline.agent import Agent
from hookline.errors import ConfigError
from hookline.server.auth import AuthMiddleware, tokens_from_env
from hookline.server.background import BackgroundRuns, runs_api
from hookline.server.blob_routes import blob_api
from hookline.server.children import children_api
from hookline.server.compactions import compactions_api
from hookline.server.deps import DepsFactory, checked_deps_factory
from hookline.server.errors import install_error_handlers
from hookline.server.hot_routes import HotRoutes
from hookline.server.inspect_routes import inspect_api
from hookline.server.limits import BodyLimitMiddleware
from hookline.server.metrics import Metrics, metrics_api
from hookline.server.page_files import PageFiles
from hookline.server.protocols.ag_ui import ag_ui_api
from hookline.server.protocols.ai_sdk import ai_sdk_api
from hookline.server.readiness import readiness
from hookline.server.relay import Relay
from hookline.server.routes import CUT_HEADER, STATIC_DIR, ServerContext, api, public
from hookline.server.runs import RunManager
from hookline.server.webhooks import WEBHOOK_SECRET_ENV, Webhooks
from hookline.sessions import SessionStore

__all__ = ["create_app"]


def create_app(
    agent: Agent,
    store: SessionStore | None = None,
    *,
    tokens: Mapping[str, str] | None = None,
    max_body_bytes: int = 1_000_000,
    max_media_body_bytes: int = 20_000_000,
    cors_origins: list[str] | None = None,
    shutdown_grace: float = 10.0,
    deps: DepsFactory | None = None,
    keepalive: float = 15.0,
    prepare_authors: Sequence[str] = (),
    webhooks: Webhooks | None = None,
    queue_limit: int = 16,
) -> FastAPI:
    """Build the HTTP server of `agent`: the `/v1` API, `/healthz`, `/readyz`, `/metrics`, `/openapi.json`, the page.

    With the `a2a` extra installed, it also speaks A2A 1.0: the Agent Card at
    `/.well-known/agent-card.json` and JSON-RPC at `POST /a2a` (`hookline.server.protocols.a2a`).

    Args:
        agent: The agent every run uses.
        store: Where sessions live; default: `agent.session_store`. The app closes it on shutdown.
            With a `PostgresSessionStore`, the app also keeps one LISTEN connection to its
            database, to follow and cancel runs of other processes (`hookline.server.relay`).
        tokens: `{bearer token: user}`. None reads `HOOKLINE_TOKENS` / `HOOKLINE_TOKENS_FILE`
            (see `hookline.server.auth`); empty (or nothing configured): no tokens, every
            request is user `"default"`, so bind to loopback only.
        max_body_bytes: Larger request bodies answer 413 (but those of runs and prepared events).
        max_media_body_bytes: The limit of the bodies that may carry images and files (base64):
            `POST /v1/sessions/{id}/runs` and `/prepare`. Larger ones answer 413.
        cors_origins: Origins allowed to call the API from a browser; None: CORS is off.
        shutdown_grace: Seconds the app lets running runs finish when it shuts down; then it
            cancels them (each records "run cancelled") and waits as long again at most.
        deps: Builds the deps of each run and resume: `deps(context)` (sync or async) gets a
            `DepsContext` (`user`, `session_id`, `request`, `action`) and returns them
            (see `hookline.server.deps`). Needed when the agent has a `deps_type`.
        keepalive: Seconds an event stream may stay silent before it sends a keepalive comment
            (`: keepalive`), so that proxies keep it open.
        prepare_authors: Authors besides `"user"` that `POST .../prepare` accepts (e.g. a front
            end's editor recording the user's edits under its own name). Prepared parts join
            their author's next event, so never name the agent or a tool here.
        webhooks: How runs' webhooks are signed and sent (`hookline.server.webhooks`); None:
            signed with `HOOKLINE_WEBHOOK_SECRET` if it is set (without a secret, a run asking
            for a webhook answers 400), public addresses only.
        queue_limit: Runs that may wait in one session's queue (`"if_busy": "enqueue"`).

    Raises:
        ConfigError: The agent has a `deps_type` and no `deps` factory is given, or
            `prepare_authors` is one string rather than a list of names.

    """
    factory = checked_deps_factory(agent, deps)
    if isinstance(prepare_authors, str):
        raise ConfigError(f"prepare_authors must be a list of author names, not the string {prepare_authors!r}")
    runs = RunManager(grace=shutdown_grace)
    store = store or agent.session_store
    context = ServerContext(agent=agent, store=store, runs=runs, relay=Relay(store, runs), deps=factory,
                            keepalive=keepalive)
    background = BackgroundRuns(context, webhooks or Webhooks(secret=os.environ.get(WEBHOOK_SECRET_ENV) or None),
                                queue_limit=queue_limit)
    context = replace(context, service=background)
    app = FastAPI(
        title="hookline",
        version=__version__,
        summary=f"The HTTP API of the hookline agent {agent.name!r}",
        lifespan=_lifespan(context, background, shutdown_grace),
        redoc_url=None,
    )
    app.state.hookline = context
    app.state.background = background
    app.state.metrics = Metrics(runs, background)
    app.state.prepare_authors = frozenset({"user", *prepare_authors})
    install_error_handlers(app)
    app.include_router(api)
    app.include_router(runs_api)
    app.include_router(metrics_api)
    app.include_router(blob_api)
    app.include_router(inspect_api)
    app.include_router(children_api)
    app.include_router(compactions_api)
    app.include_router(ag_ui_api)
    app.include_router(ai_sdk_api)
    app.include_router(public)
    app.include_router(readiness)
    tokens = (tokens_from_env() or {}) if tokens is None else tokens
    app.router.routes.extend(_a2a_routes(context, secured=bool(tokens)))
    app.mount("/static", PageFiles(STATIC_DIR), name="static")
    limits = (max_body_bytes, max_media_body_bytes)
    _add_middleware(app, tokens, limits, cors_origins)
    return app


def _a2a_routes(context: ServerContext, *, secured: bool) -> list[BaseRoute]:
    """The A2A routes (`hookline.server.protocols.a2a`) when the `a2a` extra is installed; none otherwise."""
    if importlib.util.find_spec("a2a") is None:
        return []
    from hookline.server.protocols.a2a import a2a_routes

    return a2a_routes(context, secured=secured)


def _add_middleware(
    app: FastAPI, tokens: Mapping[str, str], limits: tuple[int, int], cors_origins: list[str] | None
) -> None:
    # The last added runs first: CORS answers preflights, then the token check, then the body
    # limit, then the light path of the two requests every run makes.
    app.add_middleware(HotRoutes, context=app.state.hookline)
    app.add_middleware(BodyLimitMiddleware, max_bytes=limits[0], media_max_bytes=limits[1])
    app.add_middleware(AuthMiddleware, tokens=tokens)
    if cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
            expose_headers=["Location", "Link", "Retry-After", CUT_HEADER],  # what clients read of answers
        )


def _lifespan(
    context: ServerContext, background: BackgroundRuns, grace: float
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        context.relay.start()
        yield
        background.stop_queues()  # no queued run starts now
        await context.runs.aclose()
        await background.aclose(grace)
        await context.relay.aclose()
        await context.store.aclose()

    return lifespan
