"""Images and files on the HTTP surface: how stored bytes are served, and left out of answers.

A store keeps the bytes of image and file parts once per session, by their SHA-256, apart
from the log (`SessionStore.load_blobs`); events name them by `blob`, and
`GET /v1/sessions/{id}/blobs/{digest}` (`blob_routes`) serves them. A run's JSON answer
and its stream name them the same way: parts that a store holds (`blob` set) go without
their bytes, so a client that posted a photo does not download it again.

A prepared event may name bytes by `blob` alone only if its session holds them
(`check_held`): a digest the session lacks would leave a log that no run can load again.

The bytes are whatever a client or a tool sent, served from the page's own origin, so the
answer never lets them act as a page: `nosniff`, a sandboxing Content-Security-Policy, and
`Content-Disposition: attachment` for anything but the raster image types a browser shows
as a picture (an SVG, an HTML file or a PDF downloads instead of opening here). A media
type that is not a plain `type/subtype` is served as `application/octet-stream`.
Content-addressed bytes never change: the answer may be cached for a year.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hookline.agent import RunResult
from hookline.errors import InvalidEvent
from hookline.events import Event
from hookline.messages import FilePart, ImagePart, Message, Part, ToolResultPart
from hookline.sessions import SessionStore

__all__ = ["DIGEST_PATTERN", "blob_headers", "check_held", "event_without_stored_bytes", "without_stored_bytes"]

DIGEST_PATTERN = "^[0-9a-f]{64}$"
"""A blob's digest: the SHA-256 of its bytes, 64 lowercase hex digits (a part's `blob`)."""

_MIME = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$")
_SHOWN_INLINE = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"})
_A_YEAR = 31_536_000


def blob_headers(digest: str, media_type: str) -> dict[str, str]:
    """The headers of a blob's answer: its type, how long to keep it, and what it must never do here."""
    kind = media_type.strip().lower()
    if not _MIME.match(kind):
        kind = "application/octet-stream"
    return {
        "Content-Type": kind,
        "Content-Disposition": "inline" if kind in _SHOWN_INLINE else "attachment",
        "Cache-Control": f"private, max-age={_A_YEAR}, immutable",
        "ETag": f'"{digest}"',
        "Vary": "Authorization",
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
    }


def without_stored_bytes(result: RunResult) -> RunResult:
    """`result` with the bytes of its stored images and files left out (their `blob` names them)."""
    if not any(_holds_stored_bytes(part) for message in result.messages for part in message.parts):
        return result
    messages = [Message.from_valid_parts(m.role, [_light(p) for p in m.parts]) for m in result.messages]
    return result.model_copy(update={"messages": messages})


def event_without_stored_bytes(event: Event) -> Event:
    """`event` with the bytes of its stored images and files left out (their `blob` names them)."""
    if not any(_holds_stored_bytes(part) for part in event.parts):
        return event
    return event.model_copy(update={"parts": [_light(p) for p in event.parts]})


async def check_held(store: SessionStore, session_id: str, event: Event) -> None:
    """Refuse `event` if it names stored bytes (`blob` without `data`) that session `session_id` does not hold.

    Raises:
        InvalidEvent: It does (422 `invalid_event`): the message names the first digest missing.
    """
    named = {m.blob for m in _media(event.parts) if m.data is None and m.blob is not None}
    if not named:
        return
    missing = named - (await store.load_blobs(session_id, sorted(named))).keys()
    if missing:
        raise InvalidEvent(f"names {len(missing)} stored image(s) or file(s) that session {session_id!r} does not "
                           f"hold (first: {min(missing)}): send their bytes as base64 `data`", field="parts")


def _media(parts: Sequence[Part]) -> list[ImagePart | FilePart]:
    found: list[ImagePart | FilePart] = []
    for part in parts:
        if isinstance(part, ImagePart | FilePart):
            found.append(part)
        elif isinstance(part, ToolResultPart):
            found.extend(part.attachments)
    return found


def _holds_stored_bytes(part: Part) -> bool:
    if isinstance(part, ImagePart | FilePart):
        return part.blob is not None and part.data is not None
    return isinstance(part, ToolResultPart) and any(_holds_stored_bytes(a) for a in part.attachments)


def _light(part: Part) -> Part:
    if isinstance(part, ImagePart | FilePart) and part.blob is not None:
        return part.model_copy(update={"data": None})
    if isinstance(part, ToolResultPart) and part.attachments:
        attachments = tuple(_light(a) for a in part.attachments)
        return part.model_copy(update={"attachments": attachments})
    return part
