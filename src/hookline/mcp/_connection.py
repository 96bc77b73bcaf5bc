"""One connection to an MCP server, owned by one background task from connect to close.

The SDK's `Client` enters anyio task groups and cancel scopes that the task which entered
them must leave, in order; a toolset is used from many tasks (each run, each tool call).
Entering the client in a caller's task is what gives "exited non-innermost cancel scope"
errors at shutdown, and lets a transport failure cancel the caller. So one task owns the
client, and callers only send requests on it.

That task starts in an empty context: neither a run's tracing span nor a tool call's log
capture leaks into a connection that outlives them. When a program ends without closing
the connection (`asyncio.run` returning), the event loop cancels the task, which leaves the
client the usual way: the stdio server's stdin is closed, the process is terminated if it
does not exit within seconds, and it is reaped.

A call that never reached the server is told apart from one that may have: over stdio,
the connection is known dead (the server's stdout ended) before the call is sent; over
HTTP, the transport marks a request that could not connect, or that a restarted server
refused as of an unknown session, `hookline/unsent` (see `hookline.mcp._transports`).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from hookline.mcp._caller import Caller
from hookline.mcp._convert import log_record, progress_record, python_level
from hookline.mcp._task_client import TasksClient
from hookline.mcp._transports import UNSENT, MCPConnectionError, Settings, Target, reason, watched

__all__ = ["Connection", "ToolsListener"]

logger = logging.getLogger("hookline.mcp")

_PAGES = 100
_tasks: set[asyncio.Task[None]] = set()  # the loop keeps only weak references to tasks
_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("hookline_mcp_caller", default=None)

ToolsListener = Callable[[str, list[types.Tool]], None]
"""Receives the server's label (`MCP server 'name'`) and each new listing of its tools."""


class Connection:
    """A live MCP client session on one server, run by a background task.

    Args:
        target: Where the server is.
        settings: Timeouts and log level.
        on_tools: Receives each new listing of the server's tools.
    """

    def __init__(self, target: Target, settings: Settings, on_tools: ToolsListener) -> None:
        self.target = target
        self.settings = settings
        self.client: Client | None = None
        self.alive = False
        """True from the end of the handshake until the server's output ends or the connection closes."""
        self.server_name: str | None = None
        self._on_tools = on_tools
        self._task: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._wake = asyncio.Event()
        self._listing = asyncio.Lock()
        self._dirty = True
        self._watched = False
        self._group: anyio.abc.TaskGroup | None = None
        self._callers: dict[object, Caller] = {}
        self._min_level = python_level(settings.log_level)

    @property
    def label(self) -> str:
        """`MCP server 'name'` once the server said its name, else where it is."""
        return f"MCP server {self.server_name!r}" if self.server_name else self.target.label

    # -- opening and closing ---------------------------------------------------------------

    async def open(self) -> None:
        """Start the background task; return once the tools are listed.

        Raises:
            MCPConnectionError: the server did not start, answer, or list its tools in time.
        """
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        ready.add_done_callback(_retrieved)  # an opener that stopped waiting leaves no "never retrieved" noise
        task = loop.create_task(self._serve(ready), name=f"hookline {self.target.label}", context=contextvars.Context())
        self._task = task
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)
        try:
            async with asyncio.timeout(self.settings.connect_timeout):
                await asyncio.shield(ready)
        except TimeoutError:
            task.cancel()
            raise MCPConnectionError(
                f"{self.target.label} did not finish the handshake within {self.settings.connect_timeout:g} s; "
                "check that it speaks MCP, or allow it more time with connect_timeout=..."
            ) from None
        except asyncio.CancelledError:
            task.cancel()
            raise
        except Exception as exc:
            raise MCPConnectionError(self.target.describe(exc)) from exc

    async def close(self) -> None:
        """Leave the client (stopping a stdio server) and wait for the background task to end."""
        task = self._task
        if task is None or task.done():
            return
        self._closing.set()
        await asyncio.wait({task})

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        try:
            async with self._client() as client:
                self.client = client
                info = client.server_info
                self.server_name = info.name if info is not None and info.name else None
                await self._set_log_level(client)
                async with anyio.create_task_group() as group:
                    self._group = group
                    await group.start(self._listen, client)
                    await self._relist()
                    self.alive = True
                    group.start_soon(self._refresh_in_background)
                    ready.set_result(None)
                    await self._closing.wait()
                    group.cancel_scope.cancel()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif not self._closing.is_set():
                logger.warning("the connection to %s failed: %s", self.label, reason(exc))
        finally:
            self.alive = False
            self.client = self._group = None
            if not ready.done():
                ready.cancel()

    def _client(self) -> Client:
        transport = watched(self.target.transport(self.settings), self._server_gone)
        return Client(
            transport,
            mode="auto",
            cache=None,
            message_handler=self._on_message,
            logging_callback=self._on_log,
            elicitation_callback=self._on_elicit,
            log_level=self.settings.log_level,
            client_info=types.Implementation(name="hookline", version=_version()),
            extensions=[TasksClient()],
        )

    async def _set_log_level(self, client: Client) -> None:
        """Ask a 2025-era server that logs for `log_level` and above (`logging/setLevel`).

        On 2026-07-28 connections the level rides on each request instead (the SDK's `log_level`).
        """
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS or client.server_capabilities.logging is None:
            return
        request = types.SetLevelRequest(params=types.SetLevelRequestParams(level=self.settings.log_level))
        try:
            with anyio.fail_after(self.settings.connect_timeout):
                await client.session.send_request(request, types.EmptyResult)
        except (MCPError, TimeoutError) as exc:
            logger.info("%s did not take the log level %s: %s", self.label, self.settings.log_level, reason(exc))

    def _server_gone(self) -> None:
        if self.alive and not self._closing.is_set():
            logger.info("%s closed the connection; the next call reconnects", self.label)
        self.alive = False
        self._closing.set()

    # -- the tool list -----------------------------------------------------------------------

    async def refresh(self) -> None:
        """List the tools again if the server said they changed, or if nothing tells us they did not."""
        if not self._watched:
            self._dirty = True
            if self._group is not None and self.client is not None:
                self._group.start_soon(self._listen, self.client)
        await self._relist()

    @property
    def stale(self) -> bool:
        """Whether the server said its tools changed and the new list is not in yet."""
        return self._dirty or self._listing.locked()

    async def catch_up(self) -> None:
        """List the tools now if they changed (or wait for the listing under way); a failure is logged."""
        try:
            await self._relist()
        except Exception as exc:
            logger.warning("cannot list the tools of %s: %s", self.label, reason(exc))

    def _changed(self) -> None:
        self._dirty = True
        self._wake.set()

    async def _relist(self) -> None:
        async with self._listing:
            client = self.client
            if not self._dirty or client is None:
                return
            self._dirty = False
            try:
                with anyio.fail_after(self.settings.timeout):
                    tools = await _list_tools(client)
            except BaseException:
                self._dirty = True
                raise
        self._on_tools(self.label, tools)

    async def _refresh_in_background(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self.catch_up()

    async def _listen(self, client: Client, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
                      ) -> None:
        """Follow `tools/list_changed`: on 2026-07-28 connections through `subscriptions/listen`.

        Older protocol versions send the notification unasked (see `_on_message`).
        """
        tools = client.server_capabilities.tools
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS or tools is None or not tools.list_changed:
            self._watched = True
            task_status.started()
            return
        started = False
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                self._watched, started = True, True
                task_status.started()
                async for _event in subscription:
                    self._changed()
        except Exception as exc:
            logger.info("lost the tool-change subscription of %s (%s); listing the tools at each run", self.label,
                        reason(exc))
        self._watched = False
        self._changed()
        if not started:
            task_status.started()

    # -- resources and prompts ---------------------------------------------------------------

    async def resources(self) -> list[types.Resource]:
        """Every resource the server lists (page by page)."""
        client = self._client_or_unsent()
        with anyio.fail_after(self.settings.timeout):
            return await _pages(lambda cursor: client.list_resources(cursor=cursor), "resources")

    async def read(self, uri: str) -> types.ReadResourceResult:
        """Read resource `uri`."""
        client = self._client_or_unsent()
        with anyio.fail_after(self.settings.timeout):
            return await client.read_resource(uri)

    async def prompts(self) -> list[types.Prompt]:
        """Every prompt the server lists (page by page)."""
        client = self._client_or_unsent()
        with anyio.fail_after(self.settings.timeout):
            return await _pages(lambda cursor: client.list_prompts(cursor=cursor), "prompts")

    async def prompt(self, name: str, arguments: dict[str, str]) -> types.GetPromptResult:
        """Get prompt `name` with `arguments`."""
        client = self._client_or_unsent()
        with anyio.fail_after(self.settings.timeout):
            return await client.get_prompt(name, arguments)

    def _client_or_unsent(self) -> Client:
        if self.client is None:
            raise MCPError(types.CONNECTION_CLOSED, "not connected", {UNSENT: True})
        return self.client

    # -- calls and notifications -----------------------------------------------------------

    async def call(self, name: str, arguments: dict[str, Any], caller: Caller) -> types.CallToolResult:
        """Call tool `name`; progress and log notifications meanwhile go to `caller`, and its questions.

        Raises:
            MCPError: the server answered with an error, the call timed out, or the connection ended.
        """
        client = self.client
        if client is None:
            raise MCPError(types.CONNECTION_CLOSED, "not connected", {UNSENT: True})
        key = object()
        self._callers[key] = caller
        token = _caller.set(caller)
        try:
            return await client.call_tool(name, arguments, read_timeout_seconds=self.settings.timeout,
                                          progress_callback=self._progress(caller))
        finally:
            _caller.reset(token)
            self._callers.pop(key, None)

    def _progress(self, caller: Caller) -> ProgressFnT:
        async def report(progress: float, total: float | None, message: str | None) -> None:
            if caller.capture is not None:
                caller.capture(progress_record(self.server_name or "server", progress, total, message))

        return report

    def _callers_of_message(self) -> list[Caller]:
        """The calls a server message is about: its own call when it came on that call's stream, else every call.

        Over HTTP, a message sent on a call's own response stream is handled in that call's
        context. Over stdio, MCP does not say which call a message belongs to.
        """
        own = _caller.get()
        return [own] if own is not None and own in self._callers.values() else list(self._callers.values())

    async def _on_elicit(self, context: Any, params: types.ElicitRequestParams
                         ) -> types.ElicitResult | types.ErrorData:
        """A question of the server to the user: to the call it belongs to (see `Caller`)."""
        callers = self._callers_of_message()
        if len(callers) != 1:
            logger.warning("%s asked the user something while %d calls ran, so hookline cannot tell which call "
                           "asks; the question is cancelled", self.label, len(callers))
            return types.ElicitResult(action="cancel")
        return await callers[0].ask(params)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._changed()
        elif isinstance(message, Exception):
            logger.debug("%s sent something unreadable: %s", self.label, message)

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """A server log line: a status line of its call (of every call, where that is unknown), else a log record."""
        record = log_record(self.server_name or "server", params)
        if record.levelno < self._min_level:
            return
        captures = [c.capture for c in self._callers_of_message() if c.capture is not None]
        for capture in captures:
            capture(record)
        if not captures:
            target = logging.getLogger(record.name)
            if target.isEnabledFor(record.levelno):
                target.handle(record)


def _retrieved(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()


async def _list_tools(client: Client) -> list[types.Tool]:
    if client.server_capabilities.tools is None:  # a server of resources or prompts only
        return []
    return await _pages(lambda cursor: client.session.list_tools(params=types.PaginatedRequestParams(cursor=cursor)),
                        "tools")


async def _pages(fetch: Callable[[str | None], Awaitable[Any]], field: str) -> list[Any]:
    """The items (`field`) of every page a listing gives, up to `_PAGES` pages."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(_PAGES):
        page = await fetch(cursor)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if cursor is None:
            break
    return items


def _version() -> str:
    from hookline import __version__

    return __version__
