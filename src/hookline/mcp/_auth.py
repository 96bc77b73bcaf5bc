"""Bearer tokens on the MCP HTTP server: 401 without a known one, the token's user on every other request.

The tokens are `hookline serve`'s (`HOOKLINE_TOKENS`, `HOOKLINE_TOKENS_FILE`; parsed and
compared by `hookline._tokens`). `BearerAuth` records a request's user in its ASGI scope as
the SDK's `AuthenticatedUser`, whose `client_id` is the user: the SDK's session manager
binds an MCP session (`Mcp-Session-Id`) to it, so a session opened with alice's token
answers 404 to bob's. `request_user(ctx)` gives a tool handler the user of the request that
carried its call, who owns the hookline sessions it creates and continues.

A refusal is a JSON-RPC error body (what the SDK's client shows as the error of the call),
with HTTP 401 and a `WWW-Authenticate: Bearer` challenge; it never repeats the token given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from hookline._tokens import DEFAULT_USER, TOKENS_ENV, TOKENS_FILE_ENV, user_for

__all__ = ["BearerAuth", "request_user"]

_HOW = (f"send 'Authorization: Bearer <token>' with a token the server was given in {TOKENS_ENV}, {TOKENS_FILE_ENV} "
        "or --tokens-file")
_MISSING = f"no bearer token: this MCP server needs one on every request; {_HOW}"
_UNKNOWN = f"the bearer token is not a known one; {_HOW}"


class BearerAuth:
    """Answer 401 to any HTTP request without a known bearer token; record the token's user in the scope.

    Args:
        app: The MCP server's ASGI application.
        tokens: `{token: user}`, not empty.
    """

    def __init__(self, app: ASGIApp, tokens: Mapping[str, str]) -> None:
        self.app = app
        self.tokens = dict(tokens)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the token of an HTTP request, then call the application (lifespan events pass as they are)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = next((v for k, v in scope["headers"] if k == b"authorization"), None)
        user = user_for(header.decode("latin-1"), self.tokens) if header is not None else None
        if user is None:
            await _refusal(given=header is not None)(scope, receive, send)
            return
        # The principal is the user; the secret stays in the header it came in.
        scope["user"] = AuthenticatedUser(AccessToken(token="", client_id=user, scopes=[]))
        await self.app(scope, receive, send)


def _refusal(*, given: bool) -> Response:
    """The 401 of a request without a token (`given` false) or with one that is not known."""
    message = _UNKNOWN if given else _MISSING
    error = types.ErrorData(code=types.INVALID_REQUEST, message=message)
    body = types.JSONRPCError(jsonrpc="2.0", id=None, error=error)
    # RFC 6750: no error code when no credentials came, "invalid_token" when they are not good.
    challenge = 'Bearer error="invalid_token"' if given else "Bearer"
    return Response(body.model_dump_json(by_alias=True, exclude_unset=True), status_code=401,
                    headers={"WWW-Authenticate": challenge}, media_type="application/json")


def request_user(ctx: Any) -> str:
    """The user of the HTTP request that carried a call: its token's; `"default"` over stdio or without tokens."""
    request = getattr(ctx, "request", None)
    user = getattr(request, "scope", {}).get("user")
    return user.username if isinstance(user, AuthenticatedUser) else DEFAULT_USER
