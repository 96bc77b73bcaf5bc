"""Bearer tokens that map to users, checked before any route runs.

```
HOOKLINE_TOKENS="s3cret:alice,0ther:bob"      # or HOOKLINE_TOKENS_FILE=/etc/hookline/tokens
```

A tokens file holds one `token:user` per line (blank lines and `#` comments ignored).
The check is an ASGI middleware, so a request without a known token answers 401 before
its body is even read (a malformed body from a stranger gets 401, not 422). Routes learn
the user from `current_user`. With no tokens configured every request is user
`"default"`: the CLI then binds to loopback only.

The parsers (`parse_tokens`, `read_tokens_file`, `tokens_from_env`) and `DEFAULT_USER` come
from `hookline._tokens`, which `hookline mcp --http` shares without loading FastAPI.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import ASGIApp, Receive, Scope, Send

from hookline._tokens import DEFAULT_USER, parse_tokens, read_tokens_file, tokens_from_env, user_for
from hookline.server.errors import error_response
from hookline.server.schemas import ErrorBody

__all__ = [
    "DEFAULT_USER",
    "PUBLIC_PATHS",
    "AuthMiddleware",
    "current_user",
    "user_of",
    "parse_tokens",
    "read_tokens_file",
    "tokens_from_env",
]

PUBLIC_PATHS = frozenset({"/", "/healthz", "/readyz", "/openapi.json", "/docs", "/docs/oauth2-redirect",
                          "/.well-known/agent-card.json"})
"""Paths served without a token (plus everything under `/static/`); the A2A Agent Card says how to authenticate."""

_USER_KEY = "hookline.user"
_NEED_TOKEN = "a known bearer token is required (Authorization: Bearer ...)"
_bearer = HTTPBearer(auto_error=False, description="A token from HOOKLINE_TOKENS (not needed when none are set)")


def _is_public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith("/static/")


class AuthMiddleware:
    """Answer 401 to any non-public request without a known bearer token; record the user.

    Args:
        app: The application to protect.
        tokens: `{token: user}`; empty: no check, every request is `"default"`.

    """

    def __init__(self, app: ASGIApp, tokens: Mapping[str, str]) -> None:
        self.app = app
        self.tokens = dict(tokens)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the token of an HTTP request, then call the application."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not self.tokens:
            scope[_USER_KEY] = DEFAULT_USER
        elif not _is_public(scope["path"]):
            header = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
            user = user_for(header.decode("latin-1"), self.tokens)
            if user is None:
                body = ErrorBody(error="unauthorized", message=_NEED_TOKEN)
                await error_response(body, 401, {"WWW-Authenticate": "Bearer"})(scope, receive, send)
                return
            scope[_USER_KEY] = user
        await self.app(scope, receive, send)


async def current_user(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)] = None
) -> str:
    """Return the user `AuthMiddleware` found for this request (the bearer scheme is declared for OpenAPI)."""
    return user_of(request)


def user_of(request: Request) -> str:
    """The user `AuthMiddleware` found for `request` (what `current_user` answers, outside FastAPI's dependencies).

    Raises:
        HTTPException: 401, no known bearer token came with it.
    """
    user = request.scope.get(_USER_KEY)
    if not isinstance(user, str):
        raise HTTPException(401, "a known bearer token is required", headers={"WWW-Authenticate": "Bearer"})
    return user
