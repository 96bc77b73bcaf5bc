"""Server-sent events: one encoder, and the streams a run's readers get.

Every frame comes from `encode_event`: `id:` is the event's `seq` (left out for deltas,
which are never stored), `event:` its kind, and `data:` its JSON from `model_dump_json()`,
which is one line, so one `data:` line per frame. A client that loses the connection
sends the last `id:` it saw as `Last-Event-ID` and misses nothing. Markers (the loop's own
bookkeeping, e.g. that a tool call started) are never sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from fastapi import Request
from starlette.responses import StreamingResponse

from hookline.events import Event
from hookline.server.media import event_without_stored_bytes
from hookline.server.runs import Subscription

__all__ = ["KEEPALIVE", "encode_event", "replay", "sse_response", "subscription_frames", "wants_sse"]

KEEPALIVE = b": keepalive\n\n"
"""A comment frame sent when nothing else was for a while, so proxies keep the stream open."""

_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def encode_event(event: Event) -> bytes:
    """Encode one event as an SSE frame: `id:` (its seq, if stored), `event:` (its kind), `data:` (its JSON).

    Images and files a store holds go by their `blob` alone (`media.event_without_stored_bytes`).
    """
    event = event_without_stored_bytes(event)
    head = f"id: {event.seq}\n" if event.seq is not None else ""
    return f"{head}event: {event.kind}\ndata: {event.model_dump_json()}\n\n".encode()


def wants_sse(request: Request) -> bool:
    """Whether the client's `Accept` header asks for `text/event-stream` (with a non-zero q)."""
    for item in request.headers.get("accept", "").split(","):
        media, *params = (p.strip() for p in item.split(";"))
        if media.lower() == "text/event-stream" and not any(p.replace(" ", "") in ("q=0", "q=0.0") for p in params):
            return True
    return False


async def subscription_frames(
    subscription: Subscription, *, after_seq: int = 0, keepalive: float = 15.0
) -> AsyncIterator[bytes]:
    """Yield the frames of a subscription's events until the run ends (stored ones after `after_seq`)."""
    last = after_seq
    try:
        while True:
            try:
                event = await subscription.get(keepalive)
            except TimeoutError:
                yield KEEPALIVE
                continue
            if event is None:
                return
            if event.kind == "marker":
                continue
            if event.seq is not None:
                if event.seq <= last:
                    continue
                last = event.seq
            yield encode_event(event)
    finally:
        subscription.close()


async def replay(
    stored: Iterable[Event], subscription: Subscription | None, *, after_seq: int = 0, keepalive: float = 15.0
) -> AsyncIterator[bytes]:
    """Yield the frames of stored events (partial ones and markers left out), then of live ones without repeats."""
    last = after_seq
    try:
        for event in stored:
            if event.partial or event.kind == "marker" or event.seq is None or event.seq <= last:
                continue
            last = event.seq
            yield encode_event(event)
    except BaseException:
        if subscription is not None:
            subscription.close()
        raise
    if subscription is not None:
        async for frame in subscription_frames(subscription, after_seq=last, keepalive=keepalive):
            yield frame


def sse_response(frames: AsyncIterator[bytes]) -> StreamingResponse:
    """Answer `text/event-stream`, streaming `frames`, uncached and unbuffered by proxies."""
    return StreamingResponse(frames, media_type="text/event-stream", headers=_HEADERS)
