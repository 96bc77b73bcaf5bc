"""The `hookline` command line: a thin layer of typer commands over the library.

```
hookline run "What is 2+3? Use the add tool."      answer on stdout, status on stderr
hookline chat [--session ID]                       a REPL on a session
hookline serve module:agent [--host --port --db --log-level --cors-origin]   the HTTP server
hookline mcp [module:agent] [--http --port]        the agent as an MCP tool (stdio, or streamable HTTP)
hookline sessions list | show ID | rm ID | export ID [--as-case]
hookline replay ID [--agent module:agent] [--tools replay|real]   re-run an agent on a session's recorded answers
hookline eval PATH [--agent module:agent] [--replay]              run eval cases, print the summary table
```

Exit codes, for scripts:

| code | meaning |
|---|---|
| 0 | ok |
| 1 | the run failed (a model, hook or store error, `--max-turns` calls); a replay diverged; a case failed |
| 2 | usage or configuration error: a bad option, an unknown model provider, no model available |
| 3 | session not found, or busy with another run |
| 4 | the run stopped to ask approval for a tool call (`stop_reason == "interrupted"`) |
| 130 | interrupted with Ctrl-C: the first cancels the run (within 2 s), a second quits at once |

An error is reported as one line on stderr (`error: ...`); `--debug` adds the traceback.
The commands' work lives in `hookline._cli`, one module per command.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from hookline._cli.exits import ExitCode, RedactingGroup, report_errors
from hookline.mcp.cli import mcp_command

__all__ = ["EventLoop", "HttpParser", "LogLevel", "app", "main"]



class LogLevel(StrEnum):
    """The values of `hookline serve --log-level`."""

    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class EventLoop(StrEnum):
    """The values of `hookline serve --loop`."""

    AUTO = "auto"
    UVLOOP = "uvloop"
    ASYNCIO = "asyncio"


class HttpParser(StrEnum):
    """The values of `hookline serve --http`."""

    AUTO = "auto"
    HTTPTOOLS = "httptools"
    H11 = "h11"


app = typer.Typer(
    name="hookline",
    cls=RedactingGroup,
    help="Run LLM agents as a tool loop whose every step is an event in a durable session log.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
sessions_app = typer.Typer(help="List, show, delete and export stored sessions.", no_args_is_help=True)
app.add_typer(sessions_app, name="sessions")

Model = Annotated[
    str | None,
    typer.Option("--model", "-m", help="'provider:model', e.g. openai:gpt-4o-mini [default: $HOOKLINE_MODEL, "
                 "else openai:gpt-4o-mini when $OPENAI_API_KEY is set, else local:smollm2]", show_default=False),
]
AgentRef = Annotated[
    str | None,
    typer.Option("--agent", "-a", help="Run your Agent instead of the default one: 'module:attribute'.",
                 show_default=False),
]
Db = Annotated[
    str | None,
    typer.Option("--db", help="Session store: a SQLite file or a postgresql:// URL [default: "
                 "$HOOKLINE_DATABASE_URL, else $HOOKLINE_DB, else ./hookline.db]", show_default=False),
]
MaxTurns = Annotated[int | None, typer.Option("--max-turns", min=1, help="Model calls allowed in this run.")]
Debug = Annotated[bool, typer.Option("--debug", help="Show tracebacks of errors.")]
SessionId = Annotated[str, typer.Argument(metavar="ID", help="The session's id.")]


@app.command()
def run(
    prompt: Annotated[str, typer.Argument(help="The prompt; '-' reads it from stdin.")],
    model: Model = None,
    agent: AgentRef = None,
    session: Annotated[str | None, typer.Option("--session", "-s", help="Record the run in this session.")] = None,
    db: Db = None,
    json: Annotated[bool, typer.Option("--json", help="Print the run's events as JSON lines instead of the answer.")]
    = False,
    max_turns: MaxTurns = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No status lines on stderr.")] = False,
    debug: Debug = False,
) -> None:
    """Run one prompt: the answer on stdout, live status lines on stderr."""
    from hookline._cli.run import RunOptions, run_command

    options = RunOptions(prompt, agent, model, session, db, json, max_turns, quiet)
    with report_errors(debug=debug):
        _exit(run_command(options))


@app.command()
def chat(
    model: Model = None,
    agent: AgentRef = None,
    session: Annotated[str | None, typer.Option("--session", "-s", help="Session to continue [default: a new one].")]
    = None,
    db: Db = None,
    max_turns: MaxTurns = None,
    debug: Debug = False,
) -> None:
    """Chat in a REPL on a session; answers stream, tool approvals are asked inline."""
    from hookline._cli.chat import ChatOptions, chat_command

    with report_errors(debug=debug):
        _exit(chat_command(ChatOptions(agent, model, session, db, max_turns)))


@app.command()
def serve(
    agent: Annotated[str | None, typer.Argument(help="'module:attribute' of your Agent [default: the default agent].",
                                                show_default=False)] = None,
    host: Annotated[str, typer.Option(help="Address to listen on (beyond loopback only with tokens).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8000,
    db: Db = None,
    tokens_file: Annotated[Path | None, typer.Option("--tokens-file", help="A file of 'token:user' lines "
                                                     "(adds to $HOOKLINE_TOKENS).", show_default=False)] = None,
    model: Model = None,
    deps: Annotated[str | None, typer.Option("--deps", help="'module:function' building each run's deps from its "
                                             "request (a bare 'function': in the agent's module).",
                                             show_default=False)] = None,
    log_level: Annotated[LogLevel, typer.Option("--log-level", case_sensitive=False,
                                                help="The server log on stderr: hookline's and uvicorn's records "
                                                "from this level up (warnings of any logger).")] = LogLevel.INFO,
    access_log: Annotated[bool, typer.Option("--access-log/--no-access-log",
                                             help="One line per request on stderr.")] = False,
    loop: Annotated[EventLoop, typer.Option("--loop", case_sensitive=False, help="The event loop; auto: uvloop "
                                            "when installed (pip install 'hookline[fast]').")] = EventLoop.AUTO,
    http: Annotated[HttpParser, typer.Option("--http", case_sensitive=False, help="The HTTP parser; auto: "
                                             "httptools when installed.")] = HttpParser.AUTO,
    drain: Annotated[float, typer.Option("--drain", min=0.0, help="Seconds running runs get to finish after "
                                         "SIGTERM (Ctrl-C: 0.5 s).")] = 0.5,
    cors_origin: Annotated[list[str] | None, typer.Option("--cors-origin", help="An origin whose pages may call the "
                                                          "API, e.g. http://localhost:5173 (repeat for more; "
                                                          "default: none).", show_default=False)] = None,
    debug: Debug = False,
) -> None:
    """Serve an agent over HTTP (FastAPI): sessions, runs, server-sent events, a web page."""
    from hookline._cli.serve import ServeOptions, serve_command

    options = ServeOptions(agent, model, host, port, db, tokens_file, deps, log_level.value, access_log, loop.value,
                           http.value, drain, tuple(cors_origin or ()))
    with report_errors(debug=debug):
        _exit(serve_command(options))


app.command("mcp")(mcp_command)  # hookline.mcp.cli imports typer only; the MCP SDK loads when it runs


@sessions_app.command("list")
def sessions_list(
    db: Db = None,
    json: Annotated[bool, typer.Option("--json", help="One JSON object a line instead of a table.")] = False,
    limit: Annotated[int, typer.Option("--limit", min=1, help="List at most this many, the newest.")] = 100,
    debug: Debug = False,
) -> None:
    """List the stored sessions, newest first (the newest 100 unless `--limit` says otherwise)."""
    from hookline._cli.sessions import list_sessions

    with report_errors(debug=debug):
        list_sessions(db, as_json=json, limit=limit, console=_stdout())


@sessions_app.command("show")
def sessions_show(session_id: SessionId, db: Db = None, debug: Debug = False) -> None:
    """Show a session's log: messages, and status lines dimmed with their source."""
    from hookline._cli.sessions import show_session

    with report_errors(debug=debug):
        show_session(db, session_id, console=_stdout())


@sessions_app.command("rm")
def sessions_rm(session_id: SessionId, db: Db = None, debug: Debug = False) -> None:
    """Delete a session and its whole log."""
    from hookline._cli.sessions import remove_session

    with report_errors(debug=debug):
        remove_session(db, session_id)


@sessions_app.command("export")
def sessions_export(
    session_id: SessionId,
    db: Db = None,
    as_case: Annotated[bool, typer.Option("--as-case", help="Print the eval case the session makes (JSON) instead.")]
    = False,
    name: Annotated[str | None, typer.Option("--name", help="The case's name [default: the session's id].",
                                             show_default=False)] = None,
    debug: Debug = False,
) -> None:
    """Print a session's whole log as JSON lines of Event (or, with --as-case, an eval case)."""
    from hookline._cli.sessions import export_session

    with report_errors(debug=debug):
        export_session(db, session_id, as_case=(name or session_id) if as_case else None)


class ToolMode(StrEnum):
    """The values of `hookline replay --tools` and `hookline eval --tools`."""

    REPLAY = "replay"
    REAL = "real"


Tools = Annotated[ToolMode, typer.Option("--tools", case_sensitive=False,
                                         help="replay: answer tool calls with their recorded results; real: run "
                                         "the agent's tools.")]


@app.command()
def replay(
    session_id: SessionId,
    agent: AgentRef = None,
    db: Db = None,
    tools: Tools = ToolMode.REPLAY,
    json: Annotated[bool, typer.Option("--json", help="Print the report as one JSON object.")] = False,
    debug: Debug = False,
) -> None:
    """Re-run an agent against a session's recorded model answers; report where it diverges (exit 1)."""
    from hookline._cli.replay import replay_command

    with report_errors(debug=debug):
        _exit(replay_command(session_id, db, agent, tools.value, json))


@app.command("eval")
def eval_cases(
    path: Annotated[str, typer.Argument(help="A JSON file of cases, or a folder of them.")],
    agent: AgentRef = None,
    model: Model = None,
    replay: Annotated[bool, typer.Option("--replay", help="Answer with each case's recorded model answers.")]
    = False,
    tools: Tools = ToolMode.REAL,
    db: Annotated[str | None, typer.Option("--db", help="Keep each case's session (and verdict) in this store.",
                                           show_default=False)] = None,
    json: Annotated[bool, typer.Option("--json", help="One JSON object a case instead of the table.")] = False,
    debug: Debug = False,
) -> None:
    """Run eval cases against an agent and print the summary table (exit 1 if one fails)."""
    from hookline._cli.evals import eval_command

    with report_errors(debug=debug):
        _exit(eval_command(path, agent, model, replay, tools.value, db, json))


def _stdout() -> Console:
    return Console(highlight=False)


def _exit(code: ExitCode) -> None:
    if code != ExitCode.OK:
        raise typer.Exit(int(code))


def main() -> None:
    """Run the `hookline` console script.

    It ends through `end_process`, so worker threads that a cancelled run left busy do not
    hold the exit (see `hookline._cli.interrupts`).
    """
    from hookline._cli.interrupts import end_process

    try:
        app()
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            end_process(stop.code or 0)
        raise
