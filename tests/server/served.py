"""Real `hookline serve` processes for the tests, each on a free port of 127.0.0.1."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from support.waiting import DEADLINE, wait_until

HOOKLINE = shutil.which("hookline", path=str(Path(sys.executable).parent))
"""The console script of the venv running the tests (None: not installed)."""


class Served:
    """`hookline serve AGENT --db DB` on a free port of 127.0.0.1, its stderr read in a thread."""

    def __init__(self, agent: str, db: str, cwd: Path, *more: str) -> None:
        assert HOOKLINE is not None
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HOOKLINE_", "OPENAI_"))}
        self.process = subprocess.Popen(
            [HOOKLINE, "serve", agent, "--port", "0", "--db", db, *more],
            env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        self.stderr = ""
        self.url = ""
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self._changed:
                self.stderr += line.decode(errors="replace")
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_url(self) -> str:
        pattern = re.compile(r"on (http://127\.0\.0\.1:\d+)")
        with self._changed:
            self._changed.wait_for(lambda: pattern.search(self.stderr) or self.process.poll() is not None, DEADLINE)
        match = pattern.search(self.stderr)
        assert match, f"hookline serve did not start: {self.stderr}"
        self.url = match.group(1)
        # The port is bound before the line is written, but connections are taken only once
        # uvicorn listens: wait for an answer.
        wait_until(self._healthy, f"hookline serve answered at {self.url}")
        return self.url

    def _healthy(self) -> bool:
        try:
            return httpx.get(f"{self.url}/healthz", timeout=DEADLINE).status_code == 200
        except httpx.ConnectError:
            assert self.process.poll() is None, f"hookline serve ended: {self.stderr}"
            return False

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(DEADLINE)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(DEADLINE)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self._reader.join(5)
            assert self.process.stderr is not None
            self.process.stderr.close()
        assert "Traceback" not in self.stderr, self.stderr
