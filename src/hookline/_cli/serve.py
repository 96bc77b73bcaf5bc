"""`hookline serve`: the HTTP server (`hookline.server`) on uvicorn, with its safety checks.

Bearer tokens map to users: `HOOKLINE_TOKENS="token:user,..."`, `HOOKLINE_TOKENS_FILE` and/or
`--tokens-file` (one `token:user` a line; `#` starts a comment), parsed by
`hookline.server.auth`. Without any token
the server has no authentication, so it listens on loopback only: a non-loopback
`--host` is refused.

An agent with a `deps_type` needs deps on every run: `--deps module:function` names the
factory that builds them from each request (`hookline.server.deps`: it gets a `DepsContext`
with the user, the session id and the request). A bare `--deps function` is looked up in
the module of the agent (`hookline serve app.py:agent --deps tenant_deps`). Without it such
an agent is refused before the server starts.

The server logs to stderr: its own records (`hookline.server`: every 5xx with its
traceback), uvicorn's (startup; one line per request with `--access-log`) and any warning of the program,
at `--log-level` (default `info`), every line passed through `hookline._redact.redact`.

Ctrl-C (or SIGTERM) stops the server within 2 s: it stops taking connections, gives
running runs `SHUTDOWN_GRACE` seconds to finish, then cancels them (each records "run
cancelled", and its streams end with that line). With `--drain N`, SIGTERM (what an
orchestrator sends) gives them up to N seconds instead, the server still listening
meanwhile: `/readyz` answers 503 `draining` and a new run 503 `draining` (with
`Retry-After`), so a balancer sends work elsewhere; then it stops. Ctrl-C still stops
within 2 s. uvicorn alone would first wait for every
open stream to end, that is for every run to finish, before it tells the app to shut
down. Past `_STOP_LIMIT` (a run that ignores cancellation), or on a second Ctrl-C, the
process ends at once.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import logging
import os
import re
import signal
import socket
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from hookline._cli.exits import ExitCode, UsageProblem
from hookline._cli.interrupts import CommandLoop, quit_now, watchdog
from hookline._cli.setup import _import, _is_path, _load_file, build_agent, open_store, store_location
from hookline._hosts import is_loopback
from hookline._redact import RedactingFilter, redact
from hookline.agent import Agent
from hookline.errors import ConfigError
from hookline.sessions import SessionStore

if TYPE_CHECKING:
    from hookline.server.deps import DepsFactory
    from hookline.server.runs import RunManager

__all__ = [
    "MEMORY", "SHUTDOWN_GRACE", "ServeOptions", "bind", "check_host", "check_origins", "import_deps_factory",
    "is_loopback", "load_tokens", "logging_to_stderr", "serve_command",
]

TOKENS_ENV = "HOOKLINE_TOKENS"
MEMORY = ":memory:"
"""`--db :memory:`: sessions in the server's memory (a `InMemorySessionStore`), lost when it stops."""

SHUTDOWN_GRACE = 0.5
"""Seconds running runs get to finish after Ctrl-C before they are cancelled."""

_STOP_LIMIT = 1.8
"""Seconds after Ctrl-C past which the process ends without waiting any more (a run ignoring cancellation)."""

_BACKLOG = 2048  # connections waiting to be accepted, as uvicorn's default

LoopFactory = Callable[[], asyncio.AbstractEventLoop]

_ORIGIN = re.compile(r"https?://[^/?#@\s]+")

_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_LOGGERS = ("hookline", "uvicorn")


@dataclass(frozen=True)
class ServeOptions:
    """The options of `hookline serve`."""

    agent: str | None = None
    model: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    db: str | None = None
    tokens_file: Path | None = None
    deps: str | None = None
    log_level: str = "info"
    access_log: bool = False
    """One line per request on stderr (uvicorn's access log): off unless asked for, as it costs on every request."""
    loop: str = "auto"
    """The event loop: "uvloop", "asyncio", or "auto" (uvloop when installed: the `fast` extra)."""
    http: str = "auto"
    """The HTTP parser: "httptools", "h11", or "auto" (httptools when installed: the `fast` extra)."""
    drain: float = 0.5
    """Seconds running runs get to finish after SIGTERM (Ctrl-C: `SHUTDOWN_GRACE`, whatever this says)."""
    cors_origins: tuple[str, ...] = ()
    """Origins whose pages may call the API from a browser (CORS); none: CORS is off."""


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


def check_origins(origins: Iterable[str], tokens: dict[str, str]) -> None:
    """Refuse a `--cors-origin` that is not an origin a browser sends (`scheme://host[:port]`), and `*` without tokens.

    Without tokens every request is the default user: `*` would let any web page its reader
    opens drive the agent.

    Raises:
        UsageProblem: an origin has a path, a query, credentials or no `http(s)://` scheme; or is `*` without tokens.

    """
    for origin in origins:
        if origin == "*" and not tokens:
            raise UsageProblem(f"--cors-origin '*' lets any web page call a server without authentication: set "
                               f"{TOKENS_ENV}=token:user,... or --tokens-file, or name the page's origin")
        if origin != "*" and not _ORIGIN.fullmatch(origin):
            raise UsageProblem(f"--cors-origin {origin!r} is not an origin: write it as the browser sends it, "
                               "scheme://host[:port] with no path or trailing slash, e.g. http://localhost:5173")


def bind(host: str, port: int) -> socket.socket:
    """Open the listening socket before anything else, so a busy port is one clear error.

    It listens at once: whoever reads the address printed next may connect before the
    server starts accepting, and waits in the backlog rather than being refused.

    Raises:
        UsageProblem: The port is taken, not ours to take, or the address is not this machine's.

    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on accepted sockets of that protocol,
    # and without it a kept-alive request's body waits ~40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise UsageProblem(_bind_problem(host, port, exc)) from exc
    sock.listen(_BACKLOG)
    return sock


def _bind_problem(host: str, port: int, exc: OSError) -> str:
    where = f"{host} port {port}"
    if exc.errno == errno.EADDRINUSE:
        other = f", e.g. --port {port + 1}" if 0 < port < 65535 else ""
        return f"cannot serve on {where}: the port is in use; stop what uses it, or pick another with --port{other}"
    if exc.errno == errno.EACCES:
        return f"cannot serve on {where}: permission denied; ports below 1024 need privileges, pick another with --port"
    return f"cannot serve on {where}: {exc.strerror or exc}; check --host and --port"


def serve_command(options: ServeOptions) -> ExitCode:
    """Serve the agent until Ctrl-C; return the exit code."""
    tokens = load_tokens(options.tokens_file)
    check_host(options.host, tokens)
    check_origins(options.cors_origins, tokens)
    uvicorn = _require("uvicorn")
    agent = build_agent(options.agent, options.model)
    deps = _deps_factory(agent, options)
    loop_factory, http = _loop_factory(options.loop), _http_parser(options.http)
    with bind(options.host, options.port) as sock:
        store = _open_store(store_location(options.db))
        app = _create_app(agent, store, tokens, deps, options.cors_origins)
        stderr = Console(stderr=True, highlight=False)
        where = f"[{options.host}]" if ":" in options.host else options.host
        url = f"http://{where}:{sock.getsockname()[1]}"
        engine = f"{'uvloop' if loop_factory is not asyncio.new_event_loop else 'asyncio'}, {http}"
        stderr.print(redact(f"serving agent {agent.name!r} on {url} (sessions: {store!r}; {engine})"), soft_wrap=True)
        if not tokens:
            stderr.print(f"no tokens configured: listening on loopback only; set {TOKENS_ENV}=token:user,... "
                         "or --tokens-file to require bearer tokens", style="yellow", soft_wrap=True)
        with logging_to_stderr(options.log_level):
            _serve(uvicorn, app, options, sock, (loop_factory, http))
    return ExitCode.OK


@contextmanager
def logging_to_stderr(level: str) -> Iterator[None]:
    """Write the server's log to stderr while the block runs: hookline's and uvicorn's at `level`, warnings of any.

    One redacting handler on the root logger, so every line of every logger is cleaned,
    uvicorn's access lines (a query's `?access_token=...`) too.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(_LOG_FORMAT))
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    levels = {name: logging.getLogger(name).level for name in _LOGGERS}
    root.addHandler(handler)
    for name in _LOGGERS:
        logging.getLogger(name).setLevel(level.upper())
    try:
        yield
    finally:
        root.removeHandler(handler)
        for name, before in levels.items():
            logging.getLogger(name).setLevel(before)


def _serve(uvicorn: Any, app: Any, options: ServeOptions, sock: socket.socket, engine: tuple[LoopFactory, str]) -> None:
    loop_factory, http = engine
    # log_config=None: uvicorn adds no handler of its own, its records reach the redacting one
    config = uvicorn.Config(app, host=options.host, port=sock.getsockname()[1], log_config=None,
                            log_level=options.log_level, access_log=options.access_log, http=http, ws="none")
    server = uvicorn.Server(config)
    stop = server.handle_exit
    runs: RunManager = app.state.hookline.runs
    # What is loaded by now (the app, its routes and schemas, the libraries) lives as long as
    # the process: out of the collector's sight, a full collection no longer walks it all.
    gc.freeze()
    with CommandLoop(loop_factory=loop_factory) as loop:

        def handle_exit(signum: int, frame: Any) -> None:
            if server.should_exit:  # a second Ctrl-C: no more waiting
                quit_now()
            if signum == signal.SIGTERM and options.drain > SHUTDOWN_GRACE and not runs.closing:
                # still listening while the runs finish: /readyz says draining and new runs are
                # refused, so a balancer sends them elsewhere; then it stops (a Ctrl-C at once)
                loop.call_soon_threadsafe(_close_runs, runs, options.drain, partial(stop, signum, frame))
                limit = _STOP_LIMIT + 2 * options.drain
                watchdog(limit, f"interrupted: the server did not stop within {limit:g} s")
                return
            stop(signum, frame)
            loop.call_soon_threadsafe(_close_runs, runs, SHUTDOWN_GRACE)
            watchdog(_STOP_LIMIT, f"interrupted: the server did not stop within {_STOP_LIMIT:g} s")

        server.handle_exit = handle_exit
        # Not server.run(): its asyncio.run would wait, at the end, for threads a cancelled run left busy.
        loop.run(server.serve(sockets=[sock]), ctrl_c=False)


def _close_runs(runs: RunManager, grace: float, then: Callable[[], None] | None = None) -> None:
    """Let the runs finish for `grace` s, then cancel them; `then()` once they have ended."""
    task = asyncio.ensure_future(runs.aclose(grace))
    _closing.add(task)
    task.add_done_callback(_closing.discard)
    if then is not None:
        task.add_done_callback(lambda _: then())


_closing: set[asyncio.Future[None]] = set()  # keeps the task alive until it is done


def _loop_factory(name: str) -> LoopFactory:
    """The event loop `--loop` names; "auto": uvloop's when it is installed."""
    if name == "asyncio":
        return asyncio.new_event_loop
    try:
        import uvloop
    except ImportError as exc:
        if name == "uvloop":
            raise ConfigError(f"--loop uvloop needs uvloop: pip install 'hookline[fast]' ({exc})") from exc
        return asyncio.new_event_loop
    factory: LoopFactory = uvloop.new_event_loop
    return factory


def _http_parser(name: str) -> str:
    """The HTTP implementation `--http` names, as uvicorn calls it; "auto": httptools when it is installed."""
    if name == "h11":
        return "h11"
    try:
        import httptools  # noqa: F401 - only whether it imports
    except ImportError as exc:
        if name == "httptools":
            raise ConfigError(f"--http httptools needs httptools: pip install 'hookline[fast]' ({exc})") from exc
        return "h11"
    return "httptools"


def _open_store(location: str) -> SessionStore:
    """The store at `location`; `:memory:` keeps the sessions in this process, gone when it ends."""
    if location == MEMORY:
        from hookline.sessions.memory import InMemorySessionStore

        return InMemorySessionStore()
    return open_store(location)


def _require(module: str) -> Any:
    try:
        return __import__(module)
    except ImportError as exc:
        raise ConfigError(f"hookline serve needs the server extra: pip install 'hookline[server]' ({exc})") from exc


def _create_app(
    agent: Agent, store: SessionStore, tokens: dict[str, str], deps: DepsFactory | None, origins: tuple[str, ...]
) -> Any:
    try:
        from hookline.server.app import create_app
    except ImportError as exc:
        raise ConfigError(f"hookline serve needs the server extra: pip install 'hookline[server]' ({exc})") from exc
    return create_app(agent, store, tokens=tokens, shutdown_grace=SHUTDOWN_GRACE, deps=deps,
                      cors_origins=list(origins) or None)


def _deps_factory(agent: Agent, options: ServeOptions) -> DepsFactory | None:
    """The `--deps` factory, checked against the agent before the port is taken."""
    try:
        from hookline.server.deps import checked_deps_factory
    except ImportError as exc:
        raise ConfigError(f"hookline serve needs the server extra: pip install 'hookline[server]' ({exc})") from exc
    factory = import_deps_factory(options.deps, options.agent) if options.deps is not None else None
    return checked_deps_factory(agent, factory)


def import_deps_factory(target: str, agent_target: str | None) -> DepsFactory:
    """Import the deps factory `--deps` names.

    `target` is `module:function`, `path/to/file.py:function`, or a bare `function` of the
    agent's module (`agent_target`, given as `module:agent`). A file the agent was loaded
    from is not run a second time: its module is reused.

    Raises:
        UsageProblem: A bare name without `module:agent`, or an empty part.
        ConfigError: The module does not import, has no such attribute, or it is not callable.

    """
    source, sep, attr = target.rpartition(":")
    if not sep:
        if agent_target is None or ":" not in agent_target:
            raise UsageProblem(f"--deps {target!r} must look like 'module:function' (a bare name needs the agent "
                               "given as 'module:agent')")
        source = agent_target.rpartition(":")[0]
    if not source or not attr:
        raise UsageProblem(f"--deps {target!r} must look like 'module:function', e.g. 'myapp.deps:tenant_deps'")
    found: object = _module_of(source)
    for name in attr.split("."):
        if not hasattr(found, name):
            raise ConfigError(f"{source!r} has no attribute {attr!r} (from --deps {target!r})")
        found = getattr(found, name)
    if not callable(found):
        raise ConfigError(f"--deps {target!r} is not callable ({type(found).__name__}): it must name a function "
                          "of the request's DepsContext")
    factory: DepsFactory = found
    return factory


def _module_of(source: str) -> object:
    if not _is_path(source):
        return _import(source)
    path = os.path.abspath(source)
    for module in list(sys.modules.values()):
        loaded = getattr(module, "__file__", None)
        if isinstance(loaded, str) and os.path.abspath(loaded) == path:
            return module
    return _load_file(source)
