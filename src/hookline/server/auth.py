"""Bearer tokens that map to users, checked before any route runs.

```
HOOKLINE_TOKENS="s3cret:alice,0ther:bob"      # or HOOKLINE_TOKENS_FILE=/etc/hookline/tokens
```

A tokens file holds one `token:user` per line (blank lines and `#` comments ignored).
The check is an ASGI middleware, so a request without a known token answers 401 before
its body is even read (a malformed body from a stranger gets 401, not 422). Routes learn
the user from `current_user`. With no tokens configured every request is user
`"default"`: the CLI then binds to loopback only.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import ASGIApp, Receive, Scope, Send

from hookline.errors import ConfigError
from hookline.server.errors import error_response
from hookline.server.schemas import ErrorBody

__all__ = [
    "DEFAULT_USER",
    "PUBLIC_PATHS",
    "AuthMiddleware",
    "current_user",
    "parse_tokens",
    "read_tokens_file",
    "tokens_from_env",
]

DEFAULT_USER = "default"
"""The user of every request when no tokens are configured."""

PUBLIC_PATHS = frozenset({"/", "/healthz", "/readyz", "/openapi.json", "/docs", "/docs/oauth2-redirect",
                          "/.well-known/agent-card.json"})
"""Paths served without a token (plus everything under `/static/`); the A2A Agent Card says how to authenticate."""

_USER_KEY = "hookline.user"
_NEED_TOKEN = "a known bearer token is required (Authorization: Bearer ...)"
_bearer = HTTPBearer(auto_error=False, description="A token from HOOKLINE_TOKENS (not needed when none are set)")


def parse_tokens(spec: str) -> dict[str, str]:
    """Parse `"token:user,token:user"` into `{token: user}`.

    Raises:
        ConfigError: An entry is not `token:user` with both sides non-empty.

    """
    tokens: dict[str, str] = {}
    for number, entry in enumerate(spec.replace("\n", ",").split(","), start=1):
        entry = entry.strip()
        if not entry:
            continue
        token, sep, user = entry.rpartition(":")
        token, user = token.strip(), user.strip()
        if not sep or not token or not user:
            raise ConfigError(f"token entry {number} is not 'token:user' (e.g. HOOKLINE_TOKENS='s3cret:alice')")
        tokens[token] = user
    return tokens


def read_tokens_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a tokens file: one `token:user` per line; blank lines and `#` comments are skipped."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the tokens file {os.fspath(path)!r}: {exc.strerror}") from exc
    return parse_tokens("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))


def tokens_from_env(environ: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """Return the tokens of `HOOKLINE_TOKENS` and `HOOKLINE_TOKENS_FILE` merged (None if neither is set)."""
    env = os.environ if environ is None else environ
    spec, path = env.get("HOOKLINE_TOKENS", ""), env.get("HOOKLINE_TOKENS_FILE", "")
    if not spec.strip() and not path.strip():
        return None
    tokens = read_tokens_file(path) if path.strip() else {}
    tokens.update(parse_tokens(spec))
    return tokens


def _is_public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith("/static/")


def _user_for(authorization: str, tokens: Mapping[str, str]) -> str | None:
    scheme, _, given = authorization.partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return None
    offered = given.strip().encode()
    found = None
    for token, user in tokens.items():
        # Compare against every token, so timing says nothing about which one nearly matched.
        if hmac.compare_digest(token.encode(), offered):
            found = user
    return found


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
            user = _user_for(header.decode("latin-1"), self.tokens)
            if user is None:
                body = ErrorBody(error="unauthorized", message=_NEED_TOKEN)
                await error_response(body, 401, {"WWW-Authenticate": "Bearer"})(scope, receive, send)
                return
            scope[_USER_KEY] = user
        await self.app(scope, receive, send)


def current_user(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)] = None
) -> str:
    """Return the user `AuthMiddleware` found for this request (the bearer scheme is declared for OpenAPI)."""
    user = request.scope.get(_USER_KEY)
    if not isinstance(user, str):
        raise HTTPException(401, "a known bearer token is required", headers={"WWW-Authenticate": "Bearer"})
    return user
