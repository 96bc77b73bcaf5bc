"""`hookline serve` as a service: its store choices and its defaults (issue 28)."""

from __future__ import annotations

import signal
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from support.waiting import wait_until

from .served import HOOKLINE, Served

AGENT = f"{Path(__file__).with_name('live_agents.py')}:agent"

pytestmark = pytest.mark.skipif(HOOKLINE is None, reason="the hookline console script is not installed")


def test_db_memory_keeps_the_sessions_in_the_server_and_writes_no_file(tmp_path: Path) -> None:
    served = Served(AGENT, ":memory:", tmp_path)
    try:
        url = served.wait_url()
        assert "InMemorySessionStore" in served.stderr
        created = httpx.post(f"{url}/v1/sessions", json={"id": "kept"})
        assert created.status_code == 201
        assert httpx.get(f"{url}/v1/sessions/kept").json()["id"] == "kept"
    finally:
        served.stop()
    assert list(tmp_path.iterdir()) == [], "no SQLite file named ':memory:' (or any other)"


def test_the_access_log_is_off_unless_asked_for(tmp_path: Path) -> None:
    quiet, loud = Served(AGENT, ":memory:", tmp_path), Served(AGENT, ":memory:", tmp_path, "--access-log")
    try:
        for served in (quiet, loud):
            assert httpx.get(f"{served.wait_url()}/healthz").status_code == 200
    finally:
        quiet.stop()
        loud.stop()
    assert "GET /healthz HTTP/1.1" not in quiet.stderr
    assert "GET /healthz HTTP/1.1" in loud.stderr


@pytest.mark.parametrize(("flags", "engine"), [
    ((), "uvloop, httptools"),
    (("--loop", "asyncio", "--http", "h11"), "asyncio, h11"),
])
def test_the_event_loop_and_http_parser_are_uvloop_and_httptools_when_installed(
    tmp_path: Path, flags: tuple[str, ...], engine: str
) -> None:
    pytest.importorskip("uvloop")
    pytest.importorskip("httptools")
    served = Served(AGENT, ":memory:", tmp_path, *flags)
    try:
        url = served.wait_url()
        session = httpx.post(f"{url}/v1/sessions", json={}).json()["id"]
        run = httpx.post(f"{url}/v1/sessions/{session}/runs", json={"prompt": "hello"}, timeout=30)
        assert run.status_code == 200, run.text
    finally:
        served.stop()
    assert f"; {engine})" in served.stderr


def test_sigterm_with_drain_lets_a_running_run_finish_and_readyz_says_draining(tmp_path: Path) -> None:
    served = Served(AGENT, ":memory:", tmp_path, "--drain", "10")
    try:
        url = served.wait_url()
        session, other = (httpx.post(f"{url}/v1/sessions", json={}).json()["id"] for _ in range(2))
        with httpx.Client(base_url=url, timeout=30) as kept, ThreadPoolExecutor(1) as pool:
            assert kept.get("/readyz").status_code == 200
            running = pool.submit(kept.post, f"/v1/sessions/{session}/runs", json={"prompt": "steps 6 6.0"})
            # the run's status lines are stored when its tool ends: ask whether it runs, not for its lines
            wait_until(lambda: httpx.get(f"{url}/v1/inspect/sessions/{session}").json()["running"], "the run began")
            served.process.send_signal(signal.SIGTERM)
            draining = _readyz_while_draining(url, running)
            late = httpx.post(f"{url}/v1/sessions/{other}/runs", json={"prompt": "hello"}, timeout=10)
            answer = running.result()
        assert draining == "draining"
        assert (late.status_code, late.json()["error"], late.headers.get("retry-after")) == (503, "draining", "1")
        assert (answer.status_code, answer.json()["stop_reason"], answer.json()["output"]) == (200, "completed",
                                                                                              "stepped")
        assert served.process.wait(15) in (0, -signal.SIGTERM), "it ends once the run has (as SIGTERM ends it)"
    finally:
        served.stop()


def _readyz_while_draining(url: str, running: Future[httpx.Response]) -> str | None:
    """What /readyz says on a new connection once it answers 503, asked until it does or the run ends."""
    while not running.done():
        try:
            answer = httpx.get(f"{url}/readyz", timeout=5)
        except httpx.HTTPError:  # refused once the server stops listening
            return None
        if answer.status_code == 503:
            return str(answer.json()["error"])
        time.sleep(0.05)
    return None
