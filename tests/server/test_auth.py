"""Bearer tokens: two users, every route; each sees only their own sessions."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from hookline import ConfigError
from hookline.server import parse_tokens, read_tokens_file, tokens_from_env

from .api import SSE, model_called, new_session
from .live import LiveServer

pytestmark = pytest.mark.anyio

Call = Callable[[httpx.AsyncClient, str], Awaitable[httpx.Response]]

# Every /v1 route that names a session, with a valid request for it.
SESSION_ROUTES: dict[str, Call] = {
    "get": lambda c, s: c.get(f"/v1/sessions/{s}"),
    "events": lambda c, s: c.get(f"/v1/sessions/{s}/events"),
    "events/stream": lambda c, s: c.get(f"/v1/sessions/{s}/events/stream"),
    "prepare": lambda c, s: c.post(f"/v1/sessions/{s}/prepare", json={"author": "user", "role": "user", "parts": []}),
    "runs": lambda c, s: c.post(f"/v1/sessions/{s}/runs", json={"prompt": "hi"}),
    "runs (SSE)": lambda c, s: c.post(f"/v1/sessions/{s}/runs", json={"prompt": "hi"}, headers=SSE),
    "resume": lambda c, s: c.post(f"/v1/sessions/{s}/resume", json={"approvals": {}}),
    "resume (SSE)": lambda c, s: c.post(f"/v1/sessions/{s}/resume", json={"approvals": {}}, headers=SSE),
    "delete": lambda c, s: c.delete(f"/v1/sessions/{s}"),
}
ALL_ROUTES: dict[str, Call] = {
    "create": lambda c, s: c.post("/v1/sessions", json={}),
    "list": lambda c, s: c.get("/v1/sessions"),
    **SESSION_ROUTES,
}


@pytest.fixture
async def alice(auth_server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": "Bearer tok-alice"}
    async with httpx.AsyncClient(base_url=auth_server.url, headers=headers, timeout=10) as http:
        yield http


@pytest.fixture
async def bob(auth_server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=auth_server.url, headers={"Authorization": "Bearer tok-bob"}) as http:
        yield http


BAD_AUTHORIZATIONS = [None, "Bearer wrong", "Bearer", "Basic dG9rLWFsaWNlOg==", "tok-alice", "Bearer tok-alice2"]


@pytest.mark.parametrize("route", list(ALL_ROUTES))
async def test_no_known_token_answers_401(auth_server: LiveServer, alice: httpx.AsyncClient, route: str) -> None:
    session_id = await new_session(alice)
    for authorization in BAD_AUTHORIZATIONS:
        headers = {"Authorization": authorization} if authorization is not None else {}
        async with httpx.AsyncClient(base_url=auth_server.url, headers=headers, timeout=10) as stranger:
            response = await ALL_ROUTES[route](stranger, session_id)
        assert response.status_code == 401, (authorization, response.text)
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.json()["error"] == "unauthorized"
    assert (await alice.get(f"/v1/sessions/{session_id}")).status_code == 200, "nothing happened to it"


@pytest.mark.parametrize("route", list(SESSION_ROUTES))
async def test_another_users_session_answers_404(alice: httpx.AsyncClient, bob: httpx.AsyncClient, route: str) -> None:
    session_id = await new_session(alice)
    await alice.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hello"})
    response = await SESSION_ROUTES[route](bob, session_id)
    assert response.status_code == 404, response.text
    assert response.json() == {"error": "not_found", "message": f"session {session_id!r} not found"}
    mine = await alice.get(f"/v1/sessions/{session_id}/events", params={"view": "prompt"})
    assert [e["parts"][0]["text"] for e in mine.json()] == ["hello", "You said: hello"], "bob changed nothing"


@pytest.mark.parametrize("route", ["runs", "runs (SSE)", "resume", "resume (SSE)"])
async def test_another_users_session_answers_404_while_a_run_holds_it(
    alice: httpx.AsyncClient, bob: httpx.AsyncClient, route: str
) -> None:
    session_id = await new_session(alice)
    running = asyncio.ensure_future(alice.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "slow"}))
    await model_called(alice, session_id)
    response = await SESSION_ROUTES[route](bob, session_id)
    assert response.status_code == 404, response.text  # not 409: that would tell bob the session exists
    assert (await SESSION_ROUTES[route](alice, session_id)).status_code == 409, "its owner learns it is busy"
    assert (await running).status_code == 200


async def test_each_user_lists_only_their_sessions(alice: httpx.AsyncClient, bob: httpx.AsyncClient) -> None:
    a1, a2 = await new_session(alice), await new_session(alice)
    b1 = await new_session(bob)
    assert {s["id"] for s in (await alice.get("/v1/sessions")).json()} == {a1, a2}
    assert [s["id"] for s in (await bob.get("/v1/sessions")).json()] == [b1]
    assert (await alice.get(f"/v1/sessions/{a1}")).json()["user"] == "alice"


async def test_taken_id_of_another_user_cannot_be_reused(alice: httpx.AsyncClient, bob: httpx.AsyncClient) -> None:
    await new_session(alice, id="shared-name")
    response = await bob.post("/v1/sessions", json={"id": "shared-name"})
    assert response.status_code == 409
    assert (await bob.get("/v1/sessions/shared-name")).status_code == 404


@pytest.mark.parametrize("path", ["/", "/healthz", "/openapi.json", "/docs", "/static/app.js", "/static/app.css"])
async def test_public_paths_need_no_token(auth_server: LiveServer, path: str) -> None:
    async with httpx.AsyncClient(base_url=auth_server.url) as stranger:
        assert (await stranger.get(path)).status_code == 200


async def test_stranger_with_malformed_body_gets_401_not_422(auth_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=auth_server.url) as stranger:
        json_type = {"Content-Type": "application/json"}
        response = await stranger.post("/v1/sessions/x/runs", content=b"{nope", headers=json_type)
        assert response.status_code == 401
        big = await stranger.post("/v1/sessions", content=b"x" * 2_000_000)
        assert big.status_code == 401


async def test_no_tokens_means_user_default(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    assert (await client.get(f"/v1/sessions/{session_id}")).json()["user"] == "default"
    response = await client.get("/v1/sessions", headers={"Authorization": "Bearer anything"})
    assert response.status_code == 200


async def test_tokens_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, make_server: Callable[..., LiveServer]
) -> None:
    monkeypatch.setenv("HOOKLINE_TOKENS", "envtok:carol")
    server = make_server(tokens=None)
    async with httpx.AsyncClient(base_url=server.url) as http:
        assert (await http.get("/v1/sessions")).status_code == 401
        ok = await http.post("/v1/sessions", json={}, headers={"Authorization": "Bearer envtok"})
        assert ok.json()["user"] == "carol"


def test_parse_tokens() -> None:
    assert parse_tokens("a:alice, b:bob ,,") == {"a": "alice", "b": "bob"}
    assert parse_tokens("with:colon:dave") == {"with:colon": "dave"}
    assert parse_tokens("") == {}
    for bad in ("nocolon", ":user", "token:", "a:alice,broken"):
        with pytest.raises(ConfigError, match="token:user"):
            parse_tokens(bad)


def test_parse_tokens_error_does_not_echo_the_token() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_tokens("supersecretvalue")
    assert "supersecretvalue" not in str(caught.value)


def test_read_tokens_file(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("# team tokens\n\nt1:alice\n  t2:bob  \n", encoding="utf-8")
    assert read_tokens_file(path) == {"t1": "alice", "t2": "bob"}
    with pytest.raises(ConfigError, match="cannot read the tokens file"):
        read_tokens_file(tmp_path / "missing")


def test_tokens_from_env(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("f1:frank\n", encoding="utf-8")
    assert tokens_from_env({}) is None
    assert tokens_from_env({"HOOKLINE_TOKENS": "  "}) is None
    assert tokens_from_env({"HOOKLINE_TOKENS": "e1:erin"}) == {"e1": "erin"}
    both = tokens_from_env({"HOOKLINE_TOKENS": "e1:erin", "HOOKLINE_TOKENS_FILE": str(path)})
    assert both == {"f1": "frank", "e1": "erin"}
