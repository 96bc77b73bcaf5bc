"""`hookline serve` as a service: its store choices and its defaults (issue 28)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

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
