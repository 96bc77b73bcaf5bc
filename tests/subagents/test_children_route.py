"""`GET /v1/sessions/{id}/children` and a resume through the server that answers a sub-agent's paused
call (issue 27, part 1), on a real server over a SQLite file and over PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from hookline.server import create_app
from hookline.sessions import PostgresSessionStore, SessionStore, SQLiteSessionStore
from server.live import TOKENS, LiveServer

from .agents import lead, researcher

pytestmark = pytest.mark.anyio

ALICE, BOB = {"Authorization": "Bearer tok-alice"}, {"Authorization": "Bearer tok-bob"}


@pytest.fixture
def served(shared: tuple[str, str]) -> Iterator[tuple[LiveServer, list[str]]]:
    kind, where = shared
    store: SessionStore = SQLiteSessionStore(where) if kind == "sqlite" else PostgresSessionStore(where)
    effects: list[str] = []
    server = LiveServer(create_app(lead(researcher(effects), store), store, tokens=TOKENS)).start()
    try:
        yield server, effects
    finally:
        server.stop()


@pytest.fixture
async def http(served: tuple[LiveServer, list[str]]) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=served[0].url, timeout=20) as client:
        yield client


async def _json(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def test_the_children_of_a_session_and_a_resume_of_the_inner_call(
    http: httpx.AsyncClient, served: tuple[LiveServer, list[str]]
) -> None:
    await _json(await http.post("/v1/sessions", json={"id": "s"}, headers=ALICE), 201)
    paused = await _json(await http.post("/v1/sessions/s/runs", json={"prompt": "clean up"}, headers=ALICE))
    assert paused["stop_reason"] == "interrupted"
    assert [(i["call_id"], i["name"], i["agent"]) for i in paused["interruptions"]] == [
        ("p1/r1", "delete", "researcher")]

    children = await _json(await http.get("/v1/sessions/s/children", headers=ALICE))
    assert [{k: c[k] for k in ("session_id", "call_id", "agent")} for c in children] == [
        {"session_id": "s.p1", "call_id": "p1", "agent": "researcher"}]
    assert isinstance(children[0]["seq"], int)
    assert (await http.get("/v1/sessions/s/children", headers=BOB)).status_code == 404
    assert (await http.get("/v1/sessions/s.p1", headers=BOB)).status_code == 404
    child = await _json(await http.get("/v1/sessions/s.p1", headers=ALICE))
    assert child["user"] == "alice"

    done = await _json(await http.post("/v1/sessions/s/resume", json={"approvals": {"p1/r1": True}}, headers=ALICE))
    assert (done["stop_reason"], done["output"]) == ("completed", "lead: researcher: deleted /tmp/old")
    assert served[1] == ["/tmp/old"]
    log = await _json(await http.get("/v1/sessions/s/events", params={"view": "ui"}, headers=ALICE))
    audit = [e["metadata"]["approval"] for e in log if "approval" in e["metadata"]]
    assert [(a["call_id"], a["decision"], a["user"]) for a in audit] == [("p1/r1", "approved", "alice")]
    again = await _json(await http.get("/v1/sessions/s/children", headers=ALICE))
    assert [c["session_id"] for c in again] == ["s.p1"], "a child named twice is listed once"
    timeline = await _json(await http.get("/v1/sessions/s/timeline", headers=ALICE))
    tools = [s for run in timeline["runs"] for s in run["spans"] if s["kind"] == "tool"]
    assert [(s["call_id"], s["child_session_id"]) for s in tools] == [("p1", "s.p1"), ("p1", "s.p1")], (
        "the inspector finds the child under its call, in the run that paused and the one that finished")


async def test_a_resume_naming_an_inner_call_never_made_answers_422(http: httpx.AsyncClient) -> None:
    await _json(await http.post("/v1/sessions", json={"id": "s"}, headers=ALICE), 201)
    await _json(await http.post("/v1/sessions/s/runs", json={"prompt": "clean up"}, headers=ALICE))
    answer = await http.post("/v1/sessions/s/resume", json={"approvals": {"p1/zz": True}}, headers=ALICE)
    body = await _json(answer, 422)
    assert body["error"] == "invalid_approvals"
    assert "p1/r1" in body["message"]
