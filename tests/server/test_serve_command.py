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
