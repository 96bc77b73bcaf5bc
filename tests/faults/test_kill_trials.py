"""A run survives its process: SIGKILL at a random moment loses nothing, and the session finishes.

Each trial starts kill_worker.py on a fresh session of one shared store (a SQLite file, or a
PostgreSQL database), kills it with SIGKILL after a random delay, then finishes the session
from a fresh process through the public API (`resume`, or the prompt again if it never
reached the log). After every trial:

- the log loads, its seq is gap-free 1..n, and every append the killed process saw
  acknowledged is still there, unchanged (nothing lost);
- the prompt view is a valid conversation: every tool call answered exactly once, right
  after its call; no call id has two results;
- every tool ran at most once per call id (the worker's side file counts real executions),
  and a call that ran is never presented as "not started";
- the run finishes with the model's final answer.

In a third of the trials the first resumption is killed too, at a random moment. Recovery
time is measured from the last kill to the resumed run's completion (the resuming process is
started beforehand, as a standby worker would be). Short mode: 10 trials per store;
HOOKLINE_FAULTS_LONG=1: 200 per store.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import signal
import subprocess
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hookline import Event, SessionNotFound
from hookline.conversation import open_calls
from hookline.sessions import PostgresSessionStore, SessionStore, SQLiteSessionStore

from ._harness import HERE, Worker, last_message, log_problems, percentile, publish, read_lines, trial_count

WORKER = HERE / "kill_worker.py"
FINAL = "all three recorded"  # kill_worker.FINAL
CALL_IDS = {"c1", "c2a", "c2b", "c3"}  # kill_worker.TURNS

pytestmark = [pytest.mark.faults, pytest.mark.slow]


@dataclass
class Trial:
    """What one trial saw."""

    number: int
    kills: int = 0
    phase: str = "not killed"
    recovery: float = math.nan
    problems: list[str] = field(default_factory=list)


@dataclass
class Context:
    """What every trial of a series shares."""

    backend: str
    target: str
    folder: Path
    store: SessionStore
    runner: asyncio.Runner
    rng: random.Random


def summary(trials: list[Trial], backend: str, seed: int) -> dict[str, object]:
    """The figures of a series of trials."""
    killed = [t for t in trials if t.kills]
    recoveries = [t.recovery for t in killed if not t.problems]
    return {
        "store": backend,
        "seed": seed,
        "trials": len(trials),
        "killed": len(killed),
        "killed_again_while_resuming": sum(1 for t in trials if t.kills > 1),
        "failures": sum(1 for t in trials if t.problems),
        "failures_by_kind": {k: n for k in KINDS if (n := sum(1 for t in trials if _has(t, k)))},
        "phases": dict(Counter(t.phase for t in killed)),
        "recovery_p50_s": round(percentile(recoveries, 50), 3),
        "recovery_p99_s": round(percentile(recoveries, 99), 3),
        "recovery_max_s": round(max(recoveries, default=math.nan), 3),
    }


def _has(trial: Trial, kind: str) -> bool:
    return any(p.startswith(f"{kind}: ") for p in trial.problems)


def open_store(backend: str, target: str) -> SessionStore:
    return SQLiteSessionStore(target) if backend == "sqlite" else PostgresSessionStore(target)


def test_sigkill_at_random_moments_loses_nothing_and_the_session_finishes(
    backend: str, target: str, tmp_path: Path
) -> None:
    seed = int(os.environ.get("HOOKLINE_FAULTS_SEED") or random.randrange(2**32))
    count = trial_count(10, 200)
    trials: list[Trial] = []
    with asyncio.Runner() as runner:
        store = open_store(backend, target)
        context = Context(backend, target, tmp_path, store, runner, random.Random(seed))
        try:
            horizon = 0.0  # the first trial runs unkilled, to learn how long a run takes
            for number in range(count):
                trial, took = run_trial(number, context, horizon)
                horizon = horizon or took * 1.1
                trials.append(trial)
        finally:
            runner.run(store.aclose())
    figures = summary(trials, backend, seed)
    publish("kill_trials", figures)
    failed = [t for t in trials if t.problems]
    detail = "; ".join(f"trial {t.number} ({t.phase}): {t.problems}" for t in failed[:5])
    assert not failed, f"{len(failed)} of {count} trials broke a promise ({figures}): {detail}"


def run_trial(number: int, context: Context, horizon: float) -> tuple[Trial, float]:
    """One trial: run; kill at a random moment, and in a third of the trials kill the first
    resumption too; then resume to the end and check. The first trial is never killed.

    Each process is started (and has connected) before the previous one is killed, as a
    standby worker would be, so the recovery time is the store's and hookline's, not Python's.
    """
    trial = Trial(number)
    session_id = f"kill-{number}-{uuid.uuid4().hex[:6]}"
    effects, acks = context.folder / f"{session_id}.effects", context.folder / f"{session_id}.acks"
    args = (context.backend, context.target, session_id, str(effects), str(acks))
    spawned: list[Worker] = []

    def spawn(mode: str) -> Worker:
        spawned.append(Worker(WORKER, mode, *args, stderr=context.folder / f"{session_id}.{len(spawned)}.err"))
        spawned[-1].expect("ready")
        return spawned[-1]

    took, killed_at = 0.0, 0.0
    attempts = 1 if not horizon else 2 if context.rng.random() < 1 / 3 else 1
    try:
        current = spawn("run")
        for attempt in range(attempts):
            standby = spawn("recover")
            current.send("go")
            started = time.monotonic()
            window = horizon / (1 + attempt)  # a resumption has less left to do than the run
            if kill_after(current, context.rng.uniform(0, window) if horizon else 120.0):
                killed_at = time.monotonic()
                trial.kills += 1
                if trial.kills == 1:
                    trial.phase = phase(context.runner.run(read_log(context.store, session_id)))
            took = took or time.monotonic() - started
            current.stop()
            current = standby
        before = context.runner.run(read_log(context.store, session_id))
        current.send("go")
        outcome = current.result(timeout=120)
        if trial.kills:
            trial.recovery = time.monotonic() - killed_at
        after = context.runner.run(read_log(context.store, session_id))
        trial.problems = check_trial(outcome, before, after, read_lines(effects), read_lines(acks))
    except (AssertionError, TimeoutError) as exc:
        trial.problems.append(f"unfinished: {type(exc).__name__}: {exc}")
    finally:
        for worker in spawned:
            worker.stop()
    return trial, took


def kill_after(worker: Worker, delay: float) -> bool:
    """SIGKILL `worker` after `delay` s unless it ends first; say whether it was killed."""
    try:
        worker.process.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.kill(worker.process.pid, signal.SIGKILL)
        worker.process.wait()
        return True
    return False


async def read_log(store: SessionStore, session_id: str) -> list[Event]:
    try:
        return await store.events(session_id, view="all")
    except SessionNotFound:
        return []


def phase(log: list[Event]) -> str:
    """Where in the run the kill landed, read from the log it left."""
    last = last_message(log)
    if last is None:
        return "before the prompt was stored"
    messages = [e.to_message() for e in log if e.kind == "message" and not e.partial]
    if open_calls(messages):
        return "while tools ran"
    if last.role == "assistant":
        return "after the answer"
    return "while the model answered"


def check_trial(
    outcome: dict[str, Any], before: list[Event], after: list[Event], effects: list[str], acks: list[str]
) -> list[str]:
    """Every broken promise of one trial, each prefixed by its kind (a key of `KINDS`)."""
    found = {
        "unfinished": unfinished(outcome, after),
        "broken log": log_problems(after),
        "lost": lost(before, after, acks),
        "ran twice": ran_twice(effects),
        "misreported": [str(p) for p in outcome.get("problems", [])],
    }
    return [f"{kind}: {problem}" for kind, problems in found.items() for problem in problems]


KINDS = ("unfinished", "broken log", "lost", "ran twice", "misreported")


def unfinished(outcome: dict[str, Any], after: list[Event]) -> list[str]:
    problems = [f"the recovery failed: {outcome['error']}"] if "error" in outcome else []
    if outcome.get("output") != FINAL:
        problems.append(f"the recovered run ended {outcome.get('stop_reason')!r} with output {outcome.get('output')!r}")
    last = last_message(after)
    if last is None or last.role != "assistant" or last.text != FINAL:
        problems.append(f"the log does not end with the final answer: {last.text if last else None!r}")
    return problems


def lost(before: list[Event], after: list[Event], acks: list[str]) -> list[str]:
    """Acknowledged appends missing or changed; events the recovery rewrote."""
    by_seq = {e.seq: e.id for e in after}
    problems = []
    missing = [line for line in acks if by_seq.get(int(line.split()[0])) != line.split()[1]]
    if missing:
        problems.append(f"acknowledged appends lost or changed: {missing[:5]}")
    changed = [e.seq for e in before if by_seq.get(e.seq) != e.id]
    if changed:
        problems.append(f"events present after the kill were changed by the recovery: seq {changed[:5]}")
    return problems


def ran_twice(effects: list[str]) -> list[str]:
    ran = Counter(effects)
    problems = []
    twice = sorted(call_id for call_id, n in ran.items() if n > 1)
    if twice:
        problems.append(f"tool call(s) executed more than once: {twice}")
    if set(ran) - CALL_IDS:
        problems.append(f"unexpected executions: {sorted(set(ran) - CALL_IDS)}")
    return problems
