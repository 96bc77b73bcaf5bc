"""Where an MCP server is (`StdioTarget`, `HttpTarget`), and the transports that reach it.

The transports add two things to the SDK's. The read side of every transport tells the
connection when the server's output ends (a stdio server exited), so the next call
reconnects before it is sent. And over HTTP, a request's transport failure becomes a
JSON-RPC error for that request alone, marked `hookline/unsent` when the request surely
never reached the server: the SDK would otherwise fail its whole transport on it, and with
it every call in flight.
"""

from __future__ import annotations

import contextvars
import json
import re
import shlex
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import mcp_types as types
from mcp.client._transport import TransportStreams
from mcp.client.auth import OAuthFlowError
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from hookline._redact import redact
from hookline.errors import HooklineError
from hookline.mcp.oauth import NotAuthorized, OAuth

__all__ = ["UNSENT", "HttpTarget", "MCPConnectionError", "MCPRequestError", "Settings", "StdioTarget", "Target",
           "reason", "watched"]

UNSENT = "hookline/unsent"
"""Marks a JSON-RPC error made here for a request that never reached the server."""


class MCPConnectionError(HooklineError, ConnectionError):
    """An MCP server could not be started, reached, or listed; the message says what to check."""


class MCPRequestError(HooklineError):
    """An MCP server refused a request made outside a tool call (read a resource, get a prompt), or failed it.

    The message names the server and what was asked, with the server's own message and JSON-RPC code.
    """


@dataclass(frozen=True)
class Settings:
    """How a toolset talks to its server."""

    timeout: float | None = 300.0
    """Seconds a call (or a listing) may take; None: no limit."""
    connect_timeout: float = 60.0
    """Seconds to start the server and finish the handshake."""
    log_level: types.LoggingLevel = "info"
    """The lowest MCP log level that becomes a status line (or a log record)."""


class Target(ABC):
    """Where an MCP server is, and how to open a transport to it (its repr shows no credentials)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.label!r})"

    @property
    @abstractmethod
    def label(self) -> str:
        """The server for messages, without credentials."""

    @abstractmethod
    def transport(self, settings: Settings) -> AbstractAsyncContextManager[TransportStreams]:
        """A fresh transport (one per connection)."""

    def describe(self, error: BaseException) -> str:
        """Why connecting failed, and what to check."""
        return f"cannot connect to {self.label}: {reason(error)}"


@dataclass(frozen=True, repr=False)
class StdioTarget(Target):
    """A server run as a subprocess, spoken to over its stdin and stdout."""

    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    cwd: str | None = None

    @property
    def label(self) -> str:
        """`MCP server `npx -y server-files``, shortened, with credential-like values hidden."""
        line = redact(shlex.join([self.command, *_masked(self.args)]))
        return f"MCP server `{line if len(line) <= 80 else line[:79] + '…'}`"

    def transport(self, settings: Settings) -> AbstractAsyncContextManager[TransportStreams]:
        """Start the subprocess (the SDK puts it in its own process group and reaps it on exit)."""
        params = StdioServerParameters(command=self.command, args=list(self.args), env=self.env, cwd=self.cwd)
        return stdio_client(params)

    def describe(self, error: BaseException) -> str:
        """Why the server did not start or answer."""
        leaf = _leaf(error)
        if isinstance(leaf, OSError):
            return f"cannot start {self.label}: {leaf}; check the command, its arguments and the working directory"
        if isinstance(leaf, MCPError) and leaf.code == types.CONNECTION_CLOSED:
            return f"{self.label} exited or closed its stdout before the handshake finished; see its stderr"
        return f"cannot connect to {self.label}: {reason(error)}"


@dataclass(frozen=True, repr=False)
class HttpTarget(Target):
    """A server spoken to over streamable HTTP."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)
    auth: OAuth | None = None

    @property
    def label(self) -> str:
        """`MCP server at http://host:port/mcp` (no user, password or query)."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        where = f"[{host}]" if ":" in host else host
        port = f":{parts.port}" if parts.port else ""
        return f"MCP server at {parts.scheme}://{where}{port}{parts.path}"

    def transport(self, settings: Settings) -> AbstractAsyncContextManager[TransportStreams]:
        """A streamable HTTP transport whose failed connects become `hookline/unsent` errors."""
        return _http_transport(self.url, self.headers, self.auth)


_SECRET_FLAG = re.compile(r"(?i)^-{1,2}[\w-]*(token|key|secret|password|passwd|auth|credential)[\w-]*$")


def _masked(args: tuple[str, ...]) -> list[str]:
    """`args` with the values of secret-looking flags (`--api-token X`, `--password=X`) as `***`."""
    shown: list[str] = []
    for arg in args:
        flag, equals, _value = arg.partition("=")
        if equals and _SECRET_FLAG.match(flag):
            shown.append(f"{flag}=***")
        elif shown and _SECRET_FLAG.match(shown[-1]) and not arg.startswith("-"):
            shown.append("***")
        else:
            shown.append(arg)
    return shown


@asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str], auth: OAuth | None) -> AsyncIterator[TransportStreams]:
    # No read timeout: a call's own timeout bounds it, and a subscription may stay quiet for long.
    timeout = httpx2.Timeout(30.0, read=None)
    client = _Client(headers=headers, timeout=timeout, transport=_Contained(),
                     auth=auth.provider(url) if auth is not None else None)
    async with client, streamable_http_client(url, http_client=client) as streams:
        yield streams


class _Client(httpx2.AsyncClient):
    """Answers a POST the server still refuses after authorization (or the OAuth flow failed on) with an error.

    The refusal, or the flow's failure, becomes a JSON-RPC error for that request alone,
    marked `hookline/unsent`: it was not run, and the SDK would otherwise end the whole
    transport on the flow's exception. A 401 (or a 403 with `WWW-Authenticate`) is handled
    here rather than in `_Contained` so that the OAuth flow, which runs between the two,
    sees it first.
    """

    @property
    def oauth(self) -> bool:
        """Whether an OAuth flow runs on this client's requests."""
        return self.auth is not None

    async def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        try:
            response = await super().send(request, **kwargs)
        except (OAuthFlowError, NotAuthorized, ValidationError, httpx2.TransportError) as exc:
            # A transport error here is one of the flow's own requests (discovery): the MCP
            # endpoint's are answered by `_Contained`.
            if request.method != "POST":
                raise
            return _error_response(request, _authorization_failed(exc), unsent=True)
        if request.method == "POST" and _wants_authorization(response):
            await response.aclose()
            return _error_response(request, _authorization_wanted(response, oauth=self.oauth), unsent=True)
        return response


def _authorization_failed(error: Exception) -> str:
    if isinstance(error, NotAuthorized):
        return f"{error}; the server needs an authorized user (NotAuthorized)"
    what = type(error).__name__
    if isinstance(error, ValidationError):
        said = "the authorization server's metadata is malformed"
    elif isinstance(error, httpx2.TransportError):
        said = f"an OAuth discovery request failed: {error or what}"
    else:
        said = str(error)
    return f"OAuth authorization failed ({what}): {redact(said[:300])}"


class _Contained(httpx2.AsyncBaseTransport):
    """Turns a POST's transport failure into a JSON-RPC error for that request alone.

    The SDK lets such a failure end its whole transport, failing every call in flight and
    every call after. Here a POST that could not connect is answered with an error marked
    `hookline/unsent` (it never reached the server, so it may be sent again), and one that
    failed later with a plain "connection lost" error (it may have run). A 404 for a
    request that carries a session id is the spec's "this session is gone" (the server
    restarted), and a 400 the TypeScript SDK's: the request was not run, so it is marked
    `hookline/unsent` too (as is a 401, by `_Client`, once the OAuth flow has seen it).
    """

    def __init__(self) -> None:
        self._inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            response = await self._send(request)
        except (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout) as exc:
            if request.method != "POST":
                raise
            return _error_response(request, str(exc) or type(exc).__name__, unsent=True)
        except httpx2.TransportError as exc:
            if request.method != "POST":
                raise
            return _error_response(request, f"connection lost: {exc or type(exc).__name__}", unsent=False)
        if response.status_code in (400, 404) and request.method == "POST" and "mcp-session-id" in request.headers:
            # The server forgot the session (it restarted): 404 is the spec's signal, 400 the TypeScript SDK's.
            # Either way the request was not run.
            said = await _said(response)
            return _error_response(request, f"the server no longer knows this session (HTTP {response.status_code}"
                                   f"{': ' + said if said else ''})", unsent=True)
        return response

    async def _send(self, request: httpx2.Request) -> httpx2.Response:
        """Send `request`; a GET whose kept-alive connection the server had closed is sent once more.

        A server may close a kept-alive connection right after an error answer (the
        conformance kit's did after a 401), and the next request on it, an OAuth discovery
        GET, then fails to read; a GET is safe to send again.
        """
        try:
            return await self._inner.handle_async_request(request)
        except (httpx2.ReadError, httpx2.RemoteProtocolError):
            if request.method != "GET":
                raise
            return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _wants_authorization(response: httpx2.Response) -> bool:
    """A 401, or a 403 that names what it wants (`WWW-Authenticate`, e.g. `insufficient_scope`)."""
    return response.status_code == 401 or (response.status_code == 403 and "www-authenticate" in response.headers)


def _authorization_wanted(response: httpx2.Response, *, oauth: bool) -> str:
    status = response.status_code
    what = "wants authorization" if status == 401 else "refuses these credentials"
    scheme, _, parameters = response.headers.get("www-authenticate", "").partition(" ")
    # "Bearer;": a challenge is no credential, and "Bearer <word>" would read as one to `redact`
    asked = f" (WWW-Authenticate: {scheme}; {parameters[:300]})" if scheme else ""
    told = f"the server answered HTTP {status} {response.reason_phrase}: it {what}{asked}"
    if oauth:
        return f"{told}, after OAuth authorization; check the scopes asked for (OAuth(scope=...)) and the user's rights"
    return (f"{told}; give the credentials it asks for, e.g. MCPToolset.http(url, auth=OAuth(...)) or "
            "MCPToolset.http(url, headers={'Authorization': 'Bearer ...'})")


async def _said(response: httpx2.Response) -> str:
    """The message of a JSON-RPC error in `response`'s body (read up to 4 KiB), else ""; the response is closed."""
    body = b""
    try:
        async for chunk in response.aiter_raw():
            body += chunk
            if len(body) > _SAID_LIMIT:
                return ""
    except httpx2.HTTPError:
        return ""
    finally:
        await response.aclose()
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return ""
    message = error.get("message") if isinstance(error, dict) else None
    return redact(message[:200]) if isinstance(message, str) else ""


_SAID_LIMIT = 4096


def _error_response(request: httpx2.Request, message: str, *, unsent: bool) -> httpx2.Response:
    try:
        sent = json.loads(request.content)
    except ValueError:
        sent = None
    error: dict[str, Any] = {"code": types.CONNECTION_CLOSED, "message": message}
    if unsent:
        error["data"] = {UNSENT: True}
    body = {"jsonrpc": "2.0", "id": sent.get("id") if isinstance(sent, dict) else None, "error": error}
    return httpx2.Response(503, json=body, request=request)


class _WatchedStream:
    """The transport's read side, telling the connection when the server's output ends."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender's context of the last message (HTTP transports keep one)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


@asynccontextmanager
async def watched(transport: AbstractAsyncContextManager[TransportStreams],
                   on_end: Callable[[], None]) -> AsyncIterator[TransportStreams]:
    async with transport as (read_stream, write_stream):
        yield _WatchedStream(read_stream, on_end), write_stream



def _leaf(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def reason(error: BaseException) -> str:
    """What went wrong, in one line without credentials (the first error of a group)."""
    leaf = _leaf(error)
    return redact(str(leaf) or type(leaf).__name__)
