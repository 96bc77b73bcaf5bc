"""`hookline serve`: the HTTP server (`hookline.server`) on uvicorn, with its safety checks.

Bearer tokens map to users: `HOOKLINE_TOKENS="token:user,..."`, `HOOKLINE_TOKENS_FILE` and/or
`--tokens-file` (one `token:user` a line; `#` starts a comment), parsed by
`hookline.server.auth`. Without any token
the server has no authentication, so it listens on loopback only: a non-loopback
`--host` is refused.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from hookline._cli.exits import ExitCode, UsageProblem
from hookline._cli.setup import build_agent, open_store, store_location
from hookline.agent import Agent
from hookline.errors import ConfigError
from hookline.sessions import SessionStore

__all__ = ["ServeOptions", "check_host", "is_loopback", "load_tokens", "serve_command"]

TOKENS_ENV = "HOOKLINE_TOKENS"


@dataclass(frozen=True)
class ServeOptions:
    """The options of `hookline serve`."""

    agent: str | None = None
    model: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    db: str | None = None
    tokens_file: Path | None = None


def load_tokens(tokens_file: Path | None) -> dict[str, str]:
    """Read the tokens of `HOOKLINE_TOKENS`, `HOOKLINE_TOKENS_FILE` and `tokens_file` (merged, the file last).

    Raises:
        ConfigError: a token entry is not `token:user`, or the file cannot be read.

    """
    try:
        from hookline.server.auth import read_tokens_file, tokens_from_env
    except ImportError as exc:
        raise ConfigError(f"hookline serve needs the server extra: pip install 'hookline[server]' ({exc})") from exc
    tokens = dict(tokens_from_env() or {})
    if tokens_file is not None:
        tokens.update(read_tokens_file(tokens_file))
    return tokens


def is_loopback(host: str) -> bool:
    """Tell whether `host` is a loopback address (127.0.0.0/8, ::1) or `localhost`."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_host(host: str, tokens: dict[str, str]) -> None:
    """Refuse to listen beyond loopback without tokens.

    Raises:
        UsageProblem: `host` is not loopback and no token is configured.

    """
    if not tokens and not is_loopback(host):
        raise UsageProblem(
            f"refusing to serve on {host} without authentication: set {TOKENS_ENV}=token:user,... "
            "or pass --tokens-file, or listen on --host 127.0.0.1"
        )


def serve_command(options: ServeOptions) -> ExitCode:
    """Serve the agent until Ctrl-C; return the exit code."""
    tokens = load_tokens(options.tokens_file)
    check_host(options.host, tokens)
    uvicorn = _require("uvicorn")
    agent = build_agent(options.agent, options.model)
    store = open_store(store_location(options.db))
    app = _create_app(agent, store, tokens)
    stderr = Console(stderr=True, highlight=False)
    where = f"[{options.host}]" if ":" in options.host else options.host
    stderr.print(f"serving agent {agent.name!r} on http://{where}:{options.port} (sessions: {store!r})", soft_wrap=True)
    if not tokens:
        stderr.print(f"no tokens configured: listening on loopback only; set {TOKENS_ENV}=token:user,... "
                     "or --tokens-file to require bearer tokens", style="yellow", soft_wrap=True)
    uvicorn.run(app, host=options.host, port=options.port)
    return ExitCode.OK


def _require(module: str) -> Any:
    try:
        return __import__(module)
    except ImportError as exc:
        raise ConfigError(f"hookline serve needs the server extra: pip install 'hookline[server]' ({exc})") from exc


def _create_app(agent: Agent, store: SessionStore, tokens: dict[str, str]) -> Any:
    try:
        from hookline.server.app import create_app
    except ImportError as exc:
        raise ConfigError(f"hookline serve needs the server extra: pip install 'hookline[server]' ({exc})") from exc
    return create_app(agent, store, tokens=tokens)
