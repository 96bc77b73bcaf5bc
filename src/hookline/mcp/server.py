"""An agent served as an MCP tool, over stdio or streamable HTTP.

The server has one tool, named after the agent. It takes `prompt` and an optional
`session_id`, and answers with the run's output. While the run goes, each status event
("turn 1: calling model", "running add(a=2, b=3)", "add returned 5") is sent as a
progress notification whose message is the status line, so an MCP client can show what
the agent does. With a `session_id`, the run continues that session of the agent's store
(the conversation carries over from call to call); without one, each call starts afresh.
Over HTTP with bearer tokens (`HOOKLINE_TOKENS`), the sessions belong to the user of the
token that comes with the call: another user's session is not found.

A client that declares the MCP tasks extension (`io.modelcontextprotocol/tasks`, on
2026-07-28 requests) gets the call as a task: answered at once, the run going on in the
background, its status line the task's status message, its answer read with `tasks/get`,
`tasks/cancel` cancelling the run (see `hookline.mcp._tasks`). Tasks are the caller's own.

The caller's sessions are also read-only resources (`hookline://sessions/{id}`, JSON of a
page of the log; see `hookline.mcp._sessions`): the newest 100 listed, each read a page of
its newest events at a time. Over stdio, and over HTTP without tokens, the caller is user
`"default"`.

```
hookline mcp myapp.agents:agent                        # stdio, for Claude Desktop, IDEs, ...
hookline mcp myapp.agents:agent --http --port 8000      # streamable HTTP on 127.0.0.1:8000/mcp
HOOKLINE_TOKENS=s3cret:alice hookline mcp myapp.agents:agent --http --host 0.0.0.0   # bearer tokens
python -m hookline.mcp myapp.agents:agent               # the same, without the hookline command
```

A run that fails, or stops to ask approval for a tool call (which an MCP client cannot
give), answers with an error result (`isError`) saying so. A call the client cancels
cancels the run.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable, Mapping
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from hookline._redact import redact
from hookline.agent import Agent, PromptRequest
from hookline.errors import ConfigError, HooklineError
from hookline.mcp import _sessions, _tasks, serving
from hookline.result import RunResult
from hookline.sessions import SessionStore
from hookline.tools import to_content

__all__ = ["build_server", "run_as_tool", "serve_http", "serve_stdio", "tool_name"]

_INVALID = re.compile(r"[^A-Za-z0-9_.-]")


def tool_name(agent: Agent) -> str:
    """The MCP tool name of `agent`: its name, with characters MCP does not allow made `_`."""
    return (_INVALID.sub("_", agent.name.strip()) or "agent")[:128]


def _input_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "What to ask the agent."},
            "session_id": {
                "type": "string",
                "description": "Continue this conversation (created on first use); leave out for a new one.",
            },
        },
        "required": ["prompt"],
    }


def build_server(agent: Agent, *, store: SessionStore | None = None, description: str | None = None) -> Server[Any]:
    """An MCP server (the SDK's low-level `Server`) whose one tool runs `agent`, its sessions resources.

    Args:
        agent: The agent to serve.
        store: Where sessions named by `session_id` live, listed and read as resources
            (default: the agent's store).
        description: The tool's description (default: a generic one naming the agent).

    Raises:
        ConfigError: `agent` is not an `Agent`, `store` not a `SessionStore`, or `description`
            not a string.
    """
    _check(agent, store, description)
    sessions = store if store is not None else agent.session_store
    name = tool_name(agent)
    tool = types.Tool(
        name=name,
        description=description or f"Ask the {agent.name!r} agent. It may take several steps; "
        "pass session_id to continue a conversation.",
        input_schema=_input_schema(),
    )

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != name:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; this server has one tool: {name!r}")
        request = _request(agent, params.arguments or {}, store, serving.request_user(ctx))
        if isinstance(request, str):
            return _error(request)

        async def report(step: int, line: str) -> None:
            if not _tasks.note(line):  # in a task, the line is its status message; else a progress notification
                await ctx.session.report_progress(step, None, line)

        return await run_as_tool(request, report)

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return await _sessions.list_sessions(sessions, app=agent.app, user=serving.request_user(ctx))

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return _sessions.templates()

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        return await _sessions.read_session(sessions, params.uri, user=serving.request_user(ctx))

    server: Server[Any] = Server(agent.name, version=_version(), on_list_tools=list_tools, on_call_tool=call_tool,
                                 on_list_resources=list_resources, on_list_resource_templates=list_templates,
                                 on_read_resource=read_resource)
    _tasks.Tasks(lambda params: "optional" if params.name == name else None).install(server)
    return server


def _check(agent: Any, store: Any, description: Any) -> None:
    if not isinstance(agent, Agent):
        raise ConfigError(f"build_server() serves an Agent, not {type(agent).__name__}: pass hookline.Agent(...)")
    if store is not None and not isinstance(store, SessionStore):
        raise ConfigError(f"store must be a SessionStore (or None: the agent's own), not {type(store).__name__}")
    if description is not None and not isinstance(description, str):
        raise ConfigError(f"description must be a string (or None: a generic one), not {type(description).__name__}")


def _request(agent: Agent, arguments: dict[str, Any], store: SessionStore | None, user: str) -> PromptRequest | str:
    """The run a call of `user` asks for, or what is wrong with the call."""
    prompt, session_id = arguments.get("prompt"), arguments.get("session_id")
    if not isinstance(prompt, str) or not prompt.strip():
        return "prompt must be a non-empty string: the text the agent should answer"
    if session_id is not None and (not isinstance(session_id, str) or not session_id):
        return "session_id must be a non-empty string, or left out for a new conversation"
    request = agent.prompt(prompt)
    if session_id:
        request.session(session_id, user=user, store=store)  # another user's: SessionNotFound
    return request


async def run_as_tool(request: PromptRequest, report: Callable[[int, str], Any]) -> types.CallToolResult:
    """Run `request`, sending each status line to `report(step, line)`; the answer as a tool result."""
    step = 0
    try:
        async for event in request.stream():
            if event.kind == "status" and event.text:
                step += 1
                await report(step, event.text)
    except HooklineError as exc:
        return _error(f"the run failed: {exc}")
    except Exception as exc:  # the client gets the failure as a result, the server goes on
        return _error(f"the run failed: {type(exc).__name__}: {exc}")
    assert request.result is not None
    return _answer(request.result)


def _answer(result: RunResult) -> types.CallToolResult:
    if result.stop_reason == "interrupted":
        calls = ", ".join(f"{i.name} ({i.call_id})" for i in result.interruptions)
        where = f" in session {result.session_id!r}" if result.session_id else ""
        return _error(f"the run stopped to ask approval for {calls}{where}; an MCP client cannot give it, "
                      "so approve it with hookline (agent.resume)")
    if result.stop_reason == "cancelled":
        return _error("the run was cancelled")
    return types.CallToolResult(content=[types.TextContent(text=to_content(result.output))])


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=redact(message))], is_error=True)


async def serve_stdio(agent: Agent, *, store: SessionStore | None = None) -> None:
    """Serve `agent` over this process's stdin and stdout until stdin ends; then close the agent."""
    try:
        await serving.serve_stdio(build_server(agent, store=store))
    finally:
        await agent.close()


async def serve_http(
    agent: Agent,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    store: SessionStore | None = None,
    sock: socket.socket | None = None,
    tokens: Mapping[str, str] | None = None,
) -> None:
    """Serve `agent` over streamable HTTP at `http://host:port/mcp` until stopped (Ctrl-C); then close it.

    Both protocol eras are spoken on that one endpoint (see `hookline.mcp.serving`).

    Args:
        agent: The agent to serve.
        host: The address to listen on: beyond loopback only with tokens.
        port: The port (0: any free one).
        store: Where sessions named by `session_id` live (default: the agent's store).
        sock: A socket already bound (then `host` and `port` only name it).
        tokens: `{bearer token: user}`: each call then needs a token, and its user owns the
            sessions the call creates or continues. None reads `HOOKLINE_TOKENS` /
            `HOOKLINE_TOKENS_FILE`; empty (or nothing configured): no authentication.

    Raises:
        ConfigError: `host` is not a loopback address and there are no tokens.
    """
    try:
        await serving.serve_http(build_server(agent, store=store), host, port, sock=sock, tokens=tokens)
    finally:
        await agent.close()


def _version() -> str:
    from hookline import __version__

    return __version__
