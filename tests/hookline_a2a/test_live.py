"""A2A against real `hookline serve` processes: the SDK's own client, a restart, two processes, and stopping.

The processes serve `agents.py:agent` on a SQLite file, or two of them on one PostgreSQL database.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from a2a.types import CancelTaskRequest, GetTaskRequest, SubscribeToTaskRequest, TaskState

from server.served import HOOKLINE, Served
from support.postgres_db import fresh_database
from support.waiting import DEADLINE

from .harness import approval, artifact_text, as_json, ask, collect, kinds, sdk_client, status_text, working_lines

pytestmark = pytest.mark.anyio

AGENT = f"{Path(__file__).with_name('agents.py')}:agent"
SLACK = float(os.environ.get("HOOKLINE_TEST_CANCEL_SLACK", "0.5"))
"""Seconds of slack for a loaded machine on top of a promised bound."""


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[list[Served]]:
    """Started `hookline serve` processes (append to it), all stopped after the test."""
    if HOOKLINE is None:
        pytest.skip("the hookline console script is not installed")
    started: list[Served] = []
    yield started
    for served in started:
        served.stop()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database, dropped after the test."""
    with fresh_database("hookline_a2a") as url:
        yield url


def start(started: list[Served], database: str, cwd: Path) -> str:
    served = Served(AGENT, database, cwd)
    started.append(served)
    return served.wait_url()


async def test_the_sdk_client_runs_a_task_on_hookline_serve(serve: list[Served], tmp_path: Path) -> None:
    url = start(serve, str(tmp_path / "s.db"), tmp_path)
    async with sdk_client(url) as client:
        updates = await collect(client, ask("add these"))
        task = await client.get_task(GetTaskRequest(id=updates[0].task.id))

    assert kinds(updates)[-2:] == ["artifact", "COMPLETED"]
    assert "running add(a=2, b=3)" in working_lines(updates)
    assert artifact_text(task) == "The tool said: 5."


async def test_a_paused_task_survives_a_restart_and_completes_on_the_next_server(
    serve: list[Served], tmp_path: Path
) -> None:
    database = str(tmp_path / "restart.db")
    first = start(serve, database, tmp_path)
    async with sdk_client(first) as client:
        done = (await collect(client, ask("hello before")))[0].task
        paused = (await collect(client, ask("danger now")))[0].task
    serve[0].stop()

    second = start(serve, database, tmp_path)
    async with sdk_client(second) as client:
        read_done = await client.get_task(GetTaskRequest(id=done.id))
        read_paused = await client.get_task(GetTaskRequest(id=paused.id))
        resumed = await collect(client, approval(paused.id, paused.context_id))
        finished = await client.get_task(GetTaskRequest(id=paused.id))

    assert artifact_text(read_done) == "You said: hello before"
    assert read_paused.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    data = as_json(read_paused.status.message)["parts"][1]["data"]["pausedCalls"]
    assert [c["tool"] for c in data] == ["danger"]
    assert resumed[0].task.id == paused.id
    assert finished.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(finished) == "The tool said: wiped prod."


async def test_one_process_follows_and_cancels_a_task_another_runs(
    postgres_url: str, serve: list[Served], tmp_path: Path
) -> None:
    a, b = start(serve, postgres_url, tmp_path), start(serve, postgres_url, tmp_path)
    async with sdk_client(a) as on_a, sdk_client(b) as on_b:
        stream = on_a.send_message(ask("wait on a"))
        task_id = (await anext(stream)).task.id
        while "waiting" not in working_lines([await anext(stream)]):
            pass
        subscription = on_b.subscribe(SubscribeToTaskRequest(id=task_id))
        followed = [await anext(subscription)]  # subscribed before the cancel: a task that has ended refuses it
        following = asyncio.create_task(_rest(subscription))
        snapshot = await on_b.get_task(GetTaskRequest(id=task_id))
        cancelled = await on_b.cancel_task(CancelTaskRequest(id=task_id))
        followed += await asyncio.wait_for(following, DEADLINE)
        rest = [update async for update in stream]
    for served in serve:
        served.stop()

    assert snapshot.status.state == TaskState.TASK_STATE_WORKING
    assert status_text(snapshot) in ("running wait()", "waiting")  # the last line on record
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert kinds(followed)[0] == "task"
    assert kinds(followed)[-1] == "CANCELED"
    assert kinds(rest)[-1] == "CANCELED"


async def _rest(updates: AsyncIterator[object]) -> list[object]:
    return [update async for update in updates]


async def test_without_a_bus_a_task_of_another_process_is_not_cancellable_and_says_why(
    serve: list[Served], tmp_path: Path
) -> None:
    database = str(tmp_path / "pair.db")
    a, b = start(serve, database, tmp_path), start(serve, database, tmp_path)
    async with sdk_client(a) as on_a, sdk_client(b) as on_b:
        stream = on_a.send_message(ask("wait on a"))
        task_id = (await anext(stream)).task.id
        while "waiting" not in working_lines([await anext(stream)]):
            pass
        with pytest.raises(Exception, match="only PostgreSQL relays cancel requests") as refused:
            await on_b.cancel_task(CancelTaskRequest(id=task_id))
        await on_a.cancel_task(CancelTaskRequest(id=task_id))
        rest = [update async for update in stream]

    assert type(refused.value).__name__ == "TaskNotCancelableError"
    assert kinds(rest)[-1] == "CANCELED"


async def test_hookline_serve_stops_within_2_s_with_a_task_streaming(serve: list[Served], tmp_path: Path) -> None:
    url = start(serve, str(tmp_path / "stop.db"), tmp_path)
    async with sdk_client(url) as client:
        stream = client.send_message(ask("wait for the end"))
        await anext(stream)
        while "waiting" not in working_lines([await anext(stream)]):
            pass
        stopping = time.monotonic()
        serve[0].process.send_signal(signal.SIGTERM)
        rest = [update async for update in stream]
        await asyncio.to_thread(serve[0].process.wait, DEADLINE)

    assert time.monotonic() - stopping < 2.0 + SLACK, "hookline serve stops within 2 s of SIGTERM"
    assert kinds(rest)[-1] == "CANCELED"  # the run was cancelled; its stream said so before it closed
