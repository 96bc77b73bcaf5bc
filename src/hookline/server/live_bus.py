"""Live events between server processes sharing a PostgreSQL store, over its NOTIFY bus.

A session's run streams, before they are stored, its text deltas and what user code
reports while it runs. Readers in the run's own process get them from its `SessionHub`;
readers in other processes would get only what is stored, at each flush. So a process
whose readers follow a session says so on the control channel (`relay.py`), and the
process running it sends those live events on `hookline_live` for as long as someone
follows: first its tail (what a reader joining now starts from), then each live event as it
comes.

- **Batched.** An event goes at once, and what comes while a send is on its way goes in the
  next one: one round trip per batch, one NOTIFY per session, several sessions pipelined.
  At light load each delta travels alone; under load a batch carries many.
- **Chunked.** PostgreSQL refuses a payload of 8000 bytes or more. A batch whose JSON is
  longer goes in pieces of at most `MAX_PAYLOAD` bytes, each `#<message id> <i> <n>`, a newline,
  then the piece (a whole batch is `=<json>`); the listener joins them in order (one sender's notifications
  arrive in the order it sent them) and drops a message whose pieces stop coming.
- **Only what the log will not give soon.** Deltas and live status lines travel; a message
  the run streamed early (ahead of a line of a tool or a hook) does not, since it may hold
  images: the other process reads it from the log at the next flush.

Each item carries the hub it comes from and that hub's live counter `n` (to drop repeats
between a tail and what follows it), and `after`, the last seq the running process had
stored when it was made (a delta whose answer the reader already read from the log is
dropped).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable
from itertools import count
from typing import Any, NamedTuple

from hookline.errors import HooklineError
from hookline.events import Event

__all__ = ["LiveBus", "LiveItem"]

logger = logging.getLogger("hookline.server")

_PIECES_KEPT = 64  # chunked messages being joined at once; beyond, the oldest is dropped


class LiveItem(NamedTuple):
    """A live event as it crosses processes."""

    n: int
    """Its place among the live events of the session's hub in the running process."""
    after: int
    """The last seq that hub had published as stored when it was made."""
    event: Event
    """The event (`seq` None)."""


def _travels(event: Event) -> bool:
    """Whether a live event goes to other processes (deltas and status lines; not messages)."""
    return event.kind in ("delta", "status")


class LiveBus:
    """Sends this process's live events to the others, batched and chunked; joins what they send.

    Args:
        send: Sends `(session id, text)` payloads in one round trip (`Notifier.send_live`).
        max_payload: The longest text a payload may hold with its session id, in bytes.
    """

    def __init__(self, send: Callable[[list[tuple[str, str]]], Any], *, max_payload: int) -> None:
        self._send = send
        self._max_payload = max_payload
        self._pending: dict[str, list[dict[str, Any]]] = {}
        self._flushing: asyncio.Task[None] | None = None
        self._pieces: dict[str, list[str]] = {}
        self._message_ids = map(f"{os.getpid():x}.{{:x}}".format, count())

    def send(self, session_id: str, origin: str, item: LiveItem) -> None:
        """Queue `item` of `session_id`, from the hub `origin` names, for the next batch."""
        if not _travels(item.event):
            return
        entry = {"o": origin, "n": item.n, "after": item.after, "event": item.event.model_dump(mode="json")}
        self._pending.setdefault(session_id, []).append(entry)
        if self._flushing is None:
            self._flushing = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        """Send what is pending, again and again until nothing is: what comes during a send goes in the next."""
        try:
            while self._pending:
                batches, self._pending = self._pending, {}
                payloads = [p for session_id, items in batches.items() for p in self._payloads(session_id, items)]
                try:
                    await self._send(payloads)
                except (HooklineError, ValueError) as exc:  # the readers elsewhere get these events from the log
                    logger.warning("could not send live events to the other processes: %s", exc)
        finally:
            self._flushing = None

    def _payloads(self, session_id: str, items: list[dict[str, Any]]) -> list[tuple[str, str]]:
        text = json.dumps(items, separators=(",", ":"))  # ASCII: a character is a byte
        room = self._max_payload - len(session_id.encode()) - 1
        if len(text) + 1 <= room:
            return [(session_id, f"={text}")]
        message_id = next(self._message_ids)
        size = room - len(f"#{message_id} 99999 99999\n")
        pieces = [text[i:i + size] for i in range(0, len(text), size)]
        return [(session_id, f"#{message_id} {i} {len(pieces)}\n{piece}") for i, piece in enumerate(pieces)]

    def heard(self, text: str) -> list[tuple[str, LiveItem]]:
        """The items of a payload heard, each with the hub it comes from (none while a chunked message is not whole).

        Raises:
            ValueError: The payload is not one this bus sends.

        """
        if text.startswith("="):
            return _items(text[1:])
        head, _, piece = text.partition("\n")
        message_id, index, total = head[1:].split(" ")
        pieces = self._pieces.setdefault(message_id, [])
        if int(index) != len(pieces):  # a piece lost (the connection dropped): the log has what matters
            del self._pieces[message_id]
            return []
        pieces.append(piece)
        if len(pieces) < int(total):
            if len(self._pieces) > _PIECES_KEPT:
                del self._pieces[next(iter(self._pieces))]
            return []
        del self._pieces[message_id]
        return _items("".join(pieces))

    async def aclose(self) -> None:
        """Send what waits (within a moment)."""
        if self._flushing is not None:
            await asyncio.wait({self._flushing}, timeout=1.0)


def _items(text: str) -> list[tuple[str, LiveItem]]:
    return [(item["o"], LiveItem(item["n"], item["after"], Event.model_validate(item["event"])))
            for item in json.loads(text)]
