"""`hookline mcp --http` with bearer tokens (`HOOKLINE_TOKENS`): who may call, and whose sessions they continue.

The agent is served by a real `python -m hookline.mcp` process; the `mcp` SDK's client calls
it with an `Authorization` header, and plain HTTP requests check what the server answers
(status, `WWW-Authenticate`, body) where the SDK's client does not show it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from hookline.sessions import SQLiteSessionStore
from support.waiting import DEADLINE

from .harness import AGENTS, SERVE, TOKENS, HttpAgentServer, connect, text

pytestmark = pytest.mark.anyio

ACCEPT = {"Accept": "application/json, text/event-stream"}
DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}
MODERN = {**ACCEPT, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
"""The headers of `DISCOVER`, a request of the 2026-07-28 revision."""
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


@pytest.fixture(scope="module")
def exposed() -> Iterator[HttpAgentServer]:
    """The calculator on 0.0.0.0 (reached on 127.0.0.1), with alice's and bob's tokens."""
    server = HttpAgentServer("calculator", "--host", "0.0.0.0", tokens=TOKENS)
    yield server
    server.stop()


def leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """The exceptions of `group` and of the groups inside it."""
    return [leaf for inner in group.exceptions
            for leaf in (leaves(inner) if isinstance(inner, BaseExceptionGroup) else [inner])]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize(("token", "said"), [(None, "no bearer token"), ("carol-secret", "not a known one")])
async def test_the_client_without_a_known_token_is_told_what_to_send(
    guarded: HttpAgentServer, mode: Any, token: str | None, said: str
) -> None:
    # The SDK's client raises the server's refusal from inside its task groups.
    with pytest.RaisesGroup(MCPError, flatten_subgroups=True) as refused:
        async with connect(guarded.url, token, mode=mode) as client:
            await client.call_tool("calculator", {"prompt": "2+3?"})
    [error] = leaves(refused.value)
    message = str(error)
    assert said in message
    assert "Authorization: Bearer <token>" in message
    assert "HOOKLINE_TOKENS" in message
    assert "--tokens-file" in message
    assert "carol-secret" not in message


@pytest.mark.parametrize("authorization", [None, "Bearer carol-secret", "Basic YWxpY2U6YWxpY2Utc2VjcmV0",
                                           "Bearer", "bearer  alice-secret2"])
async def test_a_request_without_a_known_token_answers_401_with_a_bearer_challenge(
    guarded: HttpAgentServer, authorization: str | None
) -> None:
    headers = {**MODERN, **({"Authorization": authorization} if authorization else {})}
    async with httpx2.AsyncClient() as http:
        answers = [await http.post(guarded.url, json=DISCOVER, headers=headers),
                   await http.get(guarded.url, headers=headers),
                   await http.delete(guarded.url, headers={**headers, "Mcp-Session-Id": "x"})]
    for answer in answers:
        assert answer.status_code == 401, answer.text
        assert answer.headers["www-authenticate"].startswith("Bearer")
        error = answer.json()["error"]
        assert "Authorization: Bearer <token>" in error["message"]
        assert "secret" not in answer.text, "the token offered is never echoed"
        assert "secret" not in answer.headers["www-authenticate"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_with_a_known_token_the_call_runs(guarded: HttpAgentServer, mode: Any) -> None:
    async with connect(guarded.url, "alice-secret", mode=mode) as client:
        result = await client.call_tool("calculator", {"prompt": "2+3?"})
    assert not result.is_error
    assert text(result) == "the sum is 5 (prompt 1 of this conversation)"


async def test_a_user_cannot_continue_another_users_session(guarded: HttpAgentServer, db: Path) -> None:
    async with connect(guarded.url, "bob-secret") as bob, connect(guarded.url, "alice-secret") as alice:
        first = await bob.call_tool("calculator", {"prompt": "2+3?", "session_id": "bobs"})
        taken = await alice.call_tool("calculator", {"prompt": "and again?", "session_id": "bobs"})
        second = await bob.call_tool("calculator", {"prompt": "and again?", "session_id": "bobs"})
        own = await alice.call_tool("calculator", {"prompt": "2+3?", "session_id": "alices"})
    assert text(first).endswith("(prompt 1 of this conversation)")
    assert taken.is_error
    assert "session 'bobs' not found" in text(taken)
    assert "bob" not in text(taken).replace("'bobs'", ""), "nothing says whose it is"
    assert text(second).endswith("(prompt 2 of this conversation)"), "alice's call left bob's session as it was"
    assert text(own).endswith("(prompt 1 of this conversation)")
    store = SQLiteSessionStore(db)
    try:
        assert (await store.get("bobs", with_events=False)).user == "bob"
        assert (await store.get("alices", with_events=False)).user == "alice"
    finally:
        await store.aclose()


async def test_an_mcp_session_answers_only_the_user_who_opened_it(guarded: HttpAgentServer) -> None:
    alice = {**ACCEPT, "Authorization": "Bearer alice-secret"}
    bob = {**ACCEPT, "Authorization": "Bearer bob-secret"}
    async with httpx2.AsyncClient() as http:
        opened = await http.post(guarded.url, json=INITIALIZE, headers=alice)
        session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
        by_bob = await http.post(guarded.url, json=INITIALIZED, headers={**bob, **session})
        by_alice = await http.post(guarded.url, json=INITIALIZED, headers={**alice, **session})
        await http.delete(guarded.url, headers={**alice, **session})
    assert opened.status_code == 200
    assert by_bob.status_code == 404, "to another user the MCP session does not exist"
    assert by_alice.status_code == 202


async def test_on_loopback_a_foreign_host_is_refused_even_with_a_token(guarded: HttpAgentServer) -> None:
    headers = {**MODERN, "Authorization": "Bearer alice-secret"}
    async with httpx2.AsyncClient() as http:
        foreign = await http.post(guarded.url, json=DISCOVER, headers={**headers, "Host": "evil.example"})
        origin = await http.post(guarded.url, json=DISCOVER, headers={**headers, "Origin": "http://evil.example"})
        own = await http.post(guarded.url, json=DISCOVER, headers=headers)
    assert foreign.status_code == 421
    assert origin.status_code == 403
    assert own.status_code == 200


async def test_beyond_loopback_with_tokens_it_serves_whatever_name_it_is_reached_by(exposed: HttpAgentServer) -> None:
    async with connect(exposed.url, "bob-secret") as client:
        result = await client.call_tool("calculator", {"prompt": "2+3?"})
    assert text(result) == "the sum is 5 (prompt 1 of this conversation)"
    named = {**MODERN, "Host": f"agents.example.com:{exposed.port}", "Origin": "https://agents.example.com"}
    async with httpx2.AsyncClient() as http:
        token = {"Authorization": "Bearer bob-secret"}
        with_token = await http.post(exposed.url, json=DISCOVER, headers={**named, **token})
        without = await http.post(exposed.url, json=DISCOVER, headers=named)
    assert with_token.status_code == 200
    assert without.status_code == 401


async def test_a_tokens_file_guards_it_beyond_loopback(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("# who may call\ncarol-secret:carol\n", encoding="utf-8")
    server = HttpAgentServer("calculator", "--host", "0.0.0.0", "--tokens-file", str(tokens))
    try:
        async with connect(server.url, "carol-secret") as client:
            result = await client.call_tool("calculator", {"prompt": "2+3?"})
        async with httpx2.AsyncClient() as http:
            without = await http.post(server.url, json=DISCOVER, headers=MODERN)
    finally:
        server.stop()
    assert text(result) == "the sum is 5 (prompt 1 of this conversation)"
    assert without.status_code == 401


def test_a_tokens_file_is_for_http_only(tmp_path: Path) -> None:
    out = subprocess.run([*SERVE, f"{AGENTS}:calculator", "--tokens-file", str(tmp_path / "tokens")],
                         capture_output=True, text=True, timeout=DEADLINE, check=False)
    assert out.returncode == 2
    assert "--tokens-file guards --http only" in out.stderr


async def test_stdio_needs_no_token_even_when_tokens_are_set() -> None:
    env = {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}
    server = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], f"{AGENTS}:calculator"],
                                   env={**env, "HOOKLINE_TOKENS": TOKENS})
    async with Client(server) as client:
        result = await client.call_tool("calculator", {"prompt": "2+3?"})
    assert text(result) == "the sum is 5 (prompt 1 of this conversation)"


def test_a_malformed_hookline_tokens_is_refused_before_serving() -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("HOOKLINE_TOKENS")}, "HOOKLINE_TOKENS": "s3cret"}
    out = subprocess.run([*SERVE, f"{AGENTS}:calculator", "--http", "--port", "0"], capture_output=True, text=True,
                         timeout=DEADLINE, check=False, env=env)
    assert out.returncode == 2
    assert "token entry 1 is not 'token:user'" in out.stderr
