"""Sub-agents across processes (issue 27, part 1), on a SQLite file and on PostgreSQL: a run paused
inside its sub-agent is resumed by another process, and a process killed while the sub-agent's tool
ran is recovered by another one, which goes on with the same child session."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hookline._run.resume import DIED_REASON
from hookline.events import run_end
from hookline.sessions import PostgresSessionStore, SessionStore, SQLiteSessionStore

pytestmark = pytest.mark.anyio

WORKER = Path(__file__).with_name("worker.py")


def _run(shared: tuple[str, str], effects: Path, *args: str) -> dict[str, Any]:
    mode, *rest = args
    done = subprocess.run([sys.executable, str(WORKER), mode, *shared, str(effects), *rest], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return answer


def _store(shared: tuple[str, str]) -> SessionStore:
    kind, where = shared
    return SQLiteSessionStore(where) if kind == "sqlite" else PostgresSessionStore(where)


async def test_a_pause_inside_the_child_is_resumed_by_another_process(shared: tuple[str, str], tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    paused = _run(shared, effects, "prompt")
    assert paused["stop_reason"] == "interrupted"
    assert [(i["call_id"], i["agent"]) for i in paused["interruptions"]] == [("p1/r1", "researcher")]

    done = _run(shared, effects, "resume", json.dumps({"p1/r1": True}))
    assert (done["stop_reason"], done["output"]) == ("completed", "lead: researcher: deleted /tmp/old")
    assert effects.read_text().splitlines() == ["/tmp/old"]


async def test_a_crash_inside_the_child_is_recovered_in_the_same_child(shared: tuple[str, str],
                                                                        tmp_path: Path) -> None:
    effects, hold = tmp_path / "effects", tmp_path / "hold"
    command = [sys.executable, str(WORKER), "prompt", *shared, str(effects), "--hold", str(hold), "--no-approval"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not hold.exists():
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "the sub-agent's tool never started"
            time.sleep(0.05)
    finally:
        process.kill()
        process.wait(10)
        if process.stderr:
            process.stderr.close()

    recover = ("--no-approval",)
    first = _run(shared, effects, "resume", "{}", *recover)
    assert [(i["call_id"], i["reason"]) for i in first["interruptions"]] == [("p1", DIED_REASON)]
    second = _run(shared, effects, "resume", json.dumps({"p1": True}), *recover)
    assert [(i["call_id"], i["reason"]) for i in second["interruptions"]] == [("p1/r1", DIED_REASON)], (
        "the child's own started call is never re-run silently either")
    done = _run(shared, effects, "resume", json.dumps({"p1/r1": True}), *recover)
    assert (done["stop_reason"], done["output"]) == ("completed", "lead: researcher: deleted /tmp/old")

    async with _store(shared) as store:
        child = await store.events("s.p1", view="all")
        sessions = sorted(s.id for s in await store.list())
    assert sessions == ["s", "s.p1"], "no second child"
    assert [e.text for e in child if e.kind == "message" and e.role == "user"] == ["clean up"]
    assert sum(1 for e in child if e.text == "turn 1: calling model") == 1, "its first turn was not asked again"
    assert run_end(child[-1]) == "completed"
    assert effects.read_text().splitlines() == ["/tmp/old"]
