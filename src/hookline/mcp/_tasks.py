"""MCP tasks: a `tools/call` answered at once with a task, run in the background, polled for its result.

This is the `io.modelcontextprotocol/tasks` extension of the 2026-07-28 revision
(SEP-2663), served on the SDK's low-level `Server` through the hooks it has for
extensions (custom request methods, `Server.extensions`, a `resultType` the extension
owns); the `mcp` SDK ships no handlers for it. `Tasks.install(server)` adds:

- server-directed task creation: a `tools/call` of a tool that supports tasks, from a
  request whose client capabilities name the extension, is answered at once with a
  `CreateTaskResult` (`resultType: "task"`) while the tool runs in the background; from
  any other request the tool runs as a plain call, and a tool that *requires* a task
  is refused with `-32021` (missing required client capability);
- `tasks/get`: the task, with the tool's result inlined once `completed`, the JSON-RPC
  error once `failed`, and the input it waits for while `input_required`;
- `tasks/update`: answers to that input (a tool asks for input as a multi-round call
  does, with an `InputRequiredResult`; once every request is answered the tool runs
  again with the answers);
- `tasks/cancel`: cancels the tool's run (idempotent on an ended task).

Tasks are bounded and private: each is kept `TTL_MS` from its creation (a run still
going then is cancelled), each user keeps at most `LIMIT` (the oldest ended one makes
room; with `LIMIT` running, a new one is refused), and a task is found only by the user
whose request created it (`request_user`): another user's is "not found", like an
unknown id. Tasks live in the server process's memory; the 2025-11-25 draft's methods
(`tasks/result`, `tasks/list`) are not served (the extension removed them), nor are
tasks on handshake-era requests, whose results cannot carry the extension's shape.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from mcp.server.context import HandlerResult
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import methods
from mcp_types.jsonrpc import HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from hookline._redact import redact
from hookline.mcp._auth import request_user

__all__ = ["EXTENSION", "LIMIT", "POLL_INTERVAL_MS", "TTL_MS", "Support", "Task", "TaskParams", "Tasks", "UpdateParams",
           "note"]

EXTENSION = "io.modelcontextprotocol/tasks"
TTL_MS = 3_600_000
"""How long a task is kept from its creation: an hour."""
POLL_INTERVAL_MS = 500
"""How often a client is asked to poll `tasks/get`."""
LIMIT = 100
"""How many tasks one user keeps at once."""

TaskSupport = Literal["optional", "required"]
Support = Callable[[types.CallToolRequestParams], TaskSupport | None]
"""Whether a call may run as a task ("optional"), must ("required"), or never does (None)."""
Handler = Callable[[Any, Any], Awaitable[HandlerResult]]
"""A `tools/call` handler (its params: `CallToolRequestParams`)."""

logger = logging.getLogger("hookline.mcp")
_TERMINAL = frozenset({"completed", "failed", "cancelled"})
_ANSWER: TypeAdapter[types.InputResponse] = TypeAdapter(types.InputResponse)
_current: ContextVar[Task | None] = ContextVar("hookline_mcp_task", default=None)


class TaskParams(types.RequestParams):
    """The params of `tasks/get` and `tasks/cancel`."""

    task_id: str = Field(alias="taskId", min_length=1)


class UpdateParams(TaskParams):
    """The params of `tasks/update`: answers to the input requests the task shows."""

    input_responses: dict[str, Any] = Field(alias="inputResponses")


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(eq=False)
class Task:
    """One task: who owns it, where it stands, and what its run gave or waits for."""

    id: str
    owner: str
    ttl_ms: int
    created: datetime = field(default_factory=_now)
    updated: datetime = field(default_factory=_now)
    status: str = "working"
    message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    asked: dict[str, Any] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)
    answered: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    @property
    def ended(self) -> bool:
        """Whether the task is completed, failed or cancelled."""
        return self.status in _TERMINAL

    def expired(self, now: datetime) -> bool:
        """Whether the task has outlived its TTL."""
        return now >= self.created + timedelta(milliseconds=self.ttl_ms)

    def set(self, status: str, **fields: Any) -> None:
        """Move to `status` (an ended task stays as it ended)."""
        if self.ended:
            return
        self.status, self.updated = status, _now()
        for name, value in fields.items():
            setattr(self, name, value)

    def wire(self, *, detailed: bool = False) -> dict[str, Any]:
        """The task as `CreateTaskResult` fields, or (`detailed`) as `tasks/get` answers it."""
        shown: dict[str, Any] = {
            "taskId": self.id, "status": self.status,
            "createdAt": self.created.isoformat(), "lastUpdatedAt": self.updated.isoformat(),
            "ttlMs": self.ttl_ms, "pollIntervalMs": POLL_INTERVAL_MS,
        }
        if self.message:
            shown["statusMessage"] = self.message
        if detailed and self.status == "input_required":
            shown["inputRequests"] = {key: value for key, value in self.asked.items() if key not in self.answers}
        if detailed and self.result is not None:
            shown["result"] = self.result
        if detailed and self.error is not None:
            shown["error"] = self.error
        return shown

    async def ask(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        """Show `requests` and wait until each is answered; the answers."""
        self.answered = anyio.Event()
        self.answers = {}
        self.set("input_required", asked=dict(requests))
        await self.answered.wait()
        self.set("working", asked={})
        return self.answers

    def answer(self, responses: Mapping[str, Any]) -> None:
        """Take the answers to requests the task shows (others are ignored); wake the run once all are in."""
        if self.status != "input_required":
            return
        for key, value in responses.items():
            if key in self.asked:
                self.answers[key] = value
        self.updated = _now()
        if self.answers.keys() >= self.asked.keys():
            self.answered.set()


def note(message: str) -> bool:
    """Show `message` as the status of the task this code runs in; False outside a task."""
    task = _current.get()
    if task is None:
        return False
    task.message, task.updated = message, _now()
    return True


class Tasks:
    """The tasks of one server, and the handlers that serve them (see the module's docstring)."""

    def __init__(self, support: Support, *, ttl_ms: int = TTL_MS, limit: int = LIMIT) -> None:
        if not (isinstance(ttl_ms, int) and ttl_ms > 0 and isinstance(limit, int) and limit > 0):
            raise ValueError(f"ttl_ms and limit must be positive integers, not {ttl_ms!r} and {limit!r}")
        self._support = support
        self._ttl_ms = ttl_ms
        self._limit = limit
        self._tasks: dict[str, Task] = {}
        self._group: TaskGroup | None = None

    def install(self, server: Server[Any]) -> None:
        """Serve tasks on `server`: wraps its `tools/call` handler and lifespan, adds `tasks/*`, advertises it."""
        entry = server.get_request_handler("tools/call")
        if entry is None:
            raise ValueError("Tasks.install needs a server with a tools/call handler")
        server.add_request_handler("tools/call", entry.params_type, self._call_tool(entry.handler))
        server.add_request_handler("tasks/get", TaskParams, self._get)
        server.add_request_handler("tasks/update", UpdateParams, self._update)
        server.add_request_handler("tasks/cancel", TaskParams, self._cancel)
        server.extensions[EXTENSION] = {}
        server.lifespan = self._lifespan(server.lifespan)

    def _lifespan(self, inner: Callable[[Server[Any]], Any]) -> Callable[[Server[Any]], Any]:
        """`inner`, with the task group task runs live in (cancelled when the server stops)."""

        @asynccontextmanager
        async def lifespan(server: Server[Any]) -> AsyncIterator[Any]:
            async with anyio.create_task_group() as group, inner(server) as state:
                self._group = group
                try:
                    yield state
                finally:
                    self._group = None
                    group.cancel_scope.cancel()

        return lifespan

    def _call_tool(self, handler: Handler) -> Handler:
        """`handler`, answering with a task where the call may be one and the client declared the extension."""

        async def call_tool(ctx: Any, params: Any) -> HandlerResult:
            support = self._support(params)
            if support is None or self._group is None:
                return await handler(ctx, params)
            if not _declared(ctx):
                if support == "required":
                    raise _missing_capability(f"tool {params.name!r} runs only as a task")
                return await handler(ctx, params)
            task = self._create(request_user(ctx))
            self._group.start_soon(self._run, task, handler, ctx, params)
            return {"resultType": "task", **task.wire()}

        return call_tool

    def _create(self, owner: str) -> Task:
        """A new task of `owner`, kept once this returns (within the user's limit)."""
        self._sweep()
        mine = [task for task in self._tasks.values() if task.owner == owner]
        if len(mine) >= self._limit:
            ended = [task for task in mine if task.ended]
            if not ended:
                raise MCPError(types.INVALID_REQUEST, f"too many tasks: this user has {self._limit} running; "
                               "wait for one to end or cancel one (tasks/cancel)")
            del self._tasks[min(ended, key=lambda task: task.updated).id]
        task = Task(secrets.token_urlsafe(16), owner, self._ttl_ms)
        self._tasks[task.id] = task
        return task

    def _sweep(self) -> None:
        """Forget the tasks past their TTL, cancelling the runs still going."""
        now = _now()
        for task in [task for task in self._tasks.values() if task.expired(now)]:
            task.scope.cancel()
            del self._tasks[task.id]

    async def _run(self, task: Task, handler: Handler, ctx: Any, params: types.CallToolRequestParams) -> None:
        """Run the tool in the task's scope (cancelled by `tasks/cancel`, or at the TTL); record how it ended."""
        _current.set(task)
        task.scope.deadline = anyio.current_time() + task.ttl_ms / 1000  # a run outliving its task is cancelled
        with task.scope:
            try:
                result = await _answer(task, handler, ctx, params)
                task.set("completed", result=_tool_result(result, ctx.protocol_version))
            except MCPError as exc:
                task.set("failed", error=exc.error.model_dump(mode="json", exclude_none=True))
            except Exception as exc:  # a crashing tool fails its task; the server and the other tasks go on
                logger.exception("the tool call of task %s failed", task.id)
                task.set("failed", error={"code": types.INTERNAL_ERROR,
                                          "message": redact(f"{type(exc).__name__}: {exc}")})
        if task.scope.cancel_called:
            task.set("cancelled")

    def _find(self, ctx: Any, params: TaskParams) -> Task:
        """The caller's task `params.task_id`, after the checks every `tasks/*` request gets."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            raise MCPError(types.METHOD_NOT_FOUND, f"{ctx.method} is served on 2026-07-28 requests only ({EXTENSION})")
        if not _declared(ctx):
            raise _missing_capability(f"{ctx.method} needs the {EXTENSION} extension")
        named = _header(ctx, "mcp-name")
        if named is not None and named.strip() != params.task_id:
            raise MCPError(HEADER_MISMATCH, f"the Mcp-Name header ({named!r}) is not the request's taskId")
        self._sweep()
        task = self._tasks.get(params.task_id)
        if task is None or task.owner != request_user(ctx):
            raise MCPError(types.INVALID_PARAMS, f"task not found: {params.task_id}")
        return task

    async def _get(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        return self._find(ctx, params).wire(detailed=True)

    async def _update(self, ctx: Any, params: UpdateParams) -> dict[str, Any]:
        task = self._find(ctx, params)
        answers: dict[str, Any] = {}
        for key, value in params.input_responses.items():
            if key not in task.asked:
                continue  # the spec asks unknown keys to be ignored
            try:
                answers[key] = _ANSWER.validate_python(value, by_name=False)
            except ValidationError:
                raise MCPError(types.INVALID_PARAMS, f"inputResponses[{key!r}] is not an answer to "
                               f"{task.asked[key].get('method', 'the request')}") from None
        task.answer(answers)
        return {}

    async def _cancel(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        task = self._find(ctx, params)
        task.scope.cancel()
        task.set("cancelled")
        return {}


async def _answer(task: Task, handler: Handler, ctx: Any, params: types.CallToolRequestParams) -> Any:
    """The tool's result: after an `InputRequiredResult`, the tool runs again with the answers `tasks/update` gave."""
    while True:
        result = await handler(ctx, params)
        if not isinstance(result, types.InputRequiredResult):
            return result
        answers = await task.ask({key: _dumped(request) for key, request in (result.input_requests or {}).items()})
        params = params.model_copy(update={"input_responses": answers, "request_state": result.request_state})


def _declared(ctx: Any) -> bool:
    """Whether the request's client capabilities name the tasks extension (2026-07-28 requests only)."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and EXTENSION in (capabilities.extensions or {})


def _missing_capability(why: str) -> MCPError:
    return MCPError(MISSING_REQUIRED_CLIENT_CAPABILITY, f"{why}: declare {EXTENSION} in the client capabilities",
                    {"requiredCapabilities": {"extensions": {EXTENSION: {}}}})


def _header(ctx: Any, name: str) -> str | None:
    headers = getattr(getattr(ctx, "request", None), "headers", None)
    value = headers.get(name) if headers is not None else None
    return value if isinstance(value, str) else None


def _dumped(value: Any) -> dict[str, Any]:
    """A model (or a mapping) as its wire JSON."""
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dict(value)


def _tool_result(result: Any, version: str) -> dict[str, Any]:
    """The tool's result as the wire of `version` shows a `tools/call` answer."""
    shown: dict[str, Any] = methods.serialize_server_result("tools/call", version, _dumped(result))
    return shown
