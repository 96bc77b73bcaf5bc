"""The client side of MCP tasks: a tool call the server answers with a task is waited for, as one call.

`TasksClient` is an extension of the `mcp` SDK's `Client` (`Client(extensions=[TasksClient()])`):
it declares `io.modelcontextprotocol/tasks` on 2026-07-28 requests, so a server may answer
a `tools/call` with a task (`resultType: "task"`; see `hookline.mcp._tasks` for the server
side), and it claims that answer: `Client.call_tool` then polls `tasks/get` (at the
server's `pollIntervalMs`) until the task ends and returns the tool's result. Input the
task asks for (`input_required`: elicitation, sampling, roots) goes to the client's own
callbacks, the answers back with `tasks/update`. A task that failed raises its JSON-RPC
error as `MCPError`; one the server cancelled raises too. The call's read timeout bounds
the whole wait; a call cancelled while it waits (its run cancelled, or its timeout past)
sends `tasks/cancel` before it ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.client import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.shared.exceptions import MCPError
from pydantic import ConfigDict, Field, TypeAdapter

from hookline.mcp._tasks import EXTENSION, POLL_INTERVAL_MS, TaskParams, UpdateParams

__all__ = ["TasksClient"]

_CANCEL_SECONDS = 5.0
"""How long a cancelled call waits for the server to take `tasks/cancel`."""
_INPUT: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)


class CreatedTask(types.Result):
    """A `tools/call` answered with a task (`CreateTaskResult`)."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str = Field(alias="taskId")
    poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")


class PolledTask(types.Result):
    """A task as `tasks/get` answers it."""

    model_config = ConfigDict(extra="allow")
    task_id: str = Field(alias="taskId")
    status: str
    status_message: str | None = Field(default=None, alias="statusMessage")
    poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")
    result: dict[str, Any] | None = None
    error: types.ErrorData | None = None
    input_requests: dict[str, Any] | None = Field(default=None, alias="inputRequests")


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    """`tasks/get`."""

    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class UpdateTask(types.Request[UpdateParams, Literal["tasks/update"]]):
    """`tasks/update`."""

    method: Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class CancelTask(types.Request[TaskParams, Literal["tasks/cancel"]]):
    """`tasks/cancel`."""

    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class TasksClient(ClientExtension):
    """Declares the tasks extension and waits for the tasks servers answer calls with."""

    identifier = EXTENSION

    def claims(self) -> Sequence[ResultClaim[Any]]:
        """The one shape claimed: a `tools/call` answered with a task."""
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=wait)]


async def wait(created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
    """Wait for the task to end (up to the call's timeout); its tool result.

    A call cancelled, or past its timeout, while it waits sends `tasks/cancel` first.
    """
    try:
        with anyio.fail_after(ctx.read_timeout_seconds):
            task = await _poll(ctx.session, created)
    except BaseException as exc:
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_SECONDS):
            await _cancel(ctx.session, created.task_id)
        if isinstance(exc, TimeoutError):
            raise MCPError(types.REQUEST_TIMEOUT, f"task {created.task_id} did not end within "
                           f"{ctx.read_timeout_seconds:g} s, so it was cancelled") from exc
        raise
    return _ended(task)


async def _poll(session: ClientSession, created: CreatedTask) -> PolledTask:
    """Poll `tasks/get` until the task ends, answering the input it asks for on the way."""
    interval = created.poll_interval_ms or POLL_INTERVAL_MS
    while True:
        task = await session.send_request(GetTask(params=TaskParams(taskId=created.task_id)), PolledTask)
        if task.status in ("completed", "failed", "cancelled"):
            return task
        if task.status == "input_required" and task.input_requests:
            await _answer(session, created.task_id, task.input_requests)
            continue
        await anyio.sleep((task.poll_interval_ms or interval) / 1000)


def _ended(task: PolledTask) -> types.CallToolResult:
    if task.status == "completed" and task.result is not None:
        return types.CallToolResult.model_validate(task.result, by_name=False)
    if task.status == "failed" and task.error is not None:
        raise MCPError.from_error_data(task.error)
    why = f": {task.status_message}" if task.status_message else ""
    raise MCPError(types.INTERNAL_ERROR, f"the server's task {task.task_id} ended {task.status}{why}")


async def _answer(session: ClientSession, task_id: str, requests: dict[str, Any]) -> None:
    """Answer the task's input requests through the client's callbacks; send the answers."""
    answers: dict[str, Any] = {}
    for key, raw in requests.items():
        request = _INPUT.validate_python(raw, by_name=False)
        meta = request.params.meta if request.params else None
        answer = await session.dispatch_input_request(ClientRequestContext(session=session, request_id=key,
                                                                           meta=meta), request)
        if isinstance(answer, types.ErrorData):
            raise MCPError.from_error_data(answer)
        answers[key] = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
    update = UpdateParams(taskId=task_id, inputResponses=answers)
    await session.send_request(UpdateTask(params=update), types.EmptyResult)


async def _cancel(session: ClientSession, task_id: str) -> None:
    try:
        await session.send_request(CancelTask(params=TaskParams(taskId=task_id)), types.EmptyResult)
    except Exception:  # the task may be gone, or the connection: the call ends either way
        return
