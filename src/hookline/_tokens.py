"""Bearer tokens that map to users: where they are configured, and whose token a request carries.

```
HOOKLINE_TOKENS="s3cret:alice,0ther:bob"      # or HOOKLINE_TOKENS_FILE=/etc/hookline/tokens
```

Both servers with authentication read them here: `hookline serve` (`hookline.server.auth`,
which also exports the public names) and `hookline mcp --http` (`hookline.mcp.serving`).
This module imports neither FastAPI nor the MCP SDK, so each server loads only its own stack.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Mapping
from pathlib import Path

from hookline.errors import ConfigError

__all__ = [
    "DEFAULT_USER", "TOKENS_ENV", "TOKENS_FILE_ENV", "parse_tokens", "read_tokens_file", "tokens_from_env",
    "user_for",
]

DEFAULT_USER = "default"
"""The user of every request when no tokens are configured."""

TOKENS_ENV = "HOOKLINE_TOKENS"
"""The environment variable of `token:user,...`."""

TOKENS_FILE_ENV = "HOOKLINE_TOKENS_FILE"
"""The environment variable naming a tokens file."""


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
    spec, path = env.get(TOKENS_ENV, ""), env.get(TOKENS_FILE_ENV, "")
    if not spec.strip() and not path.strip():
        return None
    tokens = read_tokens_file(path) if path.strip() else {}
    tokens.update(parse_tokens(spec))
    return tokens


def user_for(authorization: str, tokens: Mapping[str, str]) -> str | None:
    """The user whose token an `Authorization` header value carries (`Bearer <token>`); None: no known one."""
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
