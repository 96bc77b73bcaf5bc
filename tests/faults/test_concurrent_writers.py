"""Many writers at once never break a log: several processes, each with several threads.

Three worker processes (concurrency_worker.py) of three threads each run prompts with
`run_sync` against one SQLite file or one PostgreSQL database, alternating between one
session they all share and a session per thread. Afterwards every session's log is whole:

- gap-free seq, a valid conversation, each call answered once;
- made of whole runs only, never interleaved: each run is the prompt, its tool call, the
  call's result and the answer, in that order; exactly the runs that completed are there,
  and a run refused with `SessionBusy` left nothing behind;
- `SessionBusy` only as documented: never while waiting long enough, never on a session
  that only one thread uses, whatever the wait; no other error at all.

Short mode: 4 prompts per thread (36 runs per test); HOOKLINE_FAULTS_LONG=1: 16 (144 runs).
"""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from pathlib import Path

import pytest

from hookline import Event
from hookline.sessions import PostgresSessionStore, SessionStore, SQLiteSessionStore

from ._harness import HERE, LONG, Worker, log_problems

pytestmark = [pytest.mark.faults, pytest.mark.slow]

PROCESSES, THREADS = 3, 3
PROMPTS = 16 if LONG else 4  # per thread


def run_workers(backend: str, target: str, tmp_path: Path, wait: float) -> tuple[str, list[dict[str, str]]]:
    """Start the workers together; return the shared session's id and every run's outcome."""
    run = uuid.uuid4().hex[:6]
    shared = f"shared-{run}"
    workers = [
        Worker(HERE / "concurrency_worker.py", backend, target, f"w{n}-{run}", str(THREADS), str(PROMPTS),
               str(wait), shared, stderr=tmp_path / f"w{n}.err")
        for n in range(PROCESSES)
    ]
    try:
        for worker in workers:
            worker.expect("ready")
        for worker in workers:
            worker.send("go")
        outcomes = [row for worker in workers for row in worker.result(timeout=180)]
    finally:
        for worker in workers:
            worker.stop()
    return shared, outcomes


async def read_logs(backend: str, target: str, sessions: set[str]) -> dict[str, list[Event]]:
    store: SessionStore = SQLiteSessionStore(target) if backend == "sqlite" else PostgresSessionStore(target)
    async with store:
        return {s: await store.events(s, view="all") for s in sessions}


def run_problems(session: str, log: list[Event], completed: set[str], refused: set[str]) -> list[str]:
    """What is wrong with one session's log, given the prompts that completed on it and those refused."""
    problems = [f"{session}: {p}" for p in log_problems(log)]
    messages = [e.to_message() for e in log if e.kind == "message"]
    runs = [messages[i : i + 4] for i in range(0, len(messages), 4)]
    seen: list[str] = []
    for run in runs:
        prompt = run[0].text
        shape = [(m.role, [c.id for c in m.tool_calls], [r.call_id for r in m.tool_results], m.text) for m in run]
        expected = [("user", [], [], prompt), ("assistant", [f"{prompt}-c"], [], ""),
                    ("tool", [], [f"{prompt}-c"], ""), ("assistant", [], [], f"done {prompt}")]
        if shape != expected:
            problems.append(f"{session}: a run is not whole or interleaves another: {shape}")
        seen.append(prompt)
    if set(seen) != completed or len(seen) != len(set(seen)):
        problems.append(f"{session}: the log holds runs {sorted(seen)}, but these completed: {sorted(completed)}")
    if refused & set(seen):
        problems.append(f"{session}: runs refused with SessionBusy left a trace: {sorted(refused & set(seen))}")
    return problems


def check(backend: str, target: str, outcomes: list[dict[str, str]], shared: str, *, busy_allowed: bool) -> None:
    assert len(outcomes) == PROCESSES * THREADS * PROMPTS
    by_session: dict[str, dict[str, set[str]]] = defaultdict(lambda: {"completed": set(), "busy": set()})
    problems = []
    for row in outcomes:
        outcome, session = row["outcome"], row["session"]
        if outcome in ("completed", "busy"):
            by_session[session][outcome].add(row["prompt"])
        else:
            problems.append(f"{row['prompt']} on {session}: {outcome}")
        if outcome == "busy" and (session != shared or not busy_allowed):
            problems.append(f"{row['prompt']} on {session}: SessionBusy where the contract rules it out")
    logs = asyncio.run(read_logs(backend, target, set(by_session)))
    for session, log in logs.items():
        problems += run_problems(session, log, by_session[session]["completed"], by_session[session]["busy"])
    assert not problems, problems[:10]


def test_writers_that_wait_all_complete_and_no_log_breaks(backend: str, target: str, tmp_path: Path) -> None:
    shared, outcomes = run_workers(backend, target, tmp_path, wait=120.0)
    check(backend, target, outcomes, shared, busy_allowed=False)


def test_writers_that_do_not_wait_get_session_busy_only_on_the_shared_session(
    backend: str, target: str, tmp_path: Path
) -> None:
    shared, outcomes = run_workers(backend, target, tmp_path, wait=0.0)
    check(backend, target, outcomes, shared, busy_allowed=True)
