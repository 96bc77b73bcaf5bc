"""`hookline mcp [module:agent] [--http --host --port]`: serve an agent as an MCP tool.

`mcp_command` is a typer command; `hookline.cli` registers it as `hookline mcp`, and
`python -m hookline.mcp` runs it alone (`main`). Over stdio, stdout carries the
protocol, so everything else (the banner, errors) goes to stderr.

Over HTTP, the bearer tokens of `hookline serve` (`HOOKLINE_TOKENS`, `HOOKLINE_TOKENS_FILE`,
`--tokens-file`) guard the server; without any, it listens on loopback only. Over stdio (a local process,
started by its client) there is no authentication.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["main", "mcp_command"]


def mcp_command(
    agent: Annotated[str | None, typer.Argument(help="'module:attribute' of your Agent [default: the default agent].",
                                                show_default=False)] = None,
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP instead of stdio.")] = False,
    host: Annotated[str, typer.Option(help="Address to listen on with --http (beyond loopback only with "
                                      "HOOKLINE_TOKENS).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on with --http (0: any free one).")]
    = 8000,
    tokens_file: Annotated[Path | None, typer.Option("--tokens-file", help="With --http: a file of 'token:user' "
                                                     "lines (# comments), merged with HOOKLINE_TOKENS.",
                                                     show_default=False)] = None,
    db: Annotated[str | None, typer.Option("--db", help="Session store for session_id: a SQLite file or a "
                                           "postgresql:// URL [default: the agent's own store].",
                                           show_default=False)] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="'provider:model' for the default agent.",
                                              show_default=False)] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks of errors.")] = False,
) -> None:
    """Serve an agent as an MCP tool (one tool: prompt, optional session_id) over stdio or --http.

    Over --http, HOOKLINE_TOKENS="token:user,..." (or HOOKLINE_TOKENS_FILE, or --tokens-file)
    requires a bearer token on every request, whose user owns the sessions; without tokens it
    serves loopback only.
    """
    from hookline._cli.exits import UsageProblem, report_errors

    with report_errors(debug=debug):
        if tokens_file is not None and not http:
            raise UsageProblem("--tokens-file guards --http only (over stdio the client starts the server itself)")
        _serve(agent, http=http, host=host, port=port, db=db, model=model, tokens_file=tokens_file)


def _serve(target: str | None, *, http: bool, host: str, port: int, db: str | None, model: str | None,
           tokens_file: Path | None) -> None:
    import anyio

    from hookline._cli.setup import build_agent, open_store
    from hookline.errors import ConfigError

    try:
        from hookline.mcp.server import serve_http, serve_stdio, tool_name
    except ImportError as exc:
        raise ConfigError(f"hookline mcp needs the MCP SDK: pip install 'hookline[mcp]' ({exc})") from exc

    tokens = _tokens(host, tokens_file) if http else {}
    agent = build_agent(target, model)
    store = open_store(db) if db else None

    async def serve(serving: Awaitable[None]) -> None:
        try:
            await serving
        finally:
            if store is not None:
                await store.aclose()

    if not http:
        anyio.run(serve, serve_stdio(agent, store=store))
        return
    from hookline._cli.serve import bind

    sock = bind(host, port)
    where = f"[{host.strip('[]')}]" if ":" in host else host
    guard = "bearer tokens required" if tokens else "no tokens configured: loopback only"
    print(f"serving agent {agent.name!r} as MCP tool {tool_name(agent)!r} on "
          f"http://{where}:{sock.getsockname()[1]}/mcp ({guard})", file=sys.stderr, flush=True)
    with sock:
        anyio.run(serve, serve_http(agent, host, port, store=store, sock=sock, tokens=tokens))


def _tokens(host: str, tokens_file: Path | None) -> dict[str, str]:
    """The bearer tokens of the environment and of `tokens_file` (merged), checked against `host`.

    Beyond loopback, some are needed.

    Raises:
        UsageProblem: `host` is not loopback and no token is configured.
        ConfigError: A token entry is not `token:user`, or the tokens file cannot be read.
    """
    from hookline._cli.exits import UsageProblem
    from hookline._hosts import is_loopback
    from hookline._tokens import TOKENS_ENV, TOKENS_FILE_ENV, read_tokens_file, tokens_from_env

    tokens = tokens_from_env() or {}
    if tokens_file is not None:
        tokens.update(read_tokens_file(tokens_file))
    if not tokens and not is_loopback(host):
        raise UsageProblem(f"refusing to serve MCP on {host} without authentication: set {TOKENS_ENV}=token:user,... "
                           f"(or {TOKENS_FILE_ENV}, or --tokens-file) to require bearer tokens, or listen on "
                           "--host 127.0.0.1")
    return tokens


def main() -> int:
    """Run `mcp_command` as a program (`python -m hookline.mcp ...`); return its exit code."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    app.command()(mcp_command)
    try:
        app(prog_name="python -m hookline.mcp")
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 0
    return 0
