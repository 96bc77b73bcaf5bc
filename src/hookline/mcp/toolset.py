"""`MCPToolset`: the tools of an MCP server, in `Agent(tools=[...])` beside plain tools.

```python
files = MCPToolset.stdio("npx", args=["-y", "@modelcontextprotocol/server-filesystem", "."])
search = MCPToolset.http("http://127.0.0.1:8931/mcp", headers={"Authorization": "Bearer ..."}, prefix="web")
agent = Agent(model=..., tools=[add, files, search])
```

What happens, and when:

- The server is started (stdio) or reached (HTTP) when a run first needs it, or at
  `async with toolset:`. Its tools are listed once and kept until the server says they
  changed (`notifications/tools/list_changed`, or a `subscriptions/listen` event on
  2026-07-28 connections); the new list shows up on the next model turn.
- A call may take `timeout` seconds (300 by default; None for no limit). Past that, the
  server is asked to stop, and the model gets an error result saying so.
- A connection found dropped (the server exited, or an HTTP server cannot be reached) is
  reopened once, and the call is sent again only when it never reached the server. A call
  the connection dropped under becomes an error result saying it may or may not have run.
- An error result of the tool (`isError`) or a JSON-RPC error becomes an error result for
  the model (`is_error=True`); the run goes on.
- Progress and log notifications during a call become status lines of the run
  ("progress 2/5: indexing", "warning: disk almost full"), like log records of a plain tool.
- A question the server asks the user during a call (elicitation) pauses the run at that
  call; the answer on resume goes back to the server (see `hookline.mcp._caller`).
- On 2026-07-28 connections the toolset declares the MCP tasks extension: a call the server
  answers with a task is waited for, within `timeout`, and a call cancelled or past it
  cancels the task (`hookline.mcp._task_client`).
- `resources()`, `read(uri)`, `prompts()` and `prompt(name, arguments)` give the server's
  resources and prompts as hookline parts and messages (`hookline.mcp.catalog`).
- `aclose()` (or `Agent.close()`) stops a stdio server. A program that never closes the
  toolset still leaves no server behind: when its event loop ends, the connection's task
  is cancelled and stops the server.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar, get_args

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from hookline._context_var import current_contexts
from hookline._run.status import current_capture
from hookline.context import RunContext
from hookline.errors import ConfigError, ToolError
from hookline.mcp._caller import Caller, question_of
from hookline.mcp._connection import Connection
from hookline.mcp._convert import local_names, parameters_of, result_text, result_value
from hookline.mcp._transports import (
    UNSENT,
    HttpTarget,
    MCPConnectionError,
    MCPRequestError,
    Settings,
    StdioTarget,
    Target,
)
from hookline.mcp.catalog import (
    MCPPrompt,
    MCPResource,
    ResourcePart,
    message_of,
    parts_of,
    prompt_of,
    resource_of,
)
from hookline.mcp.oauth import OAuth
from hookline.messages import FilePart, ImagePart, Message, ToolCallPart, ToolResultPart
from hookline.models import ToolSpec
from hookline.tools import Tool
from hookline.toolsets import Toolset

__all__ = ["MCPConnectionError", "MCPPrompt", "MCPRequestError", "MCPResource", "MCPTool", "MCPToolset"]

logger = logging.getLogger("hookline.mcp")
T = TypeVar("T")

_PREFIX = re.compile(r"[A-Za-z0-9_-]{1,32}")
_LEVELS = get_args(types.LoggingLevel)


class MCPToolset(Toolset):
    """The tools of one MCP server. Build one with `MCPToolset.stdio(...)` or `MCPToolset.http(...)`.

    An async context manager: `async with toolset:` connects it and then stops the server.
    In an `Agent`, it connects when a run starts and `Agent.close()` closes it.

    Args:
        target: Where the server is (from `stdio()` or `http()`).
        prefix: Put before each tool's name (`prefix_name`), to keep two servers' tools apart.
        timeout: Seconds a call may take before it becomes an error result; None: no limit.
        connect_timeout: Seconds to start the server and finish the handshake.
        log_level: The lowest MCP log level that becomes a status line (the server is asked for it too).
    """

    def __init__(
        self,
        target: Target,
        *,
        prefix: str | None = None,
        timeout: float | None = 300.0,
        connect_timeout: float = 60.0,
        log_level: types.LoggingLevel = "info",
    ) -> None:
        if prefix is not None and not _PREFIX.fullmatch(prefix):
            raise ConfigError(f"prefix must be 1-32 letters, digits, '_' or '-', not {prefix!r}")
        if timeout is not None and not _positive(timeout):
            raise ConfigError(f"timeout must be a positive number of seconds or None, not {timeout!r}")
        if not _positive(connect_timeout):
            raise ConfigError(f"connect_timeout must be a positive number of seconds, not {connect_timeout!r}")
        if log_level not in _LEVELS:
            raise ConfigError(f"log_level must be one of {', '.join(_LEVELS)}, not {log_level!r}")
        self.target = target
        self.prefix = prefix
        self.settings = Settings(timeout=timeout, connect_timeout=connect_timeout, log_level=log_level)
        self.version = 0
        self._connection: Connection | None = None
        self._tools: dict[str, MCPTool] | None = None
        self._task_only: list[str] = []
        self._parked: dict[str, _Parked] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = asyncio.Lock()

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> MCPToolset:
        """A server run as a subprocess, spoken to over its stdin and stdout.

        Args:
            command: The executable, e.g. `"npx"` or `sys.executable`.
            args: Its arguments.
            env: Environment variables for it, added to a small safe set (HOME, PATH, USER, ...):
                the rest of this process's environment is not passed on.
            cwd: Its working directory.
            **options: `prefix`, `timeout`, `connect_timeout`, `log_level` (see the class).
        """
        if not isinstance(command, str) or not command:
            raise ConfigError(f"command must be a non-empty string, not {command!r}")
        if isinstance(args, str) or not all(isinstance(a, str) for a in args):
            raise ConfigError("args must be a list of strings, e.g. args=['-y', 'some-mcp-server']")
        target = StdioTarget(command, tuple(args), dict(env) if env is not None else None,
                             os.fspath(cwd) if cwd is not None else None)
        return cls(target, **options)

    @classmethod
    def http(cls, url: str, headers: Mapping[str, str] | None = None, *, auth: OAuth | None = None,
             **options: Any) -> MCPToolset:
        """A server spoken to over streamable HTTP.

        Args:
            url: The server's MCP endpoint, e.g. `http://127.0.0.1:8000/mcp`.
            headers: Sent with every request (e.g. `Authorization`); never shown in messages.
            auth: `OAuth(...)`: get a token from the server's authorization server when it
                asks for one (see `hookline.mcp.oauth`). The user is sent to the authorization
                page during `connect()`: allow for it with `connect_timeout`.
            **options: `prefix`, `timeout`, `connect_timeout`, `log_level` (see the class).
        """
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(f"url must be an http:// or https:// URL, not {url!r}")
        if auth is not None and not isinstance(auth, OAuth):
            raise ConfigError(f"auth must be hookline.mcp.OAuth(...), not {type(auth).__name__}")
        return cls(HttpTarget(url, dict(headers or {}), auth), **options)

    def __repr__(self) -> str:
        return f"MCPToolset({self.target.label!r}, prefix={self.prefix!r})"

    @property
    def label(self) -> str:
        """`MCP server 'name'` once connected, else where the server is."""
        return self._connection.label if self._connection is not None else self.target.label

    @property
    def connected(self) -> bool:
        """Whether the connection is open (a dropped one reopens on the next call or run)."""
        return self._connection is not None and self._connection.alive

    async def connect(self) -> None:
        """Open the connection and list the tools; when open, list them again only if they changed.

        Raises:
            MCPConnectionError: the server did not start, answer, or list its tools.
        """
        self._check_loop()
        async with self._lock:
            connection = self._connection
            if connection is not None and connection.alive:
                await connection.refresh()
                return
            await self._reopen(connection)

    def tools(self) -> list[Tool]:
        """The server's tools as last listed.

        Raises:
            ConfigError: the toolset was never connected.
        """
        if self._tools is None:
            raise ConfigError(f"{self.label} is not connected yet: `await toolset.connect()` or "
                              "`async with toolset:` first (an Agent connects its toolsets when a run starts)")
        return list(self._tools.values())

    async def aclose(self) -> None:
        """Close the connection: a stdio server is asked to exit, then stopped. A later `connect()` reopens it.

        Calls waiting for their user's answer are cancelled; a resume sends them again.
        """
        parked, self._parked = list(self._parked.values()), {}
        for waiting in parked:
            waiting.task.cancel()
        connection, self._connection = self._connection, None
        if connection is not None and self._loop is asyncio.get_running_loop():
            await connection.close()

    async def _reopen(self, old: Connection | None) -> Connection:
        if old is not None:
            await old.close()
        connection = Connection(self.target, self.settings, self._listed)
        await connection.open()
        self._connection = connection
        return connection

    def _check_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is loop:
            return
        if self._loop is not None and self._loop.is_running():
            raise ConfigError(f"{self.label} is in use on another event loop; make one toolset per event loop")
        # A connection of a finished loop ended with it (its task was cancelled when the loop closed).
        self._loop, self._lock, self._connection = loop, asyncio.Lock(), None

    def _listed(self, server: str, listing: list[types.Tool]) -> None:
        task_only = [t.name for t in listing if _task_only(t)]
        if task_only != self._task_only:
            self._task_only = task_only
            if task_only:
                _warn(f"{server} runs {', '.join(task_only)} only as MCP tasks of the 2025-11-25 draft, which "
                      "hookline does not call (it calls tasks on 2026-07-28 connections): left out of the tools "
                      "the model sees")
        listing = [t for t in listing if not _task_only(t)]
        names = local_names((t.name for t in listing), self.prefix)
        by_remote = {t.name: t for t in listing}
        old = self._tools or {}
        tools: dict[str, MCPTool] = {}
        for local, remote in names.items():
            known = old.get(local)
            same = known is not None and known.remote == by_remote[remote]
            tools[local] = known if same and known is not None else MCPTool(self, by_remote[remote], local)
        if self._tools is None or list(tools.items()) != list(old.items()):
            self._tools = tools
            self.version += 1

    # -- resources and prompts ---------------------------------------------------------------

    async def resources(self) -> list[MCPResource]:
        """The resources the server lists.

        Raises:
            MCPConnectionError: the server cannot be reached.
            MCPRequestError: the server refused or failed the listing.
        """
        return [resource_of(r) for r in await self._request("the resource listing", lambda c: c.resources())]

    async def read(self, uri: str) -> list[ResourcePart]:
        """Resource `uri` as parts for a message or a tool result: texts as `DocumentPart`s, bytes as images or files.

        Raises:
            MCPConnectionError: the server cannot be reached.
            MCPRequestError: the server refused (e.g. no such resource) or failed the read.
        """
        result = await self._request(f"to read {uri}", lambda c: c.read(uri))
        try:
            return parts_of(result.contents, uri.rstrip("/").rsplit("/", 1)[-1] or uri)
        except ValueError as exc:
            raise MCPRequestError(f"{self.label} gave malformed contents of {uri}: {exc}") from exc

    async def prompts(self) -> list[MCPPrompt]:
        """The prompts the server lists.

        Raises:
            MCPConnectionError: the server cannot be reached.
            MCPRequestError: the server refused or failed the listing.
        """
        return [prompt_of(p) for p in await self._request("the prompt listing", lambda c: c.prompts())]

    async def prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> list[Message]:
        """Prompt `name`, filled with `arguments`, as messages (the last one a prompt, those before its history).

        Raises:
            MCPConnectionError: the server cannot be reached.
            MCPRequestError: the server refused (no such prompt, a missing argument) or failed it.
        """
        given = dict(arguments or {})
        result = await self._request(f"the prompt {name!r}", lambda c: c.prompt(name, given))
        try:
            return [message_of(m) for m in result.messages]
        except ValueError as exc:
            raise MCPRequestError(f"{self.label} gave a malformed prompt {name!r}: {exc}") from exc

    async def _request(self, what: str, send: Callable[[Connection], Awaitable[T]]) -> T:
        """`send` on the connection, opened if need be and reopened once when the request never reached the server."""
        await self.connect()
        for attempt in range(2):
            connection = self._connection
            assert connection is not None
            try:
                return await send(connection)
            except MCPError as exc:
                if attempt or not _never_reached(exc):
                    raise MCPRequestError(_request_failure(connection.label, what, exc)) from exc
            except TimeoutError as exc:
                raise MCPRequestError(f"{connection.label} did not answer {what} within "
                                      f"{self.settings.timeout:g} s") from exc
            async with self._lock:
                await self._reopen(connection)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    # -- calls -----------------------------------------------------------------------------

    async def call(self, remote: str, arguments: dict[str, Any]) -> Value:
        """Call the server's tool `remote`; return its text (and images and files), or raise `ToolError`.

        A dropped connection is reopened once; the call is sent again only when it never
        reached the server. A question the server asks the user meanwhile pauses the run at
        this call (see `Caller`); a resumed run gives the call the user's reply.
        """
        self._check_loop()
        call = _current_call.get()
        context = _context_of(call)
        reply = context.reply if context is not None else None
        parked = self._parked.pop(call.id, None) if call is not None else None
        if parked is not None and reply is not None and not parked.task.done():
            parked.caller.capture = current_capture.get()
            parked.caller.answer(reply)
        else:
            if parked is not None:
                parked.task.cancel()
            caller = Caller(current_capture.get(), reply, pausable=context is not None)
            parked = _Parked(asyncio.ensure_future(self._send(remote, arguments, caller)), caller)
        return await self._outcome(parked, call, context)

    async def _outcome(self, parked: _Parked, call: ToolCallPart | None, context: RunContext[Any] | None) -> Value:
        """The call's value, or, when the server asks the user first, a pause of the run (the call is kept)."""
        asked = asyncio.ensure_future(parked.caller.wait_asked())
        either: set[asyncio.Future[Any]] = {parked.task, asked}
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # the run was cancelled: so is the call (the server is told), before this returns
            asked.cancel()
            parked.task.cancel()
            await asyncio.wait({parked.task})
            raise
        asked.cancel()
        if parked.task.done() or call is None or context is None:
            return await parked.task
        question, schema = question_of(asked.result())
        parked.caller.capture = None  # the run ends: the one that resumes takes the call's lines over
        self._parked[call.id] = parked
        parked.task.add_done_callback(partial(self._forget, call.id, parked))
        context.ask(question, schema)
        return "waiting for the user's answer"

    def _forget(self, call_id: str, parked: _Parked, task: asyncio.Future[Value]) -> None:
        """A parked call ended before the user answered (the server gave up): a resume sends it again."""
        if self._parked.get(call_id) is parked:
            del self._parked[call_id]
        if not task.cancelled():
            task.exception()  # retrieved: nobody awaits it now

    async def _send(self, remote: str, arguments: dict[str, Any], caller: Caller) -> Value:
        connection, reopened = await self._usable()
        while True:
            try:
                result = await connection.call(remote, arguments, caller)
            except MCPError as exc:
                if reopened or not _never_reached(exc):
                    raise ToolError(_call_failure(connection.label, remote, exc, self.settings)) from exc
                connection, reopened = await self._reopen_for_call(connection), True
                continue
            except (RuntimeError, ValidationError) as exc:
                raise ToolError(f"{connection.label} gave a malformed answer to {remote}: {exc}") from exc
            if connection.stale:  # the call changed the tool list: the next turn offers the new one
                await connection.catch_up()
            if result.is_error:
                raise ToolError(result_text(result) or f"{remote} failed on {connection.label} (no message)")
            return result_value(result)

    async def _usable(self) -> tuple[Connection, bool]:
        connection = self._connection
        if connection is not None and connection.alive:
            return connection, False
        return await self._reopen_for_call(connection), True

    async def _reopen_for_call(self, dropped: Connection | None) -> Connection:
        async with self._lock:
            current = self._connection
            if current is not None and current is not dropped and current.alive:
                return current  # another call reopened it meanwhile
            try:
                return await self._reopen(current)
            except MCPConnectionError as exc:
                raise ToolError(f"{exc} (the call was not sent)") from exc


class MCPTool(Tool):
    """A tool of an MCP server: its schema is the server's, and a call goes to the server.

    Attributes:
        toolset: The toolset it came from.
        remote: The tool as the server lists it.
    """

    __slots__ = ("remote", "toolset")

    def __init__(self, toolset: MCPToolset, remote: types.Tool, name: str) -> None:
        # Not Tool.__init__: that builds a schema from a Python signature; an MCP tool brings its own.
        self.toolset = toolset
        self.remote = remote
        self.name = name
        self.description = remote.description or remote.title or ""
        self.parameters = parameters_of(remote)
        self.function = self._invoke
        self._is_async = True
        self._thread = False
        self.inline = False
        self._spec = ToolSpec(name=name, description=self.description, parameters=self.parameters)

    def __repr__(self) -> str:
        return f"MCPTool(name={self.name!r}, server={self.toolset.label!r})"

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments as they are: the server checks them against its schema."""
        return dict(arguments)

    async def answer(self, call: ToolCallPart, values: dict[str, Any] | None = None) -> ToolResultPart:
        """Answer `call` in a run (see `Tool.answer`); the toolset learns which call it is, to pause it."""
        token = _current_call.set(call)
        try:
            return await super().answer(call, values)
        finally:
            _current_call.reset(token)

    async def call(self, arguments: dict[str, Any]) -> Any:
        """Call the tool on the server; return its text (a `ToolError` carries a failure)."""
        return await self.toolset.call(self.remote.name, dict(arguments))

    async def _invoke(self, **arguments: Any) -> Any:
        return await self.call(arguments)


Value = str | list[str | ImagePart | FilePart]
"""What a call returns: its text, with its images and files."""

_current_call: contextvars.ContextVar[ToolCallPart | None] = contextvars.ContextVar("hookline_mcp_call", default=None)


@dataclass(frozen=True)
class _Parked:
    """A call on its way: its task, and the run behind it (which may be waiting for its user's reply)."""

    task: asyncio.Future[Value]
    caller: Caller


def _context_of(call: ToolCallPart | None) -> RunContext[Any] | None:
    """The `RunContext` of the run's `call` (None outside a run)."""
    maker = current_contexts.get()
    return None if maker is None or call is None else maker(call)


def _task_only(tool: types.Tool) -> bool:
    """Whether the server runs `tool` only as an MCP task (`execution.taskSupport: "required"`, 2025-11-25)."""
    return tool.execution is not None and tool.execution.task_support == "required"


def _warn(text: str) -> None:
    """A warning: a status line of the run when one captures log records here, else a `hookline.mcp` log record."""
    record = logging.LogRecord("hookline.mcp", logging.WARNING, __file__, 0, "%s", (text,), None)
    capture = current_capture.get()
    if capture is not None:
        capture(record)
    elif logger.isEnabledFor(logging.WARNING):
        logger.handle(record)


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def _never_reached(error: MCPError) -> bool:
    """Whether the call surely did not run: never sent, or refused by a server that lost our session."""
    data = error.data
    return error.code == types.CONNECTION_CLOSED and isinstance(data, dict) and data.get(UNSENT) is True


def _request_failure(label: str, what: str, error: MCPError) -> str:
    if _never_reached(error):
        return f"{what} was not sent: {label} cannot be reached ({error.message})"
    if error.code == types.CONNECTION_CLOSED:
        return f"the connection to {label} was lost during {what}"
    return f"{label} refused {what}: {error.message} (JSON-RPC error {error.code})"


def _call_failure(label: str, tool: str, error: MCPError, settings: Settings) -> str:
    if error.code == types.REQUEST_TIMEOUT:
        limit = f"within {settings.timeout:g} s" if settings.timeout else "in time"
        return (f"{tool} on {label} did not answer {limit} and was asked to stop; it may have taken effect "
                "(raise the limit with MCPToolset(..., timeout=...))")
    if _never_reached(error):
        return f"{tool} was not sent: {label} cannot be reached ({error.message})"
    if error.code == types.CONNECTION_CLOSED:
        return f"the connection to {label} was lost while {tool} ran; it may or may not have taken effect"
    return f"{label} refused the call to {tool}: {error.message} (JSON-RPC error {error.code})"
