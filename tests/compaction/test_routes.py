"""The server's side of compaction (issue 27, part 3): undoing one through
`POST /v1/sessions/{id}/compactions/undo`, and the inspector rebuilding a model call from the summary."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from hookline.server import create_app
from server.live import TOKENS, LiveServer
from support.backends import open_store

from .agents import Notes, chatty

pytestmark = pytest.mark.anyio

ALICE, BOB = {"Authorization": "Bearer tok-alice"}, {"Authorization": "Bearer tok-bob"}


@pytest.fixture
def notes() -> Notes:
    return Notes()


@pytest.fixture
def served(shared: tuple[str, str], notes: Notes) -> Iterator[LiveServer]:
    store = open_store(*shared)
    server = LiveServer(create_app(chatty(store, notes), store, tokens=TOKENS)).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def http(served: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=served.url, timeout=20, headers=ALICE) as client:
        yield client


async def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def test_a_user_undoes_a_compaction_and_the_inspector_rebuilds_calls_from_it(
    http: httpx.AsyncClient, notes: Notes
) -> None:
    await _ok(await http.post("/v1/sessions", json={"id": "s"}), 201)
    for number in range(1, 5):
        await _ok(await http.post("/v1/sessions/s/runs", json={"prompt": f"q{number}"}))
    assert notes.summaries == [5]
    log = await _ok(await http.get("/v1/sessions/s/events", params={"view": "ui"}))
    (summary,) = [e for e in log if "compaction" in e["metadata"]]
    assert summary["author"] == "compaction", "a front end sees the summary where it happened"

    answer = next(e for e in log if e["kind"] == "message" and e["parts"][0]["text"] == "answer to q4")
    call = await _ok(await http.get(f"/v1/sessions/s/model-calls/{answer['seq']}"))
    assert [m["parts"][0]["text"] for m in call["request"]["messages"]] == notes.requests[3]

    assert (await http.post("/v1/sessions/s/compactions/undo", headers=BOB)).status_code == 404
    line = await _ok(await http.post("/v1/sessions/s/compactions/undo"))
    assert (line["author"], line["metadata"]["compaction_undone"]) == ("alice", summary["metadata"]["compaction"]["id"])
    again = await _ok(await http.post("/v1/sessions/s/compactions/undo"), 422)
    assert again["error"] == "invalid_compaction"
    named = await _ok(await http.post("/v1/sessions/s/compactions/undo", json={"id": "nope"}), 422)
    assert "has no compaction 'nope'" in named["message"]

    await _ok(await http.post("/v1/sessions/s/runs", json={"prompt": "q5"}))
    assert notes.summaries == [5, 7], "undone, the next run has the 9 messages again, and summarises 7 of them anew"
