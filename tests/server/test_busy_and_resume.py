"""Answers that must not lie: a resume naming no paused call, and a delete while a run goes on anywhere."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from hookline._ids import session_id_problem
from hookline.events import Event
from hookline.server import create_app
from hookline.sessions import SessionStore
from hookline.sessions.postgres import PostgresSessionStore
from hookline.sessions.sqlite import SQLiteSessionStore

from .agent import DANGER_LOG, make_agent
from .api import SSE, new_session
from .live import LiveServer

pytestmark = pytest.mark.anyio

HOOKLINE = shutil.which("hookline", path=str(Path(sys.executable).parent))
CLI_AGENTS = Path(__file__).parent.parent / "cli" / "agents.py"


async def all_events(http: httpx.AsyncClient, session_id: str) -> list[dict[str, object]]:
    response = await http.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})
    assert response.status_code == 200, response.text
    events: list[dict[str, object]] = response.json()
    return events


async def paused_session(http: httpx.AsyncClient) -> tuple[str, str]:
    """A session whose run is paused on a `danger` call: its id and the call's id."""
    session_id = await new_session(http)
    result = (await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "danger"})).json()
    assert result["stop_reason"] == "interrupted", result
    return session_id, result["interruptions"][0]["call_id"]


# -- resume --------------------------------------------------------------------------------


@pytest.mark.parametrize("headers", [{}, SSE], ids=["json", "sse"])
async def test_resume_naming_an_unknown_call_answers_422_and_records_nothing(
    client: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    session_id, call_id = await paused_session(client)
    before = await all_events(client, session_id)
    response = await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {"nope": True}},
                                 headers=headers)
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "invalid_approvals"
    assert "nope" in response.json()["message"]
    assert await all_events(client, session_id) == before
    DANGER_LOG.clear()
    resumed = await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {call_id: True}})
    assert resumed.json()["stop_reason"] == "completed", "the paused call is still there to approve"
    assert DANGER_LOG == ["prod"]


def nothing_paused(session_id: str) -> dict[str, str]:
    return {"error": "nothing_paused",
            "message": f"session {session_id!r} has no paused calls: its last run ended (or none ran), so there is "
                       f"nothing to resume; send it a prompt instead (POST /v1/sessions/{session_id}/runs)"}


@pytest.mark.parametrize("headers", [{}, SSE], ids=["json", "sse"])
@pytest.mark.parametrize("approvals", [{}, {"c1": False}], ids=["no-approvals", "unknown-call"])
async def test_resume_with_nothing_paused_answers_409_and_runs_nothing(
    client: httpx.AsyncClient, approvals: dict[str, bool], headers: dict[str, str]
) -> None:
    session_id = await new_session(client)
    await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hello"})
    before = await all_events(client, session_id)
    response = await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": approvals}, headers=headers)
    assert response.status_code == 409, response.text
    assert response.json() == nothing_paused(session_id)
    assert await all_events(client, session_id) == before, "no run was started"


async def test_resume_of_a_session_that_never_ran_answers_409(client: httpx.AsyncClient) -> None:
    # Nothing to resume: the model must not be asked to answer an empty conversation.
    session_id = await new_session(client)
    response = await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {}})
    assert response.status_code == 409, response.text
    assert response.json() == nothing_paused(session_id)
    assert await all_events(client, session_id) == []


async def test_resume_again_after_the_paused_call_ran_answers_409(client: httpx.AsyncClient) -> None:
    session_id, call_id = await paused_session(client)
    DANGER_LOG.clear()
    approval = {"approvals": {call_id: True}}
    assert (await client.post(f"/v1/sessions/{session_id}/resume", json=approval)).status_code == 200
    before = await all_events(client, session_id)
    again = await client.post(f"/v1/sessions/{session_id}/resume", json=approval)
    assert again.status_code == 409, again.text
    assert again.json()["error"] == "nothing_paused"
    assert await all_events(client, session_id) == before
    assert DANGER_LOG == ["prod"], "the call ran once"


async def test_resume_naming_an_answered_call_while_another_is_paused_answers_422(client: httpx.AsyncClient) -> None:
    session_id, first = await paused_session(client)
    await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {first: True}})
    second = (await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "danger"})).json()
    paused = second["interruptions"][0]["call_id"]
    before = await all_events(client, session_id)
    response = await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {first: True}})
    assert response.status_code == 422, response.text
    assert response.json() == {
        "error": "invalid_approvals",
        "message": f"the approvals name call(s) {first!r} that session {session_id!r} does not hold paused "
                   f"(never made, or answered already); calls awaiting a decision: {paused}",
    }
    assert await all_events(client, session_id) == before


async def test_resume_finds_the_paused_call_pages_back_in_a_long_log(
    client: httpx.AsyncClient, store: SessionStore
) -> None:
    # The check reads the log backward a page (1,000 events) at a time, to the model's last message.
    session_id, call_id = await paused_session(client)
    lines = [Event.status("assistant", "agent", f"line {i}") for i in range(1_200)]
    await store.append_events(session_id, lines)
    unknown = await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {"nope": True}})
    assert unknown.status_code == 422, unknown.text
    assert unknown.json()["message"].endswith(f"calls awaiting a decision: {call_id}")
    resumed = await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {call_id: True}})
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["stop_reason"] == "completed"
    await store.append_events(session_id, lines)
    again = await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {}})
    assert again.status_code == 409, again.text


async def test_resume_of_a_fork_that_awaits_the_model_runs(client: httpx.AsyncClient) -> None:
    # No call is paused, but the conversation ends with a prompt the model has not answered: resuming runs it.
    source = await new_session(client)
    await client.post(f"/v1/sessions/{source}/runs", json={"prompt": "hello one"})
    events = await all_events(client, source)
    answer = next(e for e in events if e.get("role") == "assistant")
    fork = await client.post(f"/v1/sessions/{source}/fork", json={"at_seq": answer["seq"]})
    assert fork.status_code == 201, fork.text
    resumed = await client.post(f"/v1/sessions/{fork.json()['id']}/resume", json={"approvals": {}})
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["output"] == "You said: hello one"


# -- delete while a run goes on --------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A SQLite file or a PostgreSQL URL, for two stores to share as two server processes would."""
    if request.param == "sqlite":
        return str(tmp_path / "s.db")
    return str(request.getfixturevalue("postgres_url"))


def open_store(database: str) -> SessionStore:
    return PostgresSessionStore(database) if database.startswith("postgresql://") else SQLiteSessionStore(database)


@pytest.fixture
async def shared_stores(database: str) -> AsyncIterator[tuple[SessionStore, SessionStore]]:
    stores = (open_store(database), open_store(database))
    yield stores
    for store in stores:
        await store.aclose()


async def test_delete_while_another_process_runs_answers_409(shared_stores: tuple[SessionStore, SessionStore]) -> None:
    ours, theirs = shared_stores
    server = LiveServer(create_app(make_agent(ours), ours, tokens={})).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            session_id = await new_session(http)
            await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hello"})
            async with theirs.run_lock(session_id):
                response = await http.delete(f"/v1/sessions/{session_id}")
                assert response.status_code == 409, response.text
                assert response.json()["error"] == "busy"
                assert "in this or another server process" in response.json()["message"]
                assert (await http.get(f"/v1/sessions/{session_id}")).status_code == 200
            assert (await http.delete(f"/v1/sessions/{session_id}")).status_code == 204
    finally:
        server.stop()


class _CliRun:
    """`hookline run` of a slow agent on a session, in another process, until it is signalled."""

    def __init__(self, db: Path, session_id: str) -> None:
        assert HOOKLINE is not None
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HOOKLINE_", "OPENAI_"))}
        self.process = subprocess.Popen(
            [HOOKLINE, "run", "hi", "--agent", f"{CLI_AGENTS}:threaded", "--session", session_id, "--db", str(db)],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        self._started = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            if b"calling model" in line:
                self._started.set()
        self._started.set()  # ended: let the waiter see it

    def wait_running(self) -> None:
        assert self._started.wait(120)
        assert self.process.poll() is None, "the run ended early"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(60)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self._reader.join(5)
            assert self.process.stderr is not None
            self.process.stderr.close()


@pytest.fixture
def cli_run(tmp_path: Path) -> Iterator[_CliRun]:
    if HOOKLINE is None:
        pytest.skip("the hookline console script is not installed")
    run = _CliRun(tmp_path / "s.db", "busy-1")
    yield run
    run.stop()


async def test_delete_while_a_cli_run_holds_the_session_answers_409(cli_run: _CliRun, tmp_path: Path) -> None:
    cli_run.wait_running()
    store = SQLiteSessionStore(tmp_path / "s.db")
    server = LiveServer(create_app(make_agent(store), store, tokens={})).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            response = await http.delete("/v1/sessions/busy-1")
            assert response.status_code == 409, response.text
            cli_run.stop()
            assert (await http.delete("/v1/sessions/busy-1")).status_code == 204
    finally:
        server.stop()


# -- session ids -----------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["two words", "-s", ".hidden", "a/b", "x" * 129, "", "ok\n"])
async def test_a_bad_session_id_is_refused_with_the_rule_the_cli_states(client: httpx.AsyncClient, bad: str) -> None:
    response = await client.post("/v1/sessions", json={"id": bad})
    assert response.status_code == 422, response.text
    assert response.json()["message"] == f"body.id: {session_id_problem(bad)}"


async def test_the_id_rule_is_in_the_openapi_schema(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    id_schema = spec["components"]["schemas"]["CreateSession"]["properties"]["id"]
    assert "^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$" in str(id_schema)
