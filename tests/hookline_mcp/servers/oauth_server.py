"""A test MCP server behind OAuth, its own authorization server on the same port (the SDK's handlers).

Run as `python oauth_server.py --http --port N --state DIR [--ttl SECONDS] [--deny]`:

- the SDK serves the protected resource metadata, the authorization server metadata,
  `/register`, `/authorize` and `/token` (PKCE checked by the SDK's token handler);
- `/authorize` grants at once, redirecting to the client's `redirect_uri` with a code, or
  with `error=access_denied` under `--deny` (a user who declined);
- access tokens last `--ttl` seconds and come with a refresh token;
- each grant at `/token` is written to `grants.log` ("authorization_code", "refresh_token"),
  each call to `calls.log`, so a test checks what the authorization server saw.
"""

from __future__ import annotations

import argparse
import secrets
import socket
import sys
import time
from typing import Any

import mcp_types as types
import uvicorn
from _common import Record, new_server, text
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    ProviderTokenVerifier,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

TOOLS = [types.Tool(name="hello", description="Say hello.", input_schema={"type": "object", "properties": {}})]


class Provider:
    """An authorization server that keeps its clients, codes and tokens in memory."""

    def __init__(self, record: Record, ttl: int, deny: bool) -> None:
        self.record = record
        self.ttl = ttl
        self.deny = deny
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        self.access_tokens: dict[str, AccessToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if self.deny:
            return construct_redirect_uri(str(params.redirect_uri), error="access_denied",
                                          error_description="the user declined", state=params.state)
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 60, client_id=client.client_id or "",
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        del self.codes[authorization_code.code]
        self.record.note("grants", "authorization_code")
        return self._issue(client.client_id or "", authorization_code.scopes)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh_tokens.get(refresh_token)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        del self.refresh_tokens[refresh_token.token]
        self.record.note("grants", "refresh_token")
        return self._issue(client.client_id or "", scopes or refresh_token.scopes)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access_tokens.get(token)
        return found if found is not None and (found.expires_at or 0) > time.time() else None

    async def revoke_token(self, token: Any) -> None:
        self.access_tokens.pop(getattr(token, "token", ""), None)

    def _issue(self, client_id: str, scopes: list[str]) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
        self.access_tokens[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                                 expires_at=int(time.time()) + self.ttl)
        self.refresh_tokens[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(access_token=access, expires_in=self.ttl, refresh_token=refresh,
                          scope=" ".join(scopes) or None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--state", required=True)
    parser.add_argument("--ttl", type=int, default=3600)
    parser.add_argument("--deny", action="store_true")
    args = parser.parse_args()
    args.legacy = False
    record = Record(args.state)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        record.note("calls", params.name)
        return text("hello")

    server, _bus = new_server("oauth", args, on_list_tools=list_tools, on_call_tool=call_tool)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    port = sock.getsockname()[1]
    where = f"http://127.0.0.1:{port}"
    # Given as strings, so the issuer keeps its empty path (no "/"), as the client compares it.
    auth = AuthSettings.model_validate({"issuer_url": where, "resource_server_url": f"{where}/mcp",
                                        "client_registration_options": ClientRegistrationOptions(enabled=True)})
    provider = Provider(record, args.ttl, args.deny)
    app = server.streamable_http_app(auth=auth, auth_server_provider=provider,
                                     token_verifier=ProviderTokenVerifier(provider))
    print(f"PORT {port}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")).run(sockets=[sock])
    sys.exit(0)


if __name__ == "__main__":
    main()
