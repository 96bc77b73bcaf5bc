"""A2A 1.0 on the official `a2a-sdk` (the `a2a` extra): the Agent Card, and JSON-RPC at `POST /a2a`.

The SDK does the protocol's own work: its JSON-RPC route (`create_jsonrpc_routes`) parses
requests into its types, checks the `A2A-Version` header, answers errors in JSON-RPC's form and
streams over SSE. `A2AHandler`, the SDK's `RequestHandler`, maps the methods onto hookline's
runs through the protocol seam (`base.py`), so an A2A task runs like any run of the server:
in its `RunManager`, with the same deps, audit, busy sessions and cancel (in any process).

- The context id is the session id (`open_session`: created for the caller on first use;
  another user's is refused). A message in it without a task id is the next prompt: a new
  task (`SendMessage`, `SendStreamingMessage`). Its text and data parts are the prompt (a data
  part as its JSON text); files are refused.
- A task is a prompt and the runs that answer it; `a2a_tasks.py` reads it from the log (its
  id names its session and its prompt's seq), so `GetTask` works after a restart. What a
  message asks is read by `a2a_messages.py`; the card is built by `a2a_card.py`.
- A paused run is `TASK_STATE_INPUT_REQUIRED`. A message with the task's id whose parts hold
  the data part `{"approved": true}` (or `{"approved": false, "reason": "..."}`) answers every
  paused call of the task, and the same task goes on (a call that asked a question gets
  `"response"`, when the part has one, as its answer).
- `CancelTask` is hookline's cancel; a task waiting for approval has no run to cancel: it is
  refused with `{"approved": false}` instead.
- `SubscribeToTask` follows a task that is working (in this process or another), from its
  state now to its end.

Not the SDK's `DefaultRequestHandler` with an `AgentExecutor` and a `TaskStore`: it keeps a
task's run in one process's memory (`ActiveTaskRegistry`), so a task running in another
process could be neither followed nor cancelled, and it saves the whole task at every update,
a second log beside the session's. hookline's runs, relay and log already do that work, in
every process and with every store.

Auth is the server's: `AuthMiddleware` checks the bearer token before the SDK reads the body,
and the caller is the session owner every method checks. The card is public (as `/healthz`
is): it says how to authenticate (a bearer scheme when the server wants tokens).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Iterator
from contextlib import aclosing, contextmanager
from uuid import uuid4

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.events import Event as A2AEvent
from a2a.server.request_handlers import RequestHandler
from a2a.server.routes import DefaultServerCallContextBuilder, create_jsonrpc_routes
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.types import Message as A2AMessage
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from a2a.utils.errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a.utils.proto_utils import validate_proto_required_fields
from a2a.utils.task import apply_history_length, validate_history_length
from google.protobuf.json_format import MessageToDict
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from hookline.errors import HooklineError, SessionBusy, SessionNotFound
from hookline.events import Event
from hookline.server.auth import user_of
from hookline.server.errors import RunCrashed, error_body
from hookline.server.protocols.a2a_card import agent_card
from hookline.server.protocols.a2a_messages import APPROVAL, approvals_of, prompt_of
from hookline.server.protocols.a2a_tasks import TERMINAL, TaskRef, TaskTranslator, task_span
from hookline.server.protocols.base import ProtocolError, RunEvents, Turn, join, open_session, start
from hookline.server.routes import ServerContext

__all__ = ["CARD_PATH", "RPC_PATH", "A2AHandler", "a2a_error", "a2a_routes"]

logger = logging.getLogger("hookline.server")

CARD_PATH = AGENT_CARD_WELL_KNOWN_PATH
"""Where the Agent Card is served: `/.well-known/agent-card.json`."""
RPC_PATH = "/a2a"
"""Where the JSON-RPC binding is served."""

_CANCEL_WAIT = 10.0  # seconds CancelTask waits for the cancelled run to record its end
# Seconds the SDK's SSE (sse-starlette) lets a stream finish once the server stops, before it cuts
# it: the server cancels its runs after its own grace (`hookline serve`: 0.5 s), and a cancelled
# run's stream then ends with its CANCELED update; cut at once, a client would see none.
_STREAM_GRACE = 1.5
_CODES: dict[str, type[A2AError]] = {
    "not_found": TaskNotFoundError, "busy": InvalidRequestError, "exists": InvalidRequestError,
    "bad_request": InvalidParamsError, "invalid_event": InvalidParamsError,
}


def a2a_routes(context: ServerContext, *, secured: bool) -> list[BaseRoute]:
    """The A2A routes of a server: its Agent Card (public) and the JSON-RPC binding at `RPC_PATH`."""

    async def card(request: Request) -> Response:
        base = str(request.base_url).rstrip("/")
        return JSONResponse(MessageToDict(agent_card(context.agent, f"{base}{RPC_PATH}", secured=secured)))

    return [
        Route(CARD_PATH, card, methods=["GET"], name="a2a_agent_card"),
        *create_jsonrpc_routes(A2AHandler(context), rpc_url=RPC_PATH, context_builder=_CallContextBuilder(),
                               shutdown_grace_period=_STREAM_GRACE),
    ]


class _Caller(User):
    """The user the server's auth found for the request (`user_of`)."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def is_authenticated(self) -> bool:
        """Always: `AuthMiddleware` let the request in."""
        return True

    @property
    def user_name(self) -> str:
        """The user's name (a session's owner)."""
        return self._name


class _CallContextBuilder(DefaultServerCallContextBuilder):
    """The SDK's call context, with hookline's user and the request (for the deps factory)."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state["request"] = request
        return context

    def build_user(self, request: Request) -> User:
        return _Caller(user_of(request))


def _caller(call: ServerCallContext) -> tuple[str, Request]:
    request = call.state["request"]
    assert isinstance(request, Request)
    return call.user.user_name, request


def a2a_error(exc: BaseException) -> A2AError:
    """The A2A error answering `exc` (a hookline error's code in its `data`; unknown errors name no internals)."""
    if isinstance(exc, A2AError):
        return exc
    if isinstance(exc, ProtocolError):
        return InvalidParamsError(message=str(exc))
    status, body = error_body(exc)
    if status >= 500 and not isinstance(exc, RunCrashed):  # a crashed run was logged by the run
        logger.error("an A2A request failed: %s", exc, exc_info=exc)
    return _CODES.get(body.error, InternalError)(message=body.message, data={"error": body.error})


@contextmanager
def _answered_in_a2a() -> Iterator[None]:
    try:
        yield
    except A2AError:
        raise
    except HooklineError as exc:
        raise a2a_error(exc) from exc


def _ref(task_id: str) -> TaskRef:
    ref = TaskRef.parse(task_id)
    if ref is None:
        raise TaskNotFoundError(message=f"no task {task_id[:80]!r}: a task id is '<context id>:<number>'")
    return ref


class A2AHandler(RequestHandler):
    """The A2A methods on hookline runs: messages start or resume them, tasks are read from the log."""

    def __init__(self, context: ServerContext) -> None:
        self.context = context

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task:
        """Run the message (a new task, or the answer to a paused one); answer the task once it ends or pauses."""
        run, translator = await self._begin(params, context)
        async with aclosing(_updates(run, translator)) as updates:
            async for _ in updates:
                if params.configuration.return_immediately and translator.ref is not None:
                    break
        return apply_history_length(translator.task(), params.configuration)

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[A2AEvent]:
        """Run the message; stream the task, a working update per status line, its answer and its final state."""
        run, translator = await self._begin(params, context)
        async with aclosing(_updates(run, translator)) as updates:
            async for update in updates:
                yield update

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task:
        """The task as the log holds it."""
        validate_proto_required_fields(params)
        validate_history_length(params)
        ref = _ref(params.id)
        return apply_history_length(await self._read(ref, _caller(context)[0]), params)

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task:
        """Cancel the task's run, wherever it runs; answer the task once the run has recorded its end."""
        validate_proto_required_fields(params)
        ref, user = _ref(params.id), _caller(context)[0]
        task = await self._read(ref, user)
        if task.status.state in TERMINAL:
            raise TaskNotCancelableError(message=f"task {ref.task_id!r} has ended "
                                                 f"({TaskState.Name(task.status.state)})")
        if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            raise TaskNotCancelableError(message=f"task {ref.task_id!r} waits for approval and nothing runs: refuse "
                                                 f"its paused calls with a message holding {APPROVAL}")
        try:
            cancelled = await self.context.relay.cancel(ref.session_id)
        except SessionBusy as exc:
            raise TaskNotCancelableError(message=error_body(exc)[1].message) from exc
        if cancelled:
            await self._until_ended(ref)
        return await self._read(ref, user)

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[A2AEvent]:
        """The task as it stands, then its updates until it ends or pauses (a task that ended has none)."""
        validate_proto_required_fields(params)
        ref, user = _ref(params.id), _caller(context)[0]
        await self._owned(ref, user)
        stored, run = await join(self.context, ref.session_id, ref.seq - 1)
        try:
            translator = await self._translator(ref, stored)
            state = translator.progress.state
            if state in TERMINAL:
                raise UnsupportedOperationError(message=f"task {ref.task_id!r} has ended ({TaskState.Name(state)}): "
                                                        "GetTask reads it")
            yield translator.task()
            if state != TaskState.TASK_STATE_WORKING:
                return
            translator.opened = True
            async with aclosing(_updates(run, translator)) as updates:
                async for update in updates:
                    yield update
            if not translator.final:  # the run of another process ended: its end is in the log now
                for update in (await self._translator(ref, await self._events(ref, user))).ending():
                    yield update
        finally:
            run.close()

    async def on_list_tasks(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """Not offered: a task is read by its id (`GetTask`)."""
        raise UnsupportedOperationError(message="ListTasks is not offered here: read a task by its id (GetTask)")

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        """Not offered (the card says so): follow a task with `SubscribeToTask`."""
        raise PushNotificationNotSupportedError

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        """Not offered (the card says so)."""
        raise PushNotificationNotSupportedError

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        """Not offered (the card says so)."""
        raise PushNotificationNotSupportedError

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        """Not offered (the card says so)."""
        raise PushNotificationNotSupportedError

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        """Not offered (the card says so): the public card is the whole card."""
        raise UnsupportedOperationError(message="there is no extended agent card: the public one is the whole card")

    # -- messages -------------------------------------------------------------------------

    async def _begin(self, params: SendMessageRequest, call: ServerCallContext) -> tuple[RunEvents, TaskTranslator]:
        validate_proto_required_fields(params)
        validate_history_length(params.configuration)
        message = params.message
        user, request = _caller(call)
        with _answered_in_a2a():
            if message.task_id:
                return await self._answer(message, user, request)
            turn = Turn(prompt=prompt_of(message), prompt_id=message.message_id)
            context_id = message.context_id or uuid4().hex
            try:
                await open_session(self.context, context_id, user)
            except SessionNotFound as exc:
                raise InvalidParamsError(message=f"context {context_id!r} is not yours: send no contextId to start "
                                                 "a new one") from exc
            run = await start(self.context, request, user, context_id, turn)
            return run, TaskTranslator(context_id, prompt_id=message.message_id)

    async def _answer(self, message: A2AMessage, user: str, request: Request) -> tuple[RunEvents, TaskTranslator]:
        ref = _ref(message.task_id)
        if message.context_id and message.context_id != ref.session_id:
            raise InvalidParamsError(message=f"task {ref.task_id!r} is in context {ref.session_id!r}, "
                                             f"not {message.context_id!r}")
        translator = await self._translator(ref, await self._events(ref, user))
        state = translator.progress.state
        if state != TaskState.TASK_STATE_INPUT_REQUIRED:
            raise InvalidRequestError(message=f"task {ref.task_id!r} is {TaskState.Name(state)}: only a task waiting "
                                              "for approval takes a message; send one without taskId for a new task")
        approvals = approvals_of(message, translator.progress.paused, ref.task_id)
        run = await start(self.context, request, user, ref.session_id, Turn(approvals=approvals))
        return run, translator

    # -- tasks from the log ---------------------------------------------------------------

    async def _owned(self, ref: TaskRef, user: str) -> None:
        try:
            await self.context.store.get(ref.session_id, user=user, with_events=False)
        except SessionNotFound as exc:
            raise TaskNotFoundError(message=f"no task {ref.task_id!r}") from exc

    async def _events(self, ref: TaskRef, user: str) -> list[Event]:
        await self._owned(ref, user)
        return await self.context.store.events(ref.session_id, view="all", after_seq=ref.seq - 1)

    async def _translator(self, ref: TaskRef, events: list[Event]) -> TaskTranslator:
        translator, followed = _from_log(ref, events)
        running = not translator.progress.ended and await self.context.relay.run_active(ref.session_id)
        if not translator.progress.ended and not running:
            # The run may have ended since `events` were read; its end is stored before its session is let go.
            events = await self.context.store.events(ref.session_id, view="all", after_seq=ref.seq - 1)
            translator, followed = _from_log(ref, events)
        translator.progress.settle(running=running, followed=followed)
        return translator

    async def _read(self, ref: TaskRef, user: str) -> Task:
        return (await self._translator(ref, await self._events(ref, user))).task()

    async def _until_ended(self, ref: TaskRef) -> None:
        _, run = await join(self.context, ref.session_id, ref.seq - 1)
        try:
            async with asyncio.timeout(_CANCEL_WAIT), aclosing(run.events()) as events:
                async for _ in events:
                    pass
        except TimeoutError:
            logger.warning("task %s: its run had not ended %.0f s after it was cancelled", ref.task_id, _CANCEL_WAIT)
        finally:
            run.close()


def _from_log(ref: TaskRef, events: list[Event]) -> tuple[TaskTranslator, bool]:
    """The task `ref` as `events` tell it, and whether a newer task followed it."""
    found = task_span(events, ref)
    if found is None:
        raise TaskNotFoundError(message=f"no task {ref.task_id!r}")
    span, followed = found
    return TaskTranslator.from_log(ref, span), followed


async def _updates(run: RunEvents, translator: TaskTranslator) -> AsyncGenerator[A2AEvent]:
    """The run's updates, up to the task's final update; they end with the run.

    The final update goes out at once; the stream ends once the run has (it records its
    last events, then lets the session go), so that a client's next message finds the
    session free.
    """
    async with aclosing(run.events()) as events:
        async for event in events:
            if event is None or translator.final:
                continue
            # A resumption's task goes out once its run has begun: one refused answers an error instead.
            for update in [*translator.opening(), *translator.event(event)]:
                yield update
    result, error = await run.outcome()
    if translator.ref is None or (error is not None and not translator.opened):
        raise a2a_error(error or InternalError(message="the run ended before it recorded the message"))
    for update in [*translator.opening(), *await translator.closing(result, error)]:
        yield update
