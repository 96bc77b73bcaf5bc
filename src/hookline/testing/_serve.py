"""A scripted fake provider, served by uvicorn on 127.0.0.1 in a background thread.

The fakes listen on a real socket (as httpx's own tests do with `serve_in_thread`)
rather than behind `httpx.ASGITransport`, which collects a whole body before
returning and so cannot show streaming, timeouts or a client hanging up.
`ScriptedServer` holds what every provider's fake shares: the script, the requests it
received, delays, errors and raw bodies; each provider's subclass supplies its route and
wire format.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import TracebackType
from typing import ClassVar, Self

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from hookline.messages import ReasoningPart, ToolCallPart
from hookline.types import JSONObject

__all__ = ["Reply", "ScriptedServer", "ToolCallSpec", "pieces", "serve_in_thread"]

ToolCallSpec = ToolCallPart | tuple[str, JSONObject | str]
"""A tool call to script: a `ToolCallPart`, or `(name, arguments)` to get a made-up id."""

_POLL = 0.02  # seconds between checks that a delayed request's client is still there


@contextmanager
def serve_in_thread(app: ASGIApp, *, host: str = "127.0.0.1", startup_timeout: float = 10.0) -> Iterator[str]:
    """Serve `app` with uvicorn on a free port of `host` in a daemon thread; yield its root URL.

    Args:
        app: The ASGI application.
        host: The address to listen on (loopback by default).
        startup_timeout: Seconds to wait for the server to start.

    Raises:
        RuntimeError: The server did not start in time.

    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="asyncio",
        http="h11",
        ws="none",
        lifespan="off",
        log_config=None,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="hookline-fake-server", daemon=True)
    thread.start()
    try:
        _wait_until_started(server, thread, startup_timeout)
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join()
        sock.close()


def _wait_until_started(server: uvicorn.Server, thread: threading.Thread, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the fake server did not start")
        time.sleep(0.001)


@dataclass(frozen=True, slots=True)
class Reply:
    """A model answer to script, rendered as JSON or as a stream, whichever the request asks for."""

    text: str = ""
    """The answer's text."""
    tool_calls: list[ToolCallPart] = field(default_factory=list)
    """The tool calls, ids included."""
    input_tokens: int = 10
    """Prompt tokens to report."""
    output_tokens: int = 5
    """Completion tokens to report."""
    reasoning: list[ReasoningPart] = field(default_factory=list)
    """Reasoning sent before the answer, in the wire format's place for it (Anthropic's thinking blocks, the
    Responses API's reasoning items, Chat Completions' `reasoning_content`); a part's `data` is sent as
    redacted or encrypted content (Chat Completions has no place for it)."""


@dataclass(frozen=True, slots=True)
class _Step:
    respond: Callable[[JSONObject], Response]
    description: str
    delay: float = 0.0


class ScriptedServer:
    """The base of the fake provider servers: a script of responses, played one per request.

    Use a subclass (`FakeOpenAIServer`, `FakeAnthropicServer`) as a context manager.
    Each request takes the next scripted step; a request with nothing scripted gets a 500
    whose body says so. A request the provider would refuse (content parts of the wrong
    shape, an image where the API takes none) gets the provider's 400 naming the problem,
    and takes no step. `requests` keeps every request body received, in order.
    """

    path: ClassVar[str] = "/"
    """The route the fake answers (POST)."""
    id_prefix: ClassVar[str] = "call_"
    """The prefix of made-up tool call ids."""

    def __init__(self) -> None:
        self.requests: list[JSONObject] = []
        """Every request body received, in order (a body that is not JSON is kept under `_raw`)."""
        self.request_headers: list[dict[str, str]] = []
        """The headers of every request received, in order."""
        self.unscripted: list[JSONObject] = []
        """The bodies of requests that found nothing scripted."""
        self._script: deque[_Step] = deque()
        self._lock = threading.Lock()
        self._stack = ExitStack()
        self._url: str | None = None
        self._ids = 0
        self.app = Starlette(routes=[Route(self.path, self._handle, methods=["POST"])])

    def __enter__(self) -> Self:
        logging.getLogger("uvicorn.error").addFilter(_QUIET)  # adding it twice keeps one
        self._url = self._stack.enter_context(serve_in_thread(self.app))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stack.close()
        self._url = None

    @property
    def url(self) -> str:
        """The server's root URL, `http://127.0.0.1:<port>`."""
        if self._url is None:
            raise RuntimeError(f"{type(self).__name__} is not running: use it in a `with` block")
        return self._url

    @property
    def base_url(self) -> str:
        """The base URL to give the provider's SDK or hookline model."""
        return self.url

    # --- scripting ---------------------------------------------------------------------

    def enqueue(self, body: JSONObject, *, status: int = 200, delay: float = 0.0) -> None:
        """Answer the next request with `body` as JSON, after `delay` seconds."""
        self._push(lambda _: JSONResponse(body, status_code=status), f"json {status}", delay)

    def enqueue_stream(
        self, chunks: Sequence[JSONObject | str], *, delay: float = 0.0, chunk_delay: float = 0.0
    ) -> None:
        """Answer the next request with server-sent events, one per chunk.

        Args:
            chunks: The events' JSON payloads; a `str` is sent verbatim as a whole frame
                (e.g. to send malformed JSON).
            delay: Seconds to wait before answering.
            chunk_delay: Seconds to wait before each chunk.

        """
        frames = [chunk if isinstance(chunk, str) else self._frame(chunk) for chunk in chunks] + self._stream_end()
        self._push(lambda _: _event_stream(frames, chunk_delay), f"stream of {len(chunks)} chunks", delay)

    def enqueue_error(
        self,
        status: int,
        body: JSONObject | None = None,
        *,
        message: str | None = None,
        retry_after: float | None = None,
        delay: float = 0.0,
    ) -> None:
        """Answer the next request with an HTTP error in the provider's format.

        Args:
            status: The HTTP status, e.g. 429.
            body: The whole error body; default the provider's format holding `message`.
            message: The error message of the default body.
            retry_after: Sent as the `Retry-After` header (seconds), if given.
            delay: Seconds to wait before answering.

        """
        content = body if body is not None else self._error_body(status, message or f"fake error {status}")
        headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else None
        self._push(lambda _: JSONResponse(content, status_code=status, headers=headers), f"error {status}", delay)

    def enqueue_raw(
        self, content: str, *, status: int = 200, media_type: str = "application/json", delay: float = 0.0
    ) -> None:
        """Answer the next request with `content` exactly as given."""
        self._push(lambda _: Response(content, status_code=status, media_type=media_type), "raw body", delay)

    def enqueue_malformed_json(self, *, delay: float = 0.0) -> None:
        """Answer the next request with a 200 whose JSON body is cut short."""
        self.enqueue_raw('{"id": "broken", "choices": [', delay=delay)

    def enqueue_delay(self, seconds: float, text: str = "(late)") -> None:
        """Hold the next request for `seconds` (e.g. past a client timeout), then answer `text`."""
        self.enqueue_text(text, delay=seconds)

    def enqueue_cut_stream(
        self, reply: Reply | str = "", *, keep: int | None = None, abrupt: bool = True, delay: float = 0.0
    ) -> None:
        """Answer the next request with a stream that stops before the answer ends, as a dropped connection does.

        The reply's events are sent up to the ones that end an answer (OpenAI: the chunk
        with `finish_reason`, usage and `data: [DONE]`; Anthropic: `message_delta` and
        `message_stop`), or only the first `keep` events.

        Args:
            reply: The answer whose stream is cut (a `str`: a text answer).
            keep: How many events to send; default all but the ending ones.
            abrupt: True: the connection closes mid-body, so the client sees a broken
                transfer; False: the HTTP body ends cleanly, only without the ending events
                (as a proxy that gives up does).
            delay: Seconds to wait before answering.

        """
        answer = _as_reply(reply)

        def respond(request: JSONObject) -> Response:
            chunks = self._reply_chunks(answer, request)
            ending = next((i for i, chunk in enumerate(chunks) if self._ends_answer(chunk)), len(chunks))
            frames = [self._frame(chunk) for chunk in chunks[: ending if keep is None else keep]]
            return _RawResponse([_sse(frame) for frame in frames], "text/event-stream", complete=not abrupt)

        self._push(respond, f"stream of {answer.text!r} cut short", delay)

    def enqueue_garbled_stream(
        self, reply: Reply | str = "", *, at: int = 1, frame: str | None = None, delay: float = 0.0
    ) -> None:
        """Answer the next request with the reply's stream, one event of it replaced by garbage.

        Args:
            reply: The answer to stream (a `str`: a text answer).
            at: The index of the event replaced.
            frame: The garbage, sent verbatim as a whole event; default a `data:` line
                holding broken JSON (under an event name the provider's SDK reads).
            delay: Seconds to wait before answering.

        """
        answer = _as_reply(reply)
        garbage = frame if frame is not None else self._garbage_frame

        def respond(request: JSONObject) -> Response:
            frames = [self._frame(chunk) for chunk in self._reply_chunks(answer, request)] + self._stream_end()
            frames[at] = garbage
            return _event_stream(frames, 0.0)

        self._push(respond, f"stream of {answer.text!r} garbled at event {at}", delay)

    def enqueue_stalled_stream(
        self, reply: Reply | str = "", *, after: int = 1, seconds: float = 30.0, delay: float = 0.0
    ) -> None:
        """Answer the next request with the reply's stream, stalling mid-way (e.g. past a client's timeout).

        The server sends the first `after` events, sends nothing for `seconds` (less if the
        client hangs up), then sends the rest.

        Args:
            reply: The answer to stream (a `str`: a text answer).
            after: How many events come before the stall.
            seconds: How long the stream stalls.
            delay: Seconds to wait before answering.

        """
        answer = _as_reply(reply)

        def respond(request: JSONObject) -> Response:
            frames = [self._frame(chunk) for chunk in self._reply_chunks(answer, request)] + self._stream_end()
            chunks = [_sse(frame) for frame in frames]
            return _RawResponse(chunks, "text/event-stream", stall=(after, seconds))

        self._push(respond, f"stream of {answer.text!r} stalled for {seconds:g} s", delay)

    def enqueue_cut_body(self, reply: Reply | str = "", *, abrupt: bool = True, delay: float = 0.0) -> None:
        """Answer the next request with the reply as JSON cut in half (never as a stream).

        Args:
            reply: The answer (a `str`: a text answer).
            abrupt: True: the connection closes mid-body (fewer bytes than its
                `Content-Length`); False: a complete 200 response whose JSON stops half-way.
            delay: Seconds to wait before answering.

        """
        answer = _as_reply(reply)

        def respond(request: JSONObject) -> Response:
            body = json.dumps(self._reply_json(answer, request)).encode()
            half = body[: len(body) // 2]
            if abrupt:
                return _RawResponse([half], "application/json", complete=False, length=len(body))
            return Response(half, media_type="application/json")

        self._push(respond, f"JSON of {answer.text!r} cut short", delay)

    def enqueue_text(self, text: str, *, input_tokens: int = 10, output_tokens: int = 5, delay: float = 0.0) -> None:
        """Answer the next request with `text`, as JSON or as a stream, as the request asks."""
        self.enqueue_reply(Reply(text=text, input_tokens=input_tokens, output_tokens=output_tokens), delay=delay)

    def enqueue_tool_calls(
        self,
        calls: Sequence[ToolCallSpec],
        *,
        text: str = "",
        input_tokens: int = 10,
        output_tokens: int = 5,
        delay: float = 0.0,
    ) -> None:
        """Answer the next request with tool calls (and optional text), as JSON or as a stream.

        Args:
            calls: `ToolCallPart`s, or `(name, arguments)` pairs that get made-up ids;
                arguments given as a `str` are sent as they are (even malformed).
            text: Text sent before the calls.
            input_tokens: Prompt tokens to report.
            output_tokens: Completion tokens to report.
            delay: Seconds to wait before answering.

        """
        parts = [call if isinstance(call, ToolCallPart) else self._part(*call) for call in calls]
        reply = Reply(text=text, tool_calls=parts, input_tokens=input_tokens, output_tokens=output_tokens)
        self.enqueue_reply(reply, delay=delay)

    def enqueue_reply(self, reply: Reply, *, delay: float = 0.0) -> None:
        """Answer the next request with `reply`, as JSON or as a stream, as the request asks."""

        def respond(request: JSONObject) -> Response:
            if request.get("stream"):
                frames = [self._frame(chunk) for chunk in self._reply_chunks(reply, request)] + self._stream_end()
                return _event_stream(frames, 0.0)
            return JSONResponse(self._reply_json(reply, request))

        self._push(respond, f"reply {reply.text!r} with {len(reply.tool_calls)} tool calls", delay)

    def assert_complete(self) -> None:
        """Fail if a scripted response was never requested, or a request found nothing scripted.

        Raises:
            AssertionError: Naming what was left over or unexpected.

        """
        with self._lock:
            left = [step.description for step in self._script]
            unexpected = len(self.unscripted)
        problems = [f"{len(left)} scripted response(s) never requested: {left}"] if left else []
        if unexpected:
            problems.append(f"{unexpected} request(s) arrived with nothing scripted")
        if problems:
            raise AssertionError(f"{type(self).__name__}: " + "; ".join(problems))

    # --- what each provider defines ----------------------------------------------------

    def _error_body(self, status: int, message: str) -> JSONObject:
        return {"error": {"message": message}}

    def _refusal(self, body: JSONObject) -> str | None:
        """Why the provider would refuse `body` (a 400), or None to answer it."""
        return None

    def _frame(self, chunk: JSONObject) -> str:
        return f"data: {json.dumps(chunk)}"

    def _stream_end(self) -> list[str]:
        return []

    _garbage_frame: ClassVar[str] = "data: {not json"
    """What `enqueue_garbled_stream` sends by default: an event the provider's SDK parses."""

    def _ends_answer(self, chunk: JSONObject) -> bool:
        """Whether `chunk` is the first of the events that end an answer (`enqueue_cut_stream` stops before it)."""
        raise NotImplementedError

    def _reply_json(self, reply: Reply, request: JSONObject) -> JSONObject:
        raise NotImplementedError

    def _reply_chunks(self, reply: Reply, request: JSONObject) -> list[JSONObject]:
        raise NotImplementedError

    # --- serving -----------------------------------------------------------------------

    def _part(self, name: str, arguments: JSONObject | str) -> ToolCallPart:
        self._ids += 1
        return ToolCallPart(id=f"{self.id_prefix}fake{self._ids}", name=name, arguments=arguments)

    def _push(self, respond: Callable[[JSONObject], Response], description: str, delay: float) -> None:
        with self._lock:
            self._script.append(_Step(respond, description, delay))

    async def _handle(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        problem = self._refusal(body)
        with self._lock:
            self.requests.append(body)
            self.request_headers.append(dict(request.headers))
            if problem is not None:
                return JSONResponse(self._error_body(400, problem), status_code=400)
            step = self._script.popleft() if self._script else None
            if step is None:
                self.unscripted.append(body)
        if step is None:
            message = f"{type(self).__name__}: nothing scripted for request #{len(self.requests)}; enqueue a response"
            return JSONResponse(self._error_body(500, message), status_code=500)
        if step.delay and await _client_left(request, step.delay):
            return Response(status_code=499)
        return step.respond(body)


async def _client_left(request: Request, seconds: float) -> bool:
    """Wait `seconds`, or less if the client hangs up first; say whether it did."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await request.is_disconnected():
            return True
        await anyio.sleep(min(_POLL, max(0.0, deadline - time.monotonic())))
    return False


def _event_stream(frames: list[str], chunk_delay: float) -> StreamingResponse:
    async def body() -> AsyncIterator[str]:
        for frame in frames:
            if chunk_delay:
                await anyio.sleep(chunk_delay)
            yield frame + "\n\n"

    return StreamingResponse(body(), media_type="text/event-stream")


def _sse(frame: str) -> bytes:
    return (frame + "\n\n").encode()


def _as_reply(reply: Reply | str) -> Reply:
    return Reply(text=reply) if isinstance(reply, str) else reply


_dropping: ContextVar[bool] = ContextVar("hookline_fake_dropping", default=False)


class _QuietDrops(logging.Filter):
    """Drops uvicorn's complaint about a response left unfinished, when a fake left it so on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (_dropping.get() and record.getMessage() == _UNFINISHED)


_UNFINISHED = "ASGI callable returned without completing response."
_QUIET = _QuietDrops()


class _RawResponse(Response):
    """A response sent piece by piece, that may stall mid-way or never finish (the connection then drops).

    Returning from an ASGI app without the last `http.response.body` message makes uvicorn
    close the connection: the client sees a body cut short, as when a network fails.
    """

    def __init__(
        self,
        chunks: list[bytes],
        media_type: str,
        *,
        complete: bool = True,
        length: int | None = None,
        stall: tuple[int, float] | None = None,
    ) -> None:
        super().__init__(media_type=media_type)
        self.chunks = chunks
        self.complete = complete
        self.stall = stall
        if length is not None:
            self.headers["content-length"] = str(length)
        else:
            del self.headers["content-length"]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        for index, chunk in enumerate(self.chunks):
            if self.stall is not None and index == self.stall[0] and await _hung_up(receive, self.stall[1]):
                return
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if self.complete:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        else:
            _dropping.set(True)


async def _hung_up(receive: Receive, seconds: float) -> bool:
    """Wait `seconds`, or less if the client hangs up first; say whether it did."""
    with anyio.move_on_after(seconds):
        while (await receive())["type"] != "http.disconnect":
            pass
        return True
    return False


def pieces(text: str, size: int = 4) -> list[str]:
    """Split `text` into fragments of `size` characters, as a streaming server would."""
    return [text[i : i + size] for i in range(0, len(text), size)]
