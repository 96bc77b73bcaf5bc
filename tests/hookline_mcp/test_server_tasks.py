"""`hookline mcp` and MCP tasks (the `io.modelcontextprotocol/tasks` extension, 2026-07-28).

The agent is served by a real `python -m hookline.mcp` process; the `mcp` SDK's client
calls it, declaring the extension through hookline's `TasksClient` (or not). The kit's
`tasks-*` scenarios check the protocol itself against the conformance fixture
(test_conformance.py); these check what the agent does with it: the run in the
background, its status line, its answer, its cancellation, and whose task it is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from hookline.events import run_end
from hookline.mcp._task_client import CancelTask, CreatedTask, GetTask, PolledTask, TasksClient, UpdateTask
from hookline.mcp._tasks import TaskParams, UpdateParams
from hookline.sessions import SQLiteSessionStore
from support.waiting import await_until

from .harness import AGENTS, SERVE, TOKENS, HttpAgentServer, HttpServer, connect, lines, text

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def sleepers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HttpAgentServer, Path]]:
    """The sleeper agent with alice's and bob's tokens, and its sessions file."""
    db = tmp_path_factory.mktemp("tasks") / "sessions.db"
    server = HttpAgentServer("sleeper", "--db", str(db), tokens=TOKENS)
    yield server, db
    server.stop()


@asynccontextmanager
async def tasks_client(url: str, token: str | None = None) -> AsyncIterator[Client]:
    """The SDK's client on `url`, declaring the tasks extension."""
    async with connect(url, token, extensions=[TasksClient()]) as client:
        yield client


async def start(client: Client, tool: str, arguments: dict[str, Any]) -> CreatedTask:
    """Call `tool`; the task the server answers with (the call not waited for)."""
    created = await client.session.call_tool(tool, arguments, allow_claimed=True)
    assert isinstance(created, CreatedTask), created
    return created


async def get(client: Client, task_id: str) -> PolledTask:
    return await client.session.send_request(GetTask(params=TaskParams(taskId=task_id)), PolledTask)


async def cancel(client: Client, task_id: str) -> None:
    await client.session.send_request(CancelTask(params=TaskParams(taskId=task_id)), types.EmptyResult)


async def ended(client: Client, task_id: str) -> PolledTask:
    async def look() -> PolledTask | None:
        task = await get(client, task_id)
        return task if task.status in ("completed", "failed", "cancelled") else None

    found: PolledTask = await await_until(look, f"task {task_id} ended")
    return found


async def test_a_call_is_a_task_whose_status_is_the_runs_status_line_and_whose_result_is_its_answer(
        sleepers: tuple[HttpAgentServer, Path]) -> None:
    server, _db = sleepers
    async with tasks_client(server.url, "alice-secret") as client:
        created = await start(client, "sleeper", {"prompt": "pause 0.5"})
        assert (created.model_extra or {}).get("status") == "working"
        running = await await_until(
            lambda: _status_says(client, created.task_id, "running pause(seconds=0.5)"), "the tool runs")
        done = await ended(client, created.task_id)
        waited = await client.call_tool("sleeper", {"prompt": "pause 0.1"})  # the extension waits for the task
    assert running.status == "working"
    assert done.status == "completed"
    assert done.result is not None
    assert done.result["content"] == [{"type": "text", "text": "done: paused 0.5 s"}]
    assert done.status_message == "run completed"
    assert text(waited) == "done: paused 0.1 s"


async def _status_says(client: Client, task_id: str, line: str) -> PolledTask | None:
    task = await get(client, task_id)
    return task if task.status_message == line else None


async def test_cancelling_the_task_cancels_the_run(sleepers: tuple[HttpAgentServer, Path]) -> None:
    server, db = sleepers
    async with tasks_client(server.url, "alice-secret") as client:
        created = await start(client, "sleeper", {"prompt": "pause 60", "session_id": "cancel-me"})
        await await_until(lambda: _status_says(client, created.task_id, "running pause(seconds=60.0)"),
                          "the tool runs")
        await cancel(client, created.task_id)
        after = await get(client, created.task_id)
        await cancel(client, created.task_id)  # again: the same empty answer
    assert after.status == "cancelled"
    assert after.result is None
    store = SQLiteSessionStore(db)
    try:
        async def how_it_ended() -> str | None:
            events = await store.events("cancel-me")
            return next((end for event in reversed(events) if (end := run_end(event))), None)

        assert await await_until(how_it_ended, "the run ended") == "cancelled"
    finally:
        await store.aclose()


async def test_another_users_task_is_not_found(sleepers: tuple[HttpAgentServer, Path]) -> None:
    server, _db = sleepers
    async with tasks_client(server.url, "alice-secret") as alice, tasks_client(server.url, "bob-secret") as bob:
        created = await start(alice, "sleeper", {"prompt": "pause 30"})
        for peek in (get(bob, created.task_id), cancel(bob, created.task_id)):
            with pytest.raises(MCPError, match="task not found") as refused:
                await peek
            assert refused.value.code == types.INVALID_PARAMS
        assert (await get(alice, created.task_id)).status == "working"
        await cancel(alice, created.task_id)


async def test_without_the_extension_the_call_is_plain_and_tasks_methods_say_what_is_missing(
        sleepers: tuple[HttpAgentServer, Path]) -> None:
    server, _db = sleepers
    async with connect(server.url, "alice-secret") as client:
        result = await client.call_tool("sleeper", {"prompt": "pause 0"})
        with pytest.raises(MCPError, match=r"io\.modelcontextprotocol/tasks") as refused:
            await get(client, "any")
    assert text(result) == "done: paused 0.0 s"
    assert refused.value.code == -32021
    assert refused.value.data == {"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}


async def test_bad_task_requests_are_refused_with_invalid_params(sleepers: tuple[HttpAgentServer, Path]) -> None:
    server, _db = sleepers
    async with tasks_client(server.url, "alice-secret") as client:
        with pytest.raises(MCPError, match="task not found: nope") as unknown:
            await get(client, "nope")
        with pytest.raises(MCPError) as empty:
            await client.session.send_request(GetTask(params=TaskParams.model_construct(task_id="")), PolledTask)
        created = await start(client, "sleeper", {"prompt": "pause 30"})
        update = UpdateParams(taskId=created.task_id, inputResponses={"x": {"action": "accept"}})
        acknowledged = await client.session.send_request(UpdateTask(params=update), types.EmptyResult)
        await cancel(client, created.task_id)
    assert unknown.value.code == empty.value.code == types.INVALID_PARAMS
    assert isinstance(acknowledged, types.EmptyResult), "answers to requests the task did not make are ignored"


async def test_a_handshake_era_client_gets_plain_calls(sleepers: tuple[HttpAgentServer, Path]) -> None:
    server, _db = sleepers
    async with connect(server.url, "alice-secret", mode="legacy", extensions=[TasksClient()]) as client:
        result = await client.call_tool("sleeper", {"prompt": "pause 0"})
        with pytest.raises(MCPError, match="2026-07-28 requests only") as refused:
            await get(client, "any")
    assert text(result) == "done: paused 0.0 s"
    assert refused.value.code == types.METHOD_NOT_FOUND


async def test_tasks_are_bounded_per_user_and_by_their_ttl(tmp_path: Path) -> None:
    state = tmp_path / "server"
    server = HttpServer("task_server", state, extra=("--task-limit", "2", "--task-ttl-ms", "1500"))
    try:
        async with tasks_client(server.url) as client:
            first = await start(client, "report", {"seconds": 60})
            second = await start(client, "report", {"seconds": 60})
            with pytest.raises(MCPError, match="too many tasks: this user has 2 running") as refused:
                await start(client, "report", {"seconds": 60})
            await cancel(client, first.task_id)
            third = await start(client, "report", {"seconds": 60})  # the ended one made room
            with pytest.raises(MCPError, match="task not found"):
                await get(client, first.task_id)
            # past their TTL, the runs are cancelled and the tasks forgotten
            await await_until(lambda: lines(state, "calls").count("report cancelled") == 3, "every run cancelled")
            for task in (second, third):
                with pytest.raises(MCPError, match="task not found"):
                    await get(client, task.task_id)
    finally:
        server.kill()
    assert refused.value.code == types.INVALID_REQUEST


async def test_ctrl_c_stops_the_server_and_the_runs_of_its_tasks(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    server = HttpAgentServer("sleeper", "--db", str(db))
    try:
        async with tasks_client(server.url) as client:
            created = await start(client, "sleeper", {"prompt": "pause 60", "session_id": "stopped"})
            await await_until(lambda: _status_says(client, created.task_id, "running pause(seconds=60.0)"),
                              "the tool runs")
            took = await anyio.to_thread.run_sync(server.stop)
    finally:
        server.stop()
    assert took < 5.0
    assert server.process.returncode in (0, -2, 130)
    store = SQLiteSessionStore(db)
    try:
        events = await store.events("stopped")
    finally:
        await store.aclose()
    assert [end for event in events if (end := run_end(event))] == ["cancelled"]


async def test_over_stdio_a_call_is_a_task_too() -> None:
    command = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], f"{AGENTS}:sleeper"])
    async with Client(command, extensions=[TasksClient()]) as client:
        created = await start(client, "sleeper", {"prompt": "pause 0.2"})
        done = await ended(client, created.task_id)
    assert done.status == "completed"
    assert done.result is not None
    assert done.result["content"] == [{"type": "text", "text": "done: paused 0.2 s"}]


async def test_a_tool_that_crashes_fails_its_task_and_the_server_goes_on(tmp_path: Path) -> None:
    server = HttpServer("task_server", tmp_path / "server")
    try:
        async with tasks_client(server.url) as client:
            crashed = await ended(client, (await start(client, "crash", {})).task_id)
            with pytest.raises(MCPError, match="RuntimeError: the crash tool crashed"):
                await client.call_tool("crash", {})  # the extension raises a failed task's error
            after = await client.call_tool("report", {"seconds": 0})
    finally:
        server.kill()
    assert crashed.status == "failed"
    assert crashed.result is None
    assert crashed.error is not None
    assert crashed.error.code == types.INTERNAL_ERROR
    assert text(after) == "report done"


async def test_a_tasks_question_is_answered_with_tasks_update_and_a_malformed_answer_is_refused(
        tmp_path: Path) -> None:
    server = HttpServer("task_server", tmp_path / "server")
    try:
        async with tasks_client(server.url) as client:
            created = await start(client, "confirm", {})
            asking = await await_until(lambda: _asking(client, created.task_id), "the task asks")
            for bad in (12345, {"action": "maybe"}):
                with pytest.raises(MCPError, match=r"inputResponses\['go'\] is not an answer to elicitation/create"):
                    await update(client, created.task_id, {"go": bad})
            await update(client, created.task_id, {"go": {"action": "accept", "content": {"ok": True}}})
            done = await ended(client, created.task_id)
    finally:
        server.kill()
    assert asking.input_requests is not None
    assert asking.input_requests["go"]["method"] == "elicitation/create"
    assert asking.input_requests["go"]["params"]["requestedSchema"]["required"] == ["ok"], "the wire's names"
    assert done.result is not None
    assert done.result["content"] == [{"type": "text", "text": "confirm accept"}]


async def _asking(client: Client, task_id: str) -> PolledTask | None:
    task = await get(client, task_id)
    return task if task.status == "input_required" else None


async def update(client: Client, task_id: str, answers: dict[str, Any]) -> None:
    params = UpdateParams(taskId=task_id, inputResponses=answers)
    await client.session.send_request(UpdateTask(params=params), types.EmptyResult)
