"""The servers the served benchmark measures, each started as its users start it, and one run on each.

A target knows how to start its server (a child process on a free port of 127.0.0.1, with
the add-loop's fake model waiting `delay` seconds a call), how to make a session, and how to
run the scenario's prompt in it, as JSON or as server-sent events, checking the answer: a
run counts only when it ended with "done" after its tool calls.

- `hookline-*`: `hookline serve bench/served/hookline_agent.py:agent`, its sessions in a
  SQLite file, in memory (`--db :memory:`) or in a PostgreSQL database made for the run.
- `adk-*`, `langgraph-dev`: the peers' own servers (`peers.py`), run from the peers' venv.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from client import Answer, Connection

HERE = Path(__file__).resolve().parent
USER_PROMPT = "Please add some numbers."
STARTUP_LIMIT = 120.0
"""Seconds a server may take to answer its first request."""


class Failed(Exception):
    """A run whose answer was not the scenario's (an error status, or not "done" after its tool calls)."""


@dataclass
class Server:
    """A started server: its process (the root of its process tree) and its base URL."""

    process: subprocess.Popen[bytes]
    url: str
    log: Path
    cleanup: list[Any] = field(default_factory=list)

    def stop(self) -> None:
        """SIGTERM the server (its process group); kill it after 15 s; then undo what its start made."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        for undo in self.cleanup:
            undo()


def spawn(command: list[str], *, env: dict[str, str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    """Start `command` in a process group of its own (so its whole tree can be stopped), its output in `log`."""
    with log.open("wb") as sink:
        return subprocess.Popen(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink,
                                start_new_session=True)


def wait_for_url(
    process: subprocess.Popen[bytes], log: Path, health: str, *, pattern: str | None = None, base: str | None = None
) -> str:
    """The server's base URL (`base`, or found in its log by `pattern`) once `health` answers 200 there."""
    deadline = time.monotonic() + STARTUP_LIMIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args} ended: {log.read_text(errors='replace')[-3000:]}")
        found = re.search(pattern, log.read_text(errors="replace")) if pattern is not None else None
        url = found.group(1) if found else base
        if url is not None and _answers(url + health):
            return url
        time.sleep(0.1)
    raise RuntimeError(f"{process.args} did not start within {STARTUP_LIMIT:g} s: {log.read_text()[-3000:]}")


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without hookline's and the providers' settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HOOKLINE_", "OPENAI_", "GOOGLE_"))}
    return env | extra


def expect(answer: Answer, status: int, what: str) -> None:
    """Raise `Failed` unless `answer` has `status`."""
    if answer.status != status:
        raise Failed(f"{what} answered {answer.status}: {str(answer.body)[:300]}")


class Target:
    """A server under measurement."""

    name: ClassVar[str]
    server: ClassVar[str]
    """What it is, for the table: the command and its session store."""

    def version(self) -> str:
        """The version of the server's framework."""
        raise NotImplementedError

    def start(self, delay: float, workdir: Path) -> Server:
        """Start the server, its model waiting `delay` s a call; its files in `workdir`."""
        raise NotImplementedError

    async def new_session(self, conn: Connection) -> str:
        """Make a session; return its id."""
        raise NotImplementedError

    async def run(self, conn: Connection, session_id: str, *, sse: bool) -> None:
        """Run the prompt in the session and check the answer (`Failed` otherwise)."""
        raise NotImplementedError


class Hookline(Target):
    """`hookline serve` with the store `store`: "sqlite", "memory" or "postgres"."""

    server = "hookline serve"

    def __init__(self, store: str) -> None:
        self.store = store
        self.name = f"hookline-{store}"  # type: ignore[misc]

    def version(self) -> str:
        import hookline

        return hookline.__version__

    def start(self, delay: float, workdir: Path) -> Server:
        hookline = shutil.which("hookline", path=str(Path(sys.executable).parent)) or "hookline"
        cleanup: list[Any] = []
        db = self._database(workdir, cleanup)
        log = workdir / f"{self.name}.log"
        command = [hookline, "serve", f"{HERE / 'hookline_agent.py'}:agent", "--port", "0", "--db", db,
                   "--log-level", "warning"]
        process = spawn(command, env=clean_env(SERVED_MODEL_DELAY=str(delay)), cwd=workdir, log=log)
        url = wait_for_url(process, log, "/healthz", pattern=r"on (http://127\.0\.0\.1:\d+)")
        return Server(process, url, log, cleanup)

    def _database(self, workdir: Path, cleanup: list[Any]) -> str:
        if self.store == "memory":
            return ":memory:"
        if self.store == "sqlite":
            path = workdir / f"{self.name}.db"
            path.unlink(missing_ok=True)
            return str(path)
        from postgres import fresh_database

        dsn, drop = fresh_database()
        cleanup.append(drop)
        return dsn

    async def new_session(self, conn: Connection) -> str:
        answer = await conn.request("POST", "/v1/sessions", {})
        expect(answer, 201, "POST /v1/sessions")
        return str(answer.body["id"])

    async def run(self, conn: Connection, session_id: str, *, sse: bool) -> None:
        answer = await conn.request("POST", f"/v1/sessions/{session_id}/runs", {"prompt": USER_PROMPT}, sse=sse)
        expect(answer, 200, "POST /v1/sessions/{id}/runs")
        if sse:
            said = [f for f in answer.frames if f.get("kind") == "message" and f.get("role") == "assistant"]
            ended = [f for f in answer.frames if f.get("kind") == "status"][-1:]
            if not said or _text(said[-1]) != "done" or not ended or _text(ended[0]) != "run completed":
                raise Failed(f"the stream did not end with 'done' and 'run completed': {answer.frames[-3:]}")
        elif answer.body.get("output") != "done" or answer.body.get("stop_reason") != "completed":
            raise Failed(f"the run answered {str(answer.body)[:300]}")


def _text(event: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in event.get("parts", []))


def hookline_targets() -> list[Target]:
    """`hookline serve` on each of its stores."""
    return [Hookline("sqlite"), Hookline("memory"), Hookline("postgres")]
