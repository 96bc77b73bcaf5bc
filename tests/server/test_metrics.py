"""`GET /metrics` (issue 28): this process's runs in the Prometheus text format."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from .api import model_called, new_session
from .live import LiveServer

pytestmark = pytest.mark.anyio


def samples(text: str) -> dict[str, float]:
    """`{name{labels}: value}` of every sample line of a Prometheus text answer."""
    found = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            found[name] = float(value)
    return found


async def test_runs_their_outcomes_durations_tokens_and_queue_are_counted(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    assert (await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hello"})).status_code == 200
    assert (await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "fail"})).status_code == 502
    running = asyncio.ensure_future(client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "slow"}))
    await model_called(client, session_id)
    queued = await client.post(f"/v1/sessions/{session_id}/runs",
                               json={"prompt": "later", "if_busy": "enqueue", "background": True})
    assert queued.status_code == 202
    answer = await client.get("/metrics")
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    during = samples(answer.text)
    await running
    assert during["hookline_runs_started_total"] == 3
    assert during['hookline_runs_ended_total{outcome="completed"}'] == 1
    assert during['hookline_runs_ended_total{outcome="failed"}'] == 1
    assert during["hookline_run_duration_seconds_count"] == 2
    assert during['hookline_run_duration_seconds_bucket{le="+Inf"}'] == 2
    assert during["hookline_run_duration_seconds_sum"] > 0
    assert (during["hookline_runs_active"], during["hookline_runs_queued"]) == (1, 1)
    assert "# TYPE hookline_run_duration_seconds histogram" in answer.text


async def test_metrics_need_a_token_where_the_api_does(auth_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=auth_server.url) as http:
        assert (await http.get("/metrics")).status_code == 401
        with_token = await http.get("/metrics", headers={"Authorization": "Bearer tok-alice"})
        assert with_token.status_code == 200
