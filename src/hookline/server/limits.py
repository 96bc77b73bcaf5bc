"""The request body limit: a body larger than `max_bytes` answers 413 before any route runs.

The routes that take images and files (a run's attachments, a prepared event's parts) have
a limit of their own, `media_max_bytes`: base64 makes bytes a third larger, and a photo
is megabytes where any other body is kilobytes. The 413 names the limit and its setting.

A body over the limit is read and dropped before the 413 is sent: the server closes the
connection after it, and closing a socket that holds unread bytes resets it, so a client
still sending would see the reset and never read the 413. A declared `Content-Length` over
the limit is refused without a byte handed on; a body sent without one (chunked) is read up
to the limit. Either way at most `drain` bytes past the limit are read and dropped: a
larger body may still meet the reset. A client that sends `Expect: 100-continue` is
answered at once, its body unread: it waits for that answer before it sends one. A body
within the limit is handed on unchanged.
"""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hookline.server.errors import error_response
from hookline.server.schemas import ErrorBody

__all__ = ["MEDIA_ROUTE", "BodyLimitMiddleware"]

MEDIA_ROUTE = re.compile(r"^(/v1/sessions/[^/]+/(runs|prepare)|/v1/ag-ui|/v1/ai-sdk/chat)$")
"""The paths whose POST bodies may carry images and files, or a whole conversation (`media_max_bytes`)."""


class BodyLimitMiddleware:
    """Refuse request bodies over `max_bytes` with 413.

    Args:
        app: The application to guard.
        max_bytes: The largest body accepted, in bytes.
        drain: How many bytes past the limit are read and dropped before the 413.
        media_max_bytes: The largest body of a POST to a `MEDIA_ROUTE`; None: `max_bytes`.

    """

    def __init__(
        self, app: ASGIApp, max_bytes: int, drain: int = 4_000_000, *, media_max_bytes: int | None = None
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.drain = drain
        self.media_max_bytes = media_max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read the body of an HTTP request up to the limit, then call the application."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit, setting = self._limit_of(scope)
        declared = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        if declared is not None and not declared.strip().isdigit():
            await self._refuse(scope, receive, send, 400, "the Content-Length header is not a number")
            return
        if declared is not None and int(declared) > limit:
            if not _waits_to_send(scope):
                await _drain(receive, limit + self.drain)
            await self._refuse(scope, receive, send, 413, _too_large(limit, setting))
            return
        body, messages = 0, []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += len(message.get("body", b""))
            if body > limit:
                if message.get("more_body", False):
                    await _drain(receive, self.drain)
                await self._refuse(scope, receive, send, 413, _too_large(limit, setting))
                return
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(messages, receive), send)

    def _limit_of(self, scope: Scope) -> tuple[int, str]:
        """The limit of this request's body, and the name of the setting that sets it."""
        if self.media_max_bytes is not None and scope["method"] == "POST" and MEDIA_ROUTE.match(scope["path"]):
            return self.media_max_bytes, "max_media_body_bytes"
        return self.max_bytes, "max_body_bytes"

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
        code = "too_large" if status == 413 else "bad_request"
        response = error_response(ErrorBody(error=code, message=message), status, {"Connection": "close"})
        await response(scope, receive, send)


def _too_large(limit: int, setting: str) -> str:
    return f"the request body is larger than {limit} bytes, this server's limit ({setting}): send less"


def _waits_to_send(scope: Scope) -> bool:
    """Whether the client asked `Expect: 100-continue`: it sends its body only once told to."""
    return any(k == b"expect" and v.strip().lower() == b"100-continue" for k, v in scope["headers"])


async def _drain(receive: Receive, budget: int) -> None:
    """Read and drop the rest of a body, up to `budget` bytes."""
    while budget > 0:
        message = await receive()
        if message["type"] != "http.request":
            return
        budget -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """Make a `receive` that answers the messages already read, then reads on (to notice disconnects)."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed
