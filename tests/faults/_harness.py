"""Helpers the fault suite shares: the log checker, worker processes, figures, throwaway databases.

The suite runs a short mode by default; `HOOKLINE_FAULTS_LONG=1` asks for the long mode.
`HOOKLINE_FAULTS_REPORT=path` makes each trial-running test append its figures to `path`
as one JSON object per line (docs/reliability.md is written from them).
"""

from __future__ import annotations

import json
import math
import os
import selectors
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import asyncpg

from hookline import Event
from hookline.conversation import conversation_problem

HERE = Path(__file__).parent
LONG = os.environ.get("HOOKLINE_FAULTS_LONG") == "1"
POSTGRES_SERVER = os.environ.get("HOOKLINE_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432")


def trial_count(short: int, long: int) -> int:
    """How many trials to run: `short` by default, `long` with HOOKLINE_FAULTS_LONG=1."""
    override = os.environ.get("HOOKLINE_FAULTS_TRIALS")
    if override:
        return int(override)
    return long if LONG else short


# --- the log checker -------------------------------------------------------------------------


def log_problems(events: Sequence[Event], *, complete: bool = True, unique_call_ids: bool = True) -> list[str]:
    """Every broken promise of one session's stored log (the `all` view); empty when it is sound.

    Args:
        events: The log, as `store.events(session_id, view="all")` returns it.
        complete: Whether every tool call must be answered (False allows calls still open at
            the end, as a paused or killed run leaves them).
        unique_call_ids: Whether a call id may appear in one turn only. The loop's promise is
            per turn (some servers reuse ids across turns); scripted models never reuse them,
            so there a reused id means a call was made or answered twice.
    """
    stored = [e for e in events if not e.partial]
    problems: list[str] = []
    seqs = [e.seq for e in stored]
    if seqs != list(range(1, len(seqs) + 1)):
        problems.append(f"seq is not gap-free 1..{len(seqs)}: {_runs(seqs)}")
    ids = Counter(e.id for e in stored)
    if any(count > 1 for count in ids.values()) or None in ids:
        problems.append("event ids are missing or repeated")
    messages = [e.to_message() for e in stored if e.kind == "message"]
    problem = conversation_problem(messages, allow_open_tail=not complete)
    if problem:
        problems.append(f"the prompt view is not a valid conversation: {problem}")
    if not unique_call_ids:
        return problems
    results = Counter(r.call_id for m in messages for r in m.tool_results)
    twice = sorted(call_id for call_id, count in results.items() if count > 1)
    if twice:
        problems.append(f"tool call(s) with more than one result: {twice}")
    calls = Counter(c.id for m in messages if m.role == "assistant" for c in m.tool_calls)
    repeated = sorted(call_id for call_id, count in calls.items() if count > 1)
    if repeated:
        problems.append(f"tool call id(s) made twice: {repeated}")
    return problems


def _runs(seqs: Sequence[int | None]) -> str:
    shown = ", ".join(str(s) for s in seqs[:40])
    return shown + (" ..." if len(seqs) > 40 else "")


def assistant_texts(events: Sequence[Event]) -> list[str]:
    """The texts of the stored assistant messages, in order."""
    return [e.text for e in events if e.kind == "message" and e.role == "assistant" and not e.partial]


def last_message(events: Sequence[Event]) -> Event | None:
    """The last stored message event of a log, or None."""
    return next((e for e in reversed(events) if e.kind == "message" and not e.partial), None)


# --- worker processes ------------------------------------------------------------------------


class Worker:
    """A Python script run in its own process, spoken to one line at a time.

    stdout carries the protocol (one line per message); stderr goes to a file, so that a
    chatty worker can never block on a full pipe.
    """

    def __init__(self, script: Path, *args: str, stderr: Path) -> None:
        self.stderr_path = stderr
        self._stderr = stderr.open("w")
        self.process = subprocess.Popen(
            [sys.executable, str(script), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            bufsize=1,
        )

    def read_line(self, timeout: float) -> str:
        """The next line the worker prints; '' if it exits first; `TimeoutError` after `timeout` s."""
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout):
                raise TimeoutError(f"the worker said nothing for {timeout:g} s; stderr: {self.stderr_tail()}")
        return self.process.stdout.readline().strip()

    def expect(self, word: str, timeout: float = 60.0) -> None:
        """Wait for the worker to print `word`."""
        line = self.read_line(timeout)
        if line != word:
            raise AssertionError(f"the worker printed {line!r}, not {word!r}; stderr: {self.stderr_tail()}")

    def send(self, line: str) -> None:
        """Write one line to the worker's stdin."""
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def result(self, timeout: float = 60.0, exit_timeout: float = 15.0) -> Any:
        """The JSON value the worker prints last; it must then exit within `exit_timeout` s."""
        line = self.read_line(timeout)
        try:
            answer = json.loads(line)
        except ValueError:
            raise AssertionError(f"the worker printed {line!r}; stderr: {self.stderr_tail()}") from None
        try:
            self.process.wait(exit_timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the worker did its work but did not exit within {exit_timeout:g} s") from None
        return answer

    def stderr_tail(self, size: int = 3000) -> str:
        """The end of what the worker wrote to stderr."""
        self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")[-size:]

    def stop(self) -> None:
        """Kill the worker if it still runs, and reap it."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self._stderr.close()


def durable_append(path: Path, line: str) -> None:
    """Append one line to `path` and fsync it: it survives a SIGKILL right after."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def read_lines(path: Path) -> list[str]:
    """The lines of a side file (none if it does not exist)."""
    return path.read_text().splitlines() if path.exists() else []


# --- figures ---------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The `q`-th percentile (0-100) of `values`, by nearest rank; NaN when there are none."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def publish(name: str, figures: dict[str, Any]) -> None:
    """Append `figures` to the file HOOKLINE_FAULTS_REPORT names, if it is set."""
    target = os.environ.get("HOOKLINE_FAULTS_REPORT")
    if not target:
        return
    row = {"test": name, "long": LONG, "at": time.strftime("%Y-%m-%d %H:%M:%S"), **figures}
    with open(target, "a") as out:
        out.write(json.dumps(row) + "\n")


# --- PostgreSQL ------------------------------------------------------------------------------


async def admin(statement: str, database: str = "postgres") -> None:
    """Run one statement on the test server (to create or drop a throwaway database)."""
    conn = await asyncpg.connect(f"{POSTGRES_SERVER}/{database}")
    try:
        await conn.execute(statement)
    finally:
        await conn.close()
