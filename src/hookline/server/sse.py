"""Server-sent events: one encoder, and the streams a session's readers get.

Every frame comes from `encode_event` or `encode_stored`:

- a stored event: `id:` its `seq`, `event:` its kind, `data:` its JSON (`model_dump_json()`,
  one line, so one `data:` line per frame);
- a live event, not stored yet: the same without `id:` (text deltas, which are never
  stored; and what user code reports while it runs, which is: its JSON holds the `id` it
  keeps);
- `event: stored`: a live event the client got is now on record: `id:` its `seq`, `data:`
  `{"id": ..., "seq": ...}`. It moves the client's position (a browser's `EventSource`
  keeps it as `lastEventId`) without sending the event again.

Each event comes once. A client that loses the connection sends the last `id:` it saw as
`Last-Event-ID`; it then drops what it holds without a `seq` (live events, deltas) and gets
every stored event after that id, then the live ones not stored yet (the deltas of the
answer going on, from its first), then the rest as it comes. Markers (the loop's own
bookkeeping) and partial events are never sent.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator

from fastapi import Request
from starlette.responses import StreamingResponse

from hookline.events import Event
from hookline.server.hub import Subscription, covers_deltas
from hookline.server.media import event_without_stored_bytes

__all__ = ["KEEPALIVE", "encode_event", "encode_stored", "replay", "sse_response", "subscription_frames", "wants_sse"]

KEEPALIVE = b": keepalive\n\n"
"""A comment frame sent when nothing else was for a while, so proxies keep the stream open."""

_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
_CHUNK = 65_536  # bytes of frames a catch-up writes at once
_ANSWERS_KEPT = 64


def encode_event(event: Event) -> bytes:
    """Encode one event as an SSE frame: `id:` (its seq, if stored), `event:` (its kind), `data:` (its JSON).

    Images and files a store holds go by their `blob` alone (`media.event_without_stored_bytes`).
    """
    event = event_without_stored_bytes(event)
    head = f"id: {event.seq}\n" if event.seq is not None else ""
    return f"{head}event: {event.kind}\ndata: {event.model_dump_json()}\n\n".encode()


def encode_stored(event: Event) -> bytes:
    """The frame saying that a live event the client has is now stored: `id:` its seq, `data:` its id and seq."""
    data = json.dumps({"id": event.id, "seq": event.seq})
    return f"id: {event.seq}\nevent: stored\ndata: {data}\n\n".encode()


def wants_sse(request: Request) -> bool:
    """Whether the client's `Accept` header asks for `text/event-stream` (with a non-zero q)."""
    for item in request.headers.get("accept", "").split(","):
        media, *params = (p.strip() for p in item.split(";"))
        if media.lower() == "text/event-stream" and not any(p.replace(" ", "") in ("q=0", "q=0.0") for p in params):
            return True
    return False


class _Position:
    """Where one client is: the last stored seq it got, and the live events it got that are not stored yet."""

    __slots__ = ("answers", "last", "live")

    def __init__(self, after_seq: int) -> None:
        self.last = after_seq
        self.live: set[str] = set()
        self.answers: set[str | None] = set()
        """The answers it got stored, whole: a delta of theirs still on its way is not sent."""

    def stored(self, event: Event) -> bytes | None:
        """The frame of `event`, read from the log by a client that dropped what it held live (None: not sent)."""
        if event.seq is None or event.partial or event.kind == "marker" or event.seq <= self.last:
            return None
        self.last = event.seq
        self._note_answer(event)
        return encode_event(event)

    def frame(self, event: Event) -> bytes | None:
        """The frame of `event` for this client, or None when it has it already."""
        if event.partial or event.kind == "marker":
            return None
        seq = event.seq
        if seq is None:
            if event.kind == "delta":  # a delta's id is its answer's, not its own
                return None if event.id in self.answers else encode_event(event)
            if event.id is not None:
                self.live.add(event.id)
            self._note_answer(event)
            return encode_event(event)
        if seq <= self.last:
            return None
        self.last = seq
        self._note_answer(event)
        if event.id in self.live:
            self.live.discard(event.id)
            return encode_stored(event)
        return encode_event(event)

    def _note_answer(self, event: Event) -> None:
        if covers_deltas(event):
            if len(self.answers) >= _ANSWERS_KEPT:  # only the latest answers still have deltas on their way
                self.answers.clear()
            self.answers.add(event.id)


async def subscription_frames(
    subscription: Subscription, *, after_seq: int = 0, keepalive: float = 15.0
) -> AsyncIterator[bytes]:
    """Yield the frames of a subscription's events until it ends (stored ones after `after_seq`)."""
    async for frame in _frames(subscription, _Position(after_seq), keepalive):
        yield frame


async def _frames(subscription: Subscription, position: _Position, keepalive: float) -> AsyncIterator[bytes]:
    """The frames of what `subscription` gets: each wake-up's events as one chunk, so one write to the socket.

    A run hands over a flush's events together; written one frame at a time, each would be
    a send of its own (and, in a chunked response, a chunk of its own).
    """
    try:
        while True:
            try:
                event = await subscription.get(keepalive)
            except TimeoutError:
                yield KEEPALIVE
                continue
            if event is None:
                return
            frames = [frame for e in (event, *subscription.take_queued()) if (frame := position.frame(e)) is not None]
            if frames:
                yield b"".join(frames)
    finally:
        subscription.close()


async def replay(
    pages: AsyncIterator[list[Event]], subscription: Subscription, *, after_seq: int = 0, keepalive: float = 15.0,
    caught_up: Callable[[list[Event]], None] | None = None,
) -> AsyncIterator[bytes]:
    """Yield the frames of stored events, a page at a time, then of the live tail they do not cover, then of what comes.

    `caught_up(last page)` is called once the stored pages are read (e.g. to start following
    another process's run from there).
    """
    position, read = _Position(after_seq), _Read(subscription.tail_after)
    last: list[Event] = []
    try:
        async for page in pages:
            frames: list[bytes] = []
            for event in page:
                read.note(event)
                frame = position.stored(event)
                if frame is not None:
                    frames.append(frame)
            for chunk in _chunked(frames):
                yield chunk
            last = page
        if caught_up is not None:
            caught_up(last)
        tail = [frame for event in read.uncovered(subscription.tail) if (frame := position.frame(event)) is not None]
        for chunk in _chunked(tail):
            yield chunk
    except BaseException:
        subscription.close()
        raise
    async for frame in _frames(subscription, position, keepalive):
        yield frame


class _Read:
    """What a late reader read from the log after the tail began, to leave out of the tail what it covers."""

    __slots__ = ("answered", "ids", "tail_after")

    def __init__(self, tail_after: int) -> None:
        self.tail_after = tail_after
        self.ids: set[str | None] = set()
        self.answered = False

    def note(self, event: Event) -> None:
        if (event.seq or 0) > self.tail_after:
            self.ids.add(event.id)
            self.answered = self.answered or covers_deltas(event)

    def uncovered(self, tail: list[Event]) -> list[Event]:
        """The live events of `tail` the log did not give (by id), nor the answer of its deltas."""
        return [e for e in tail if e.id not in self.ids and not (self.answered and e.kind == "delta")]


def _chunked(frames: list[bytes]) -> Iterator[bytes]:
    """`frames` joined into chunks of about `_CHUNK` bytes: a catch-up is a few writes, not one per event."""
    start, size = 0, 0
    for end, frame in enumerate(frames, 1):
        size += len(frame)
        if size >= _CHUNK:
            yield b"".join(frames[start:end])
            start, size = end, 0
    if start < len(frames):
        yield b"".join(frames[start:])


def sse_response(frames: AsyncIterator[bytes]) -> StreamingResponse:
    """Answer `text/event-stream`, streaming `frames`, uncached and unbuffered by proxies."""
    return StreamingResponse(frames, media_type="text/event-stream", headers=_HEADERS)
