"""Images and files in the log: their bytes taken out of the events, to be kept once per session.

Every store shares this module, so the three backends keep media alike. Before an event
is written, `take_blobs` replaces each image or file part that holds bytes (a top-level
part, or an attachment of a tool result) by the same part with `blob` set to the bytes'
SHA-256 and `data` None, and hands back the bytes to keep, by digest. The store writes
those (once per session and digest) in the transaction that writes the events; the log
itself never holds the bytes, so reading it costs the same with or without images.

Most events hold no media at all, and this runs on every append: such an event costs one
look-up per part, by its type, and comes back as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from hookline.errors import InvalidEvent
from hookline.events import Event
from hookline.messages import (
    DocumentPart,
    FilePart,
    ImagePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    without_validation,
)
from hookline.sessions.base import Blob

__all__ = ["take_blobs", "wanted_digests"]

# The part types that never hold bytes: the loop over an event's parts skips them at the
# cost of one look-up each. Any other type is checked with isinstance (subclasses too),
# and remembered here when it holds no media.
_PLAIN: set[type[Any]] = {TextPart, ToolCallPart, DocumentPart, ReasoningPart}
_NO_BLOBS: Mapping[str, Blob] = MappingProxyType({})


def take_blobs(events: list[Event]) -> tuple[list[Event], Mapping[str, Blob]]:
    """Return `events` as they are stored, and the bytes of their media to keep, by digest.

    When no event holds bytes, that is `events` itself and no bytes. Otherwise each event
    that does is replaced, in a new list, by a new event whose media parts carry `blob`
    in place of `data` (the caller's events are left as they were). The first media type
    given for a digest is the one kept.

    Raises:
        InvalidEvent: A part holds bytes without a media type (one built without validation).
    """
    for event in events:
        for part in event.parts:
            kind = type(part)
            if kind in _PLAIN or (kind is ToolResultPart and not part.attachments):  # type: ignore[union-attr]
                continue
            if _has_bytes(part):
                return _take_all(events)
    return events, _NO_BLOBS


def _take_all(events: list[Event]) -> tuple[list[Event], dict[str, Blob]]:
    """`take_blobs` once some event is known to hold bytes."""
    blobs: dict[str, Blob] = {}
    stored = [_with_parts(e, [_take(p, blobs) for p in e.parts]) if any(map(_has_bytes, e.parts)) else e
              for e in events]
    return stored, blobs


def wanted_digests(digests: Iterable[str]) -> list[str]:
    """The distinct digests of a `load_blobs` call, in order.

    Raises:
        TypeError: One digest was passed as a `str`, which would be read as its characters.
    """
    if isinstance(digests, str):
        raise TypeError("load_blobs takes an iterable of digests, not one str: pass [part.blob]")
    return list(dict.fromkeys(digests))


def _has_bytes(part: Part) -> bool:
    """Whether `part` holds bytes, itself or in its attachments."""
    if isinstance(part, ImagePart | FilePart):
        return part.data is not None
    if isinstance(part, ToolResultPart):
        return any(media.data is not None for media in part.attachments)
    _PLAIN.add(type(part))
    return False


def _with_parts(event: Event, parts: list[Part]) -> Event:
    return without_validation(type(event), {**event.__dict__, "parts": parts, "metadata": dict(event.metadata)})


def _take(part: Part, blobs: dict[str, Blob]) -> Part:
    """`part` as stored: its bytes (or those of its attachments) added to `blobs`, the part holding their digest."""
    if isinstance(part, ImagePart | FilePart):
        return _take_bytes(part, blobs)
    if isinstance(part, ToolResultPart) and part.attachments:
        attachments = tuple(_take_bytes(media, blobs) for media in part.attachments)
        return without_validation(type(part), {**part.__dict__, "attachments": attachments})
    return part


def _take_bytes(part: ImagePart | FilePart, blobs: dict[str, Blob]) -> ImagePart | FilePart:
    if part.data is None:
        return part
    if not part.media_type:
        hint = "give it one, e.g. 'image/png' or 'application/pdf'"
        raise InvalidEvent(f"the {part.type} part holds bytes but no media_type: {hint}", field="parts")
    digest = part.digest()
    if digest not in blobs:
        blobs[digest] = Blob(part.media_type, bytes(part.data))
    return without_validation(type(part), {**part.__dict__, "data": None, "blob": digest})
