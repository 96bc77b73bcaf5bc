"""A worker killed with SIGKILL mid-run; another process recovers the run and finishes it.

Each scenario runs `worker.py` three times on one database: `start` (killed where it prints
"killpoint"), then `recover` (a fresh DBOS launch with the same application version), and,
in one scenario, `wrong-version` in between (another version must leave the run alone).
The workers append every model call and tool execution to a side file (fsync'd): the
tests count real executions there, and read the session log from PostgreSQL.
"""

from __future__ import annotations

import json
import selectors
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hookline import Event
from hookline._run.resume import DIED_REASON
from hookline.durable import WORKFLOW_KEY
from hookline.sessions import PostgresSessionStore

WORKER = Path(__file__).with_name("worker.py")
DEADLINE = 60.0  # generous: a loaded machine must not flake; a healthy run takes a second or two


class Worker:
    """`worker.py` in a process of its own; stdout is the protocol, stderr goes to a file."""

    def __init__(self, tmp_path: Path, mode: str, dsn: str, effects: Path, scenario: str) -> None:
        self.stderr_path = tmp_path / f"{mode}.stderr"
        self._stderr = self.stderr_path.open("w")
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER), mode, dsn, str(effects), scenario],
            stdout=subprocess.PIPE, stderr=self._stderr, text=True,
        )

    def line(self) -> str:
        """The next line the worker prints ('' when it exits first)."""
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(DEADLINE):
                raise AssertionError(f"the worker said nothing for {DEADLINE:g} s; stderr: {self.stderr()}")
        return self.process.stdout.readline().strip()

    def result(self) -> Any:
        """The JSON line the worker prints; it must then exit, by itself, at once."""
        line = self.line()
        assert line.startswith("{"), f"the worker printed {line!r}; stderr: {self.stderr()}"
        assert self.process.wait(DEADLINE) == 0, self.stderr()
        return json.loads(line)

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")[-3000:]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        assert self.process.stdout is not None
        self.process.stdout.close()
        self._stderr.close()


@pytest.fixture
def run_worker(tmp_path: Path, dsn: str) -> Any:
    started: list[Worker] = []

    def run(mode: str, scenario: str) -> Worker:
        started.append(Worker(tmp_path, mode, dsn, tmp_path / "effects", scenario))
        return started[-1]

    yield run
    for worker in started:
        worker.close()


def kill_at_the_killpoint(worker: Worker) -> None:
    line = worker.line()
    assert line == "killpoint", f"the worker printed {line!r}; stderr: {worker.stderr()}"
    worker.process.kill()  # SIGKILL: no cleanup, no finally, no goodbye to PostgreSQL
    worker.process.wait(DEADLINE)


def executions(tmp_path: Path) -> Counter[str]:
    return Counter((tmp_path / "effects").read_text().splitlines())


async def session_log(dsn: str, scenario: str) -> list[Event]:
    store = PostgresSessionStore(dsn)
    try:
        return await store.events(f"session-{scenario}", view="all")
    finally:
        await store.aclose()


def messages(log: list[Event]) -> list[tuple[str, str]]:
    """The log's messages as (role, text or tool results) pairs."""
    shown = []
    for event in (e for e in log if e.kind == "message"):
        results = "; ".join(p.content for p in event.parts if p.type == "tool_result")
        calls = ", ".join(p.name for p in event.parts if p.type == "tool_call")
        shown.append((str(event.role), event.text or results or f"calls {calls}"))
    return shown


def assert_signed_by_one_workflow(log: list[Event], workflow_id: str) -> None:
    assert {e.metadata.get(WORKFLOW_KEY) for e in log} == {workflow_id}


@pytest.mark.anyio
async def test_killed_while_the_model_answers_the_run_is_asked_again_elsewhere(
    run_worker: Any, dsn: str, tmp_path: Path
) -> None:
    kill_at_the_killpoint(run_worker("start", "model"))
    assert run_worker("wrong-version", "model").result() == {"status": "PENDING", "app_version": "v1"}

    recovered = run_worker("recover", "model").result()["recovered"]

    assert recovered["stop_reason"] == "completed"
    assert recovered["output"] == "done: noted a"
    assert [m["role"] for m in recovered["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert executions(tmp_path) == {"model call 0": 1, "note a": 1, "model call 1": 2}
    log = await session_log(dsn, "model")
    assert messages(log) == [("user", "go"), ("assistant", "calls note"), ("tool", "noted a"),
                             ("assistant", "done: noted a")]
    assert_signed_by_one_workflow(log, "run-model")


@pytest.mark.anyio
async def test_killed_after_the_answer_was_checkpointed_the_checkpoint_answers(
    run_worker: Any, dsn: str, tmp_path: Path
) -> None:
    kill_at_the_killpoint(run_worker("start", "answered"))

    recovered = run_worker("recover", "answered").result()["recovered"]

    assert (recovered["stop_reason"], recovered["output"]) == ("completed", "done: noted a")
    assert executions(tmp_path) == {"model call 0": 1, "note a": 1, "model call 1": 1, "after_llm waits": 1}
    log = await session_log(dsn, "answered")
    assert messages(log) == [("user", "go"), ("assistant", "calls note"), ("tool", "noted a"),
                             ("assistant", "done: noted a")]
    assert_signed_by_one_workflow(log, "run-answered")


@pytest.mark.anyio
async def test_killed_while_a_tool_runs_no_tool_runs_twice(run_worker: Any, dsn: str, tmp_path: Path) -> None:
    kill_at_the_killpoint(run_worker("start", "tool"))

    answer = run_worker("recover", "tool").result()

    # note finished before the kill (its result checkpointed, not yet in the log): the checkpoint
    # answers it; slow was running: it comes back as an interruption, never as a second run
    assert executions(tmp_path) == {"model call 0": 1, "note a": 1, "slow b started": 1, "model call 2": 1}
    recovered, resumed = answer["recovered"], answer["resumed"]
    assert recovered["stop_reason"] == "interrupted"
    assert [(i["call_id"], i["name"], i["reason"]) for i in recovered["interruptions"]] == [
        ("c2", "slow", DIED_REASON)
    ]
    assert [m["role"] for m in recovered["messages"]] == ["user", "assistant", "tool"]
    assert resumed["stop_reason"] == "completed"
    assert resumed["output"] == "done: noted a; the user refused the call to slow: it may have run already"
    log = await session_log(dsn, "tool")
    assert messages(log) == [
        ("user", "go"),
        ("assistant", "calls note, slow"),
        ("tool", "noted a"),
        ("tool", "the user refused the call to slow: it may have run already"),
        ("assistant", "done: noted a; the user refused the call to slow: it may have run already"),
    ]


@pytest.mark.anyio
async def test_an_approval_is_spent_once_its_call_started(run_worker: Any, dsn: str, tmp_path: Path) -> None:
    kill_at_the_killpoint(run_worker("start", "approved"))  # killed while the approved call ran

    answer = run_worker("recover", "approved").result()

    # the recovered resumption carries the user's approval of slow, but slow had started: it may
    # have taken effect, so it comes back as an interruption instead of running a second time
    assert executions(tmp_path) == {"model call 0": 1, "slow b started": 1, "model call 1": 1}
    recovered, resumed = answer["recovered"], answer["resumed"]
    assert recovered["stop_reason"] == "interrupted"
    assert [(i["call_id"], i["reason"]) for i in recovered["interruptions"]] == [("c2", DIED_REASON)]
    assert resumed["stop_reason"] == "completed"
    log = await session_log(dsn, "approved")
    assert messages(log) == [
        ("user", "go"),
        ("assistant", "calls slow"),
        ("tool", "the user refused the call to slow: it may have run already"),
        ("assistant", "done: the user refused the call to slow: it may have run already"),
    ]
    assert [e.metadata[WORKFLOW_KEY] for e in log if e.kind == "message"][:2] == ["run-approved", "run-approved"]


@pytest.mark.anyio
async def test_ctrl_c_stops_a_worker_at_once_and_its_run_goes_on_at_the_next_launch(
    run_worker: Any, dsn: str, tmp_path: Path
) -> None:
    worker = run_worker("start", "ctrl-c")
    assert worker.line() == "killpoint", worker.stderr()
    asked = time.monotonic()
    worker.process.send_signal(signal.SIGINT)
    worker.process.wait(DEADLINE)
    assert time.monotonic() - asked < 2.0, "Ctrl-C must end the worker within 2 s"

    recovered = run_worker("recover", "ctrl-c").result()["recovered"]

    cancelled = "the run was cancelled while this call ran; it may or may not have taken effect"
    assert executions(tmp_path) == {"model call 0": 1, "note a": 1, "slow b started": 1, "model call 2": 1}
    assert (recovered["stop_reason"], recovered["output"]) == ("completed", f"done: noted a; {cancelled}")
    log = await session_log(dsn, "ctrl-c")
    assert [e.text for e in log if e.kind == "status" and e.text.startswith("run ")] == ["run cancelled",
                                                                                         "run completed"]


FORGETFUL = """
import asyncio, sys
from dbos import DBOS
from hookline.durable import DurableAgent, dbos_config
from hookline.models import FunctionModel, ModelResponse
from hookline.sessions import PostgresSessionStore

agent = DurableAgent("forgetful", model=FunctionModel(lambda request: ModelResponse(text="hi")), queue=None,
                     session_store=PostgresSessionStore(sys.argv[1]))

async def main():
    DBOS(config=dbos_config(sys.argv[1], app="forgetful", version="forgetful-1", executor_id="forgetful"))
    DBOS.launch()
    print((await agent.run("hello", session_id="forgetful")).output, flush=True)  # and no DBOS.destroy()

asyncio.run(main())
"""


def test_a_script_that_never_destroys_dbos_still_exits(dsn: str, tmp_path: Path) -> None:
    script = tmp_path / "forgetful.py"
    script.write_text(FORGETFUL)
    done = subprocess.run([sys.executable, str(script), dsn], capture_output=True, text=True, timeout=DEADLINE,
                          check=False)
    assert (done.returncode, done.stdout) == (0, "hi\n"), done.stderr[-3000:]
