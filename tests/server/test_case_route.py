"""`GET /v1/sessions/{id}/case`: the eval case a session makes, as `hookline sessions export ID --as-case` prints it.

On a real SQLite file, which the command line reads too: the route's bytes are the CLI's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from hookline import Event, TextPart
from hookline.evals import Case, load_cases
from hookline.sessions import SessionStore, SQLiteSessionStore

from .api import new_session
from .live import LiveServer

pytestmark = pytest.mark.anyio

CASE_MOST_EVENTS = 10_000
"""The most events of a log the route reads for a case (docs/inspector.md says so)."""


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    """A SQLite file whatever `HOOKLINE_TEST_SERVER_STORE` says: the command line reads it too."""
    return SQLiteSessionStore(tmp_path / "sessions.db")


async def run(http: httpx.AsyncClient, session_id: str, prompt: str) -> None:
    response = await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": prompt})
    assert response.status_code == 200, response.text


def cli_case(db: Path, session_id: str, *name: str) -> str:
    exported = subprocess.run(
        [sys.executable, "-m", "hookline", "sessions", "export", session_id, "--db", str(db), "--as-case", *name],
        capture_output=True, text=True, timeout=120, check=False)
    assert exported.returncode == 0, exported.stderr
    return exported.stdout


async def test_the_case_loads_as_the_library_makes_it_and_as_the_cli_prints_it(
    client: httpx.AsyncClient, store: SessionStore, tmp_path: Path
) -> None:
    session_id = await new_session(client)
    await run(client, session_id, "add 2 and 3")
    await run(client, session_id, "hello there")
    response = await client.get(f"/v1/sessions/{session_id}/case")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.headers["content-disposition"] == f'attachment; filename="{session_id}.case.json"'
    saved = tmp_path / f"{session_id}.case.json"
    saved.write_bytes(response.content)

    (case,) = load_cases(saved)
    assert case == Case.of_session(await store.events(session_id, view="all"), session_id, source=session_id)
    assert case.prompts == ["add 2 and 3", "hello there"]
    assert [(c.name, c.arguments) for c in case.calls or []] == [("add", {"a": 2, "b": 3})]
    assert response.text == cli_case(tmp_path / "sessions.db", session_id), "the very bytes the CLI prints"

    named = await client.get(f"/v1/sessions/{session_id}/case", params={"name": "adds then greets"})
    assert named.json()["name"] == "adds then greets"
    assert named.text == cli_case(tmp_path / "sessions.db", session_id, "--name", "adds then greets")


async def test_a_session_without_a_prompt_says_it_holds_none(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    response = await client.get(f"/v1/sessions/{session_id}/case")
    assert response.status_code == 422
    assert response.json() == {"error": "no_prompt",
                               "message": f"session {session_id!r} holds no prompt to make a case of"}
    assert "content-disposition" not in response.headers
    too_long_a_name = await client.get(f"/v1/sessions/{session_id}/case", params={"name": "x" * 201})
    assert (too_long_a_name.status_code, too_long_a_name.json()["error"]) == (422, "invalid_request")


async def test_another_users_session_and_a_missing_one_are_not_found(auth_server: LiveServer) -> None:
    async with (httpx.AsyncClient(base_url=auth_server.url, headers={"Authorization": "Bearer tok-alice"}) as alice,
                httpx.AsyncClient(base_url=auth_server.url, headers={"Authorization": "Bearer tok-bob"}) as bob):
        session_id = await new_session(alice)
        await run(alice, session_id, "hello")
        assert (await alice.get(f"/v1/sessions/{session_id}/case")).status_code == 200
        for http, path in ((bob, session_id), (alice, "nope")):
            response = await http.get(f"/v1/sessions/{path}/case")
            assert (response.status_code, response.json()["error"]) == (404, "not_found")
        assert (await bob.get(f"/v1/sessions/{session_id}/case", headers={"Authorization": ""})).status_code == 401


async def test_a_log_over_the_limit_is_not_read_and_the_answer_names_the_cli(
    client: httpx.AsyncClient, store: SessionStore
) -> None:
    await store.create(session_id="long")
    for start in range(0, CASE_MOST_EVENTS, 1000):
        await store.append_events("long", [
            Event(author="user", kind="message", role="user", parts=[TextPart(text=f"m{i}")])
            for i in range(start + 1, min(start + 1000, CASE_MOST_EVENTS) + 1)])
    whole = await client.get("/v1/sessions/long/case")
    assert whole.status_code == 200, whole.text[:500]
    assert len(whole.json()["prompts"]) == CASE_MOST_EVENTS, "read a page at a time, to the last event"

    await store.append_event("long", Event(author="user", kind="message", role="user", parts=[TextPart(text="more")]))
    response = await client.get("/v1/sessions/long/case")
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "too_long"
    assert f"more than {CASE_MOST_EVENTS} events" in body["message"]
    assert "hookline sessions export long --as-case" in body["message"]


async def test_an_id_outside_the_rule_gets_a_plain_file_name(client: httpx.AsyncClient, store: SessionStore) -> None:
    await store.create(session_id='café "x"')
    await store.append_event('café "x"', Event(author="user", kind="message", role="user", parts=[TextPart(text="hi")]))
    response = await client.get("/v1/sessions/café \"x\"/case")
    assert response.status_code == 200, response.text
    assert response.headers["content-disposition"] == 'attachment; filename="caf___x_.case.json"'
    assert response.json()["source"] == 'café "x"'


async def test_openapi_lists_the_case_route(client: httpx.AsyncClient) -> None:
    operation = (await client.get("/openapi.json")).json()["paths"]["/v1/sessions/{session_id}/case"]["get"]
    assert {"200", "401", "404", "422"} <= set(operation["responses"])
