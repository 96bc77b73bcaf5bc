"""`hookline mcp`: the caller's sessions as read-only resources, checked with the `mcp` SDK's own client.

The agent is served by a real `python -m hookline.mcp` process on a real SQLite file (or on
the agent's own in-memory store); the SDK's client lists and reads what it offers.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from hookline import Agent, TextPart
from hookline.errors import ConfigError
from hookline.events import Event
from hookline.mcp.server import build_server
from hookline.sessions import SQLiteSessionStore

from .harness import AGENTS, SERVE, HttpAgentServer, connect

pytestmark = pytest.mark.anyio

LONG = 100_000
"""Events of the long session: far more than one read answers."""


def log_of(read: types.ReadResourceResult) -> dict[str, Any]:
    [content] = read.contents
    assert isinstance(content, types.TextResourceContents)
    assert content.mime_type == "application/json"
    log: dict[str, Any] = json.loads(content.text)
    return log


def stdio_server(*options: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}
    return StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], f"{AGENTS}:calculator", *options], env=env)


async def write_long_session(db: Path) -> None:
    """Session "long" of `LONG` messages, written straight to the store (a run would take minutes)."""
    store = SQLiteSessionStore(db)
    try:
        await store.create(session_id="long", app="default", user="alice")
        for start in range(0, LONG, 10_000):
            await store.append_events("long", [
                Event(author="user", kind="message", role="user", parts=[TextPart(text=f"line {i + 1}")])
                for i in range(start, start + 10_000)])
    finally:
        await store.aclose()


@pytest.fixture(scope="module")
async def sessions(guarded: HttpAgentServer, db: Path) -> None:
    """Bob's session "bobs", alice's "alices" (two prompts) and her "long" one."""
    await write_long_session(db)
    async with connect(guarded.url, "bob-secret") as bob, connect(guarded.url, "alice-secret") as alice:
        await bob.call_tool("calculator", {"prompt": "bob asks 2+3?", "session_id": "bobs"})
        await alice.call_tool("calculator", {"prompt": "what is 2+3?\nplease", "session_id": "alices"})
        await alice.call_tool("calculator", {"prompt": "and again?", "session_id": "alices"})


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_user_lists_their_own_sessions_newest_first(guarded: HttpAgentServer, sessions: None,
                                                            mode: Any) -> None:
    async with connect(guarded.url, "alice-secret", mode=mode) as alice:
        assert alice.server_capabilities.resources is not None
        listing = await alice.list_resources()
        templates = await alice.list_resource_templates()
    assert [r.uri for r in listing.resources] == ["hookline://sessions/alices", "hookline://sessions/long"]
    alices, long = listing.resources
    assert alices.name == "what is 2+3?", "named by the first line of its first prompt"
    assert long.name == "line 1"
    assert all(r.mime_type == "application/json" for r in listing.resources)
    assert "ui view" in (alices.description or "")
    assert [t.uri_template for t in templates.resource_templates] == ["hookline://sessions/{session_id}"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_reading_a_session_answers_its_log(guarded: HttpAgentServer, sessions: None, mode: Any) -> None:
    async with connect(guarded.url, "alice-secret", mode=mode) as alice:
        log = log_of(await alice.read_resource("hookline://sessions/alices"))
    assert log["session_id"] == "alices"
    assert log["view"] == "ui"
    assert log["earlier"] is None, "the whole log fits one page"
    messages = [(e["role"], "".join(p.get("text", "") for p in e["parts"])) for e in log["events"]
                if e["kind"] == "message" and e["role"] in ("user", "assistant")]
    assert messages[0] == ("user", "what is 2+3?\nplease")
    assert ("assistant", "the sum is 5 (prompt 2 of this conversation)") in messages
    assert any(e["kind"] == "status" for e in log["events"]), "the ui view: status lines too"
    assert [e["seq"] for e in log["events"]] == sorted(e["seq"] for e in log["events"])


@pytest.mark.parametrize("uri", ["hookline://sessions/bobs", "hookline://sessions/nobody", "test://elsewhere",
                                 "hookline://sessions/", "hookline://sessions/bobs/more"])
async def test_another_users_session_is_not_found_as_an_unknown_one(guarded: HttpAgentServer, sessions: None,
                                                                    uri: str) -> None:
    async with connect(guarded.url, "alice-secret") as alice:
        with pytest.raises(MCPError) as refused:
            await alice.read_resource(uri)
    assert refused.value.error.code == types.INVALID_PARAMS
    assert str(refused.value) == f"Resource not found: {uri}"


async def test_a_user_never_sees_another_users_sessions(guarded: HttpAgentServer, sessions: None) -> None:
    async with connect(guarded.url, "bob-secret") as bob:
        listing = await bob.list_resources()
        own = log_of(await bob.read_resource("hookline://sessions/bobs"))
    assert [r.uri for r in listing.resources] == ["hookline://sessions/bobs"]
    assert own["events"][0]["parts"][0]["text"] == "bob asks 2+3?"


async def test_a_long_session_is_read_a_page_at_a_time_from_its_end(guarded: HttpAgentServer, sessions: None) -> None:
    async with connect(guarded.url, "alice-secret") as alice:
        newest = log_of(await alice.read_resource("hookline://sessions/long"))
        before = log_of(await alice.read_resource(newest["earlier"]))
        first = log_of(await alice.read_resource("hookline://sessions/long?before_seq=201"))
    assert [e["seq"] for e in newest["events"]] == list(range(LONG - 199, LONG + 1)), "its newest 200 events"
    assert newest["earlier"] == f"hookline://sessions/long?before_seq={LONG - 199}"
    assert [e["seq"] for e in before["events"]] == list(range(LONG - 399, LONG - 199))
    assert before["before_seq"] == LONG - 199
    assert [e["seq"] for e in first["events"]] == list(range(1, 201))
    assert first["earlier"] is None, "the log's start"


@pytest.mark.parametrize(("query", "said"), [("before_seq=0", "before_seq must be one positive integer"),
                                             ("before_seq=x", "before_seq must be one positive integer"),
                                             ("before_seq=1&before_seq=2", "before_seq must be one positive"),
                                             ("after=3", "takes only ?before_seq=N")])
async def test_a_bad_page_is_refused_saying_what_to_send(guarded: HttpAgentServer, sessions: None, query: str,
                                                         said: str) -> None:
    async with connect(guarded.url, "alice-secret") as alice:
        with pytest.raises(MCPError, match=re.escape(said)) as refused:
            await alice.read_resource(f"hookline://sessions/alices?{query}")
    assert refused.value.error.code == types.INVALID_PARAMS


async def test_over_stdio_the_sessions_are_the_default_users(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    store = SQLiteSessionStore(db)
    try:
        await store.create(session_id="carols", user="carol")
    finally:
        await store.aclose()
    async with Client(stdio_server("--db", str(db))) as client:
        await client.call_tool("calculator", {"prompt": "2+3?", "session_id": "mine"})
        listing = await client.list_resources()
        log = log_of(await client.read_resource("hookline://sessions/mine"))
        with pytest.raises(MCPError, match="Resource not found"):
            await client.read_resource("hookline://sessions/carols")
    assert [r.uri for r in listing.resources] == ["hookline://sessions/mine"]
    assert log["events"][0]["parts"][0]["text"] == "2+3?"


async def test_without_a_db_the_agents_own_store_is_listed() -> None:
    async with Client(stdio_server()) as client:
        before = await client.list_resources()
        await client.call_tool("calculator", {"prompt": "2+3?"})
        await client.call_tool("calculator", {"prompt": "odd id?", "session_id": "a/b c"})
        after = await client.list_resources()
        log = log_of(await client.read_resource(after.resources[0].uri))
    assert before.resources == [], "nothing yet: a call without session_id keeps no session"
    assert [(r.uri, r.name) for r in after.resources] == [("hookline://sessions/a%2Fb%20c", "odd id?")]
    assert log["session_id"] == "a/b c"


def test_build_server_says_what_it_serves() -> None:
    with pytest.raises(ConfigError, match="serves an Agent, not str"):
        build_server("myapp.agents:agent")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="store must be a SessionStore"):
        build_server(Agent("a"), store="sessions.db")  # type: ignore[arg-type]
