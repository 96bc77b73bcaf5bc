"""Images and files in the log: their bytes taken out of the events, to be kept once per session.

Every store shares this module, so the three backends keep media alike. Before an event
is written, `take_media` replaces each image or file part that holds bytes (a top-level
part, or an attachment of a tool result) by the same part with `blob` set to the bytes'
SHA-256 and `data` None, and hands back the bytes to keep, by digest. The store writes
those (once per session and digest) in the transaction that writes the events; the log
itself never holds the bytes, so reading it costs the same with or without images.

A part may also come with `blob` alone (no `data`): one read back from a store. The same
walk gathers those digests, less the ones the write brings itself, and the store refuses
the write, in its transaction, when the session does not hold some of them (`unheld`): a
log naming bytes its session lacks could never be loaded again.

Most events hold no media at all, and this runs on every append: such an event costs one
look-up per part, by its type, and comes back as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeAlias

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

__all__ = ["Taken", "take_media", "unheld", "wanted_digests"]

# The part types that never hold bytes: the loop over an event's parts skips them at the
# cost of one look-up each. Any other type is checked with isinstance (subclasses too),
# and remembered here when it holds no media.
_PLAIN: set[type[Any]] = {TextPart, ToolCallPart, DocumentPart, ReasoningPart}
_NO_BLOBS: Mapping[str, Blob] = MappingProxyType({})


# What `take_media` gives back: the events as stored, the bytes to keep by digest, and the
# digests of parts naming bytes by `blob` alone that the write does not bring (in order). A
# plain tuple: this runs on every append, and building a NamedTuple costs more than the walk.
Taken: TypeAlias = tuple[list[Event], Mapping[str, Blob], tuple[str, ...]]


def take_media(events: list[Event]) -> Taken:
    """Return `events` as they are stored, the bytes of their media to keep, and the digests they name without bytes.

    The digests named are those of parts holding `blob` and no `data` (read back from a
    store) whose bytes no other part of `events` brings, each once, in order: the session
    must hold them already (`unheld` is the error when it does not).

    When no event holds bytes, that is `events` itself and no bytes. Otherwise each event
    that does is replaced, in a new list, by a new event whose media parts carry `blob`
    in place of `data` (the caller's events are left as they were). The first media type
    given for a digest is the one kept.

    Raises:
        InvalidEvent: A part holds bytes without a media type (one built without validation).
    """
    named: tuple[str, ...] = ()  # a tuple: the common case, none, allocates nothing
    for event in events:
        for part in event.parts:
            kind = type(part)
            if kind in _PLAIN or (kind is ToolResultPart and not part.attachments):  # type: ignore[union-attr]
                continue
            for media in _media_of(part):
                if media.data is not None:
                    return _take_all(events)
                if media.blob is not None:
                    named += (media.blob,)
    return events, _NO_BLOBS, tuple(dict.fromkeys(named)) if named else named


def unheld(session_id: str, missing: Sequence[str]) -> InvalidEvent:
    """The error of a write whose parts name bytes (`missing`, digests in order) session `session_id` does not hold."""
    if len(missing) == 1:
        what, fix = f"the stored image or file {missing[0]} by `blob` alone, without its bytes", "the part its"
    else:
        what = f"{len(missing)} stored images or files by `blob` alone (first: {missing[0]}), without their bytes"
        fix = "each such part its"
    return InvalidEvent(
        f"names {what}, and session {session_id!r} does not hold them (a part read from another session?); "
        f"nothing of this write was saved. Give {fix} bytes: load them from the session it was read from "
        "with `store.load_blobs(that_session_id, [part.blob])`, then rebuild it with `data=` those bytes",
        field="parts",
    )


def _take_all(events: list[Event]) -> Taken:
    """`take_media` once some event is known to hold bytes."""
    blobs: dict[str, Blob] = {}
    named: list[str] = []
    stored = []
    for event in events:
        parts = [_take(p, blobs, named) for p in event.parts]
        changed = any(new is not old for new, old in zip(parts, event.parts, strict=True))
        stored.append(_with_parts(event, parts) if changed else event)
    return stored, blobs, tuple(d for d in dict.fromkeys(named) if d not in blobs)


def wanted_digests(digests: Iterable[str]) -> list[str]:
    """The distinct digests of a `load_blobs` call, in order.

    Raises:
        TypeError: One digest was passed as a `str`, which would be read as its characters.
    """
    if isinstance(digests, str):
        raise TypeError("load_blobs takes an iterable of digests, not one str: pass [part.blob]")
    return list(dict.fromkeys(digests))


def _media_of(part: Part) -> tuple[ImagePart | FilePart, ...]:
    """The media `part` is or holds (its attachments); a type that holds none is remembered in `_PLAIN`."""
    if isinstance(part, ImagePart | FilePart):
        return (part,)
    if isinstance(part, ToolResultPart):
        return part.attachments
    _PLAIN.add(type(part))
    return ()


def _with_parts(event: Event, parts: list[Part]) -> Event:
    return without_validation(type(event), {**event.__dict__, "parts": parts, "metadata": dict(event.metadata)})


def _take(part: Part, blobs: dict[str, Blob], named: list[str]) -> Part:
    """`part` as stored: its bytes (or those of its attachments) added to `blobs`, the part holding their digest.

    The digests of media naming bytes by `blob` alone are added to `named`. A part with no
    bytes to take is returned itself.
    """
    if type(part) in _PLAIN:
        return part
    if isinstance(part, ImagePart | FilePart):
        return _take_bytes(part, blobs, named)
    if isinstance(part, ToolResultPart) and part.attachments:
        attachments = tuple(_take_bytes(media, blobs, named) for media in part.attachments)
        if all(new is old for new, old in zip(attachments, part.attachments, strict=True)):
            return part
        return without_validation(type(part), {**part.__dict__, "attachments": attachments})
    return part


def _take_bytes(part: ImagePart | FilePart, blobs: dict[str, Blob], named: list[str]) -> ImagePart | FilePart:
    if part.data is None:
        if part.blob is not None:
            named.append(part.blob)
        return part
    if not part.media_type:
        hint = "give it one, e.g. 'image/png' or 'application/pdf'"
        raise InvalidEvent(f"the {part.type} part holds bytes but no media_type: {hint}", field="parts")
    digest = part.digest()
    if digest not in blobs:
        blobs[digest] = Blob(part.media_type, bytes(part.data))
    return without_validation(type(part), {**part.__dict__, "data": None, "blob": digest})
