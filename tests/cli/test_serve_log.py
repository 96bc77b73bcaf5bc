"""`hookline serve` logs to stderr, at `--log-level`, and no line carries a credential (issue 29, defects 1 and 7).

The tool-log capture puts a handler on the root logger at a run's start; before, that handler
stopped Python's last-resort output, so after the first run the server's own error lines
(a 500's traceback, a 503's cause) were lost.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from .test_cli_subprocess import AGENTS, Running, clean_env, served_url


def serve(tmp_path: Path, agent: str, *more: str) -> Running:
    return Running(["serve", f"{AGENTS}:{agent}", "--port", "0", "--db", str(tmp_path / "s.db"), *more],
                   clean_env(), tmp_path)


def test_a_failed_run_is_logged_with_its_traceback_after_tools_ran(tmp_path: Path) -> None:
    with serve(tmp_path, "failing") as running:
        base = served_url(running)
        session = httpx.post(f"{base}/v1/sessions", json={}).json()["id"]
        answer = httpx.post(f"{base}/v1/sessions/{session}/runs", json={"prompt": "2+3?"}, timeout=30)
        assert answer.status_code == 500
        running.wait_for(f"POST /v1/sessions/{session}/runs failed")
        running.wait_for("RuntimeError: the hook broke")
        running.interrupt()
        running.exit()


def test_the_access_log_carries_no_token_of_a_query(tmp_path: Path) -> None:
    with serve(tmp_path, "agent", "--access-log") as running:
        base = served_url(running)
        assert httpx.get(f"{base}/healthz", params={"access_token": "sekrit-tok"}).status_code == 200
        running.wait_for("GET /healthz?access_token=*** HTTP/1.1")
        running.interrupt()
        running.exit()
    assert b"sekrit-tok" not in running.stderr


def test_log_level_warning_leaves_out_the_access_log(tmp_path: Path) -> None:
    with serve(tmp_path, "failing", "--log-level", "warning") as running:
        base = served_url_quiet(running)
        session = httpx.post(f"{base}/v1/sessions", json={}).json()["id"]
        assert httpx.post(f"{base}/v1/sessions/{session}/runs", json={"prompt": "2+3?"}, timeout=30).status_code == 500
        running.wait_for("ERROR hookline.server: POST")
        running.interrupt()
        running.exit()
    assert b"Application startup complete" not in running.stderr
    assert b'"POST /v1/sessions HTTP/1.1" 201' not in running.stderr


def served_url_quiet(running: Running) -> str:
    """The URL of a server that logs no startup line (it listens before it says where: a request waits)."""
    running.wait_for("serving agent")
    match = re.search(rb"on (http://127\.0\.0\.1:\d+)", running.stderr)
    assert match is not None, running.stderr.decode()
    return match.group(1).decode()
