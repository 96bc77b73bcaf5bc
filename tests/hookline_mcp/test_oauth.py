"""`MCPToolset.http(url, auth=OAuth(...))` against a real OAuth-protected server (`servers/oauth_server.py`).

The kit's `auth/*` scenarios (test_conformance.py) check the flow on the wire; these check
what they do not: a token that expired is refreshed without a new login, tokens kept in a
`FileTokens` file spare the next toolset the login, a declined authorization fails the
connection saying so, and `OAuth(...)` refuses bad options.
"""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from hookline.errors import ConfigError
from hookline.mcp import FileTokens, MCPConnectionError, MCPToolset, OAuth

from .harness import HttpServer, lines

pytestmark = pytest.mark.anyio


class User:
    """The person at the authorization page: follows the authorization URL one hop, counting the logins."""

    def __init__(self) -> None:
        self.logins = 0

    async def authorize(self, url: str) -> str:
        self.logins += 1
        async with httpx2.AsyncClient() as client:
            response = await client.get(url, follow_redirects=False)
        assert response.is_redirect, response.text
        return response.headers["location"]


@pytest.fixture
def oauth_server(request: pytest.FixtureRequest, state: Path) -> Iterator[HttpServer]:
    """The OAuth-protected server; `@pytest.mark.parametrize("oauth_server", [(...options)], indirect=True)`."""
    server = HttpServer("oauth_server", state, extra=tuple(getattr(request, "param", ())))
    yield server
    server.kill()


async def hello(toolset: MCPToolset) -> Any:
    return await toolset.call("hello", {})


@pytest.mark.parametrize("oauth_server", [("--ttl", "1")], indirect=True)
async def test_an_expired_token_is_refreshed_without_a_new_login(oauth_server: HttpServer, state: Path) -> None:
    user = User()
    async with MCPToolset.http(oauth_server.url, auth=OAuth(user.authorize)) as toolset:
        assert await hello(toolset) == "hello"
        await asyncio.sleep(2.1)  # past the token's second
        assert await hello(toolset) == "hello"
    assert user.logins == 1
    assert lines(state, "grants")[0] == "authorization_code"
    assert "refresh_token" in lines(state, "grants")
    assert lines(state, "calls") == ["hello", "hello"]


async def test_tokens_in_a_file_spare_the_next_toolset_the_login(oauth_server: HttpServer, state: Path,
                                                                 tmp_path: Path) -> None:
    path = tmp_path / "tokens" / "alice.json"
    first, second = User(), User()
    async with MCPToolset.http(oauth_server.url, auth=OAuth(first.authorize, tokens=FileTokens(path))) as toolset:
        assert await hello(toolset) == "hello"
    async with MCPToolset.http(oauth_server.url, auth=OAuth(second.authorize, tokens=FileTokens(path))) as toolset:
        assert await hello(toolset) == "hello"
    assert (first.logins, second.logins) == (1, 0)
    assert lines(state, "grants") == ["authorization_code"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert set(json.loads(path.read_text())) == {"tokens", "client"}


@pytest.mark.parametrize("oauth_server", [("--deny",)], indirect=True)
async def test_a_declined_authorization_fails_the_connection_saying_so(oauth_server: HttpServer,
                                                                       state: Path) -> None:
    user = User()
    with pytest.raises(MCPConnectionError) as raised:
        async with MCPToolset.http(oauth_server.url, auth=OAuth(user.authorize)):
            pass
    message = str(raised.value)
    assert "authorization was not granted: access_denied (the user declined)" in message
    assert "NotAuthorized" in message
    assert user.logins == 1
    assert lines(state, "grants") == []


async def test_without_auth_the_refusal_names_the_oauth_option(oauth_server: HttpServer) -> None:
    with pytest.raises(MCPConnectionError, match=r"HTTP 401 .*auth=OAuth\(\.\.\.\)"):
        async with MCPToolset.http(oauth_server.url):
            pass


async def _never(url: str) -> str:
    raise AssertionError("no login expected")


@pytest.mark.parametrize(("options", "said"), [
    ({"authorize": "https://example.com"}, "must be an async function"),
    ({"redirect_uri": "myapp:/callback"}, "redirect_uri must be an http:// or https:// URL"),
    ({"client_secret": "s3cret"}, "client_secret is given without client_id"),
    ({"client_id": "app", "client_auth": "client_secret_post"}, "needs client_secret"),
    ({"client_id": "app", "client_auth": "private_key_jwt"}, "client_auth must be one of"),
    ({"client_metadata_url": "http://example.com/client.json"}, "client_metadata_url must be an https:// URL"),
    ({"tokens": {}}, "tokens must be MemoryTokens(), FileTokens(path)"),
])
def test_bad_options_are_refused_saying_how_to_fix_them(options: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError) as raised:
        OAuth(**{"authorize": _never, **options})
    assert said in str(raised.value)
    assert "s3cret" not in str(raised.value)


def test_auth_must_be_an_oauth() -> None:
    with pytest.raises(ConfigError, match=r"auth must be hookline\.mcp\.OAuth"):
        MCPToolset.http("http://127.0.0.1:1/mcp", auth="Bearer x")  # type: ignore[arg-type]
