"""The deps of a served agent's runs: a factory called with each run's request context.

An agent with `deps_type` needs deps on every run (`PromptRequest.deps`). Served, they
usually depend on who asks and on what (a database handle scoped to the user, a tenant's
settings), so `create_app(agent, deps=factory)` takes a function of a `DepsContext` (the
authenticated user, the session's id, the Starlette `Request`) that returns them, sync or
async, called once per run and once per resume, before anything is recorded.

Why a plain function and not a FastAPI dependency (`Depends`): a run outlives its request
(it goes on when the client leaves), while FastAPI closes a `yield` dependency when the
response is sent, which would close a database session under a running tool. What a
factory returns lives as long as the run holds it. The request is still at hand
(`context.request.app.state`, its headers), as pydantic-ai's `AGUIAdapter.dispatch_request`
and the OpenAI Agents SDK's `Runner.run(context=...)` leave the per-request context to the
caller. A sync factory runs in a worker thread, as FastAPI runs a sync dependency.

A factory that raises `HTTPException` answers with its status and detail (e.g. 403 for a
user who may not run this agent); any other failure, or deps of the wrong type, answers 500
`deps_failed` with a redacted message, and the server log has the traceback.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request

from hookline._redact import redact
from hookline.agent import Agent, PromptRequest
from hookline.errors import ConfigError, HooklineError

__all__ = ["DepsContext", "DepsFactory", "DepsFailed", "apply_deps", "checked_deps_factory"]


@dataclass(frozen=True, slots=True)
class DepsContext:
    """What a deps factory knows of the run it builds deps for."""

    request: Request
    """The HTTP request that starts the run (headers, `request.app.state`, the client)."""
    user: str
    """The authenticated user (`"default"` when the server has no tokens)."""
    session_id: str
    """The session the run writes to (the user owns it: checked before the factory is called)."""
    action: Literal["run", "resume"]
    """`"run"` for `POST .../runs`, `"resume"` for `POST .../resume`."""


DepsFactory = Callable[[DepsContext], Any]
"""`factory(context) -> deps`, or an `async def` one: the deps of one run."""


class DepsFailed(HooklineError):
    """The deps factory of a served agent raised, or returned deps the agent does not take (500 `deps_failed`)."""


def checked_deps_factory(agent: Agent, deps: DepsFactory | None) -> DepsFactory | None:
    """Return `deps` once it fits `agent`.

    Raises:
        ConfigError: `agent` has a `deps_type` and no factory is given, or `deps` is not callable.
    """
    if deps is not None and not callable(deps):
        raise ConfigError(f"create_app(deps=...) takes a function of the request's DepsContext, not "
                          f"{type(deps).__name__}: deps=lambda context: make_deps(context.user)")
    if deps is None and agent.deps_type is not None:
        raise ConfigError(f"agent {agent.name!r} needs deps of type {_type_name(agent.deps_type)} on every run: "
                          "pass create_app(agent, ..., deps=factory), a function of the request's DepsContext "
                          "(user, session_id, request) that returns them (hookline serve: --deps module:function)")
    return deps


async def apply_deps(factory: DepsFactory | None, context: DepsContext, run: PromptRequest) -> PromptRequest:
    """Give `run` the deps `factory` builds for `context` (nothing without a factory).

    Raises:
        HTTPException: The factory raised it (its answer goes to the client as it is).
        DepsFailed: The factory raised anything else, or its deps are not of the agent's `deps_type`.
    """
    if factory is None:
        return run
    try:
        value = await _call(factory, context)
    except HTTPException:
        raise
    except Exception as exc:
        raise DepsFailed(f"the deps factory failed for session {context.session_id!r}: "
                         f"{type(exc).__name__}: {redact(str(exc))}") from exc
    try:
        return run.deps(value)
    except ConfigError as exc:
        raise DepsFailed(f"the deps factory returned deps the agent does not take: {exc}") from exc


async def _call(factory: DepsFactory, context: DepsContext) -> Any:
    if _is_async(factory):
        return await factory(context)
    value = await run_in_threadpool(factory, context)
    return await value if inspect.isawaitable(value) else value  # e.g. a lambda around an async call


def _is_async(factory: DepsFactory) -> bool:
    # As FastAPI tells an async dependency: the function, or an object with an async __call__.
    return inspect.iscoroutinefunction(factory) or inspect.iscoroutinefunction(type(factory).__call__)


def _type_name(kind: Any) -> str:
    return getattr(typing.get_origin(kind) or kind, "__name__", repr(kind))
