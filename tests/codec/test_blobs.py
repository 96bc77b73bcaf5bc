"""`take_media` (`hookline.sessions._blobs`): how every store takes the bytes of images and files out of an event.

An event without bytes is left as it is (the same object: this runs on every append);
one with bytes comes back as a new event whose media parts, top-level or attached to a
tool result, carry their SHA-256 as `blob` and no `data`, with the bytes to keep beside
it, once per digest.
"""

from __future__ import annotations

import hashlib

import pytest

from hookline.errors import InvalidEvent
from hookline.events import Event
from hookline.messages import FilePart, ImagePart, TextPart, ToolCallPart, ToolResultPart, without_validation
from hookline.sessions._blobs import take_media, wanted_digests
from hookline.sessions.base import Blob

PNG = b"\x89PNG\r\n\x1a\n\x00\xff"
PDF = b"%PDF-1.7\n\xe2\xe3"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_events_without_bytes_are_the_same_objects_and_keep_nothing() -> None:
    plain = [
        Event(author="user", role="user", parts=[TextPart(text="hi")]),
        Event(author="a", role="assistant", parts=[ToolCallPart(id="c1", name="f")]),
        Event(author="f", role="tool", parts=[ToolResultPart(call_id="c1", content="ok")]),
        Event(author="user", role="user", parts=[ImagePart(url="https://example.com/a.png")]),
        Event(author="f", role="tool", parts=[ToolResultPart(call_id="c2", content="ok",
                                                             attachments=(FilePart(url="https://x/y.pdf"),))]),
        Event.marker("agent", note="x"),
    ]
    stored, blobs, _ = take_media(plain)
    assert blobs == {}
    assert stored is plain


def test_top_level_and_attached_bytes_are_taken_out_and_kept_once() -> None:
    image = ImagePart(media_type="image/png", data=PNG)
    report = FilePart(media_type="application/pdf", data=PDF, name="r.pdf")
    same_again = ImagePart(media_type="image/x-png", data=PNG, url="https://example.com/a.png")
    events = [
        Event(author="user", role="user", parts=[TextPart(text="look"), image], metadata={"k": 1}),
        Event(author="f", role="tool",
              parts=[ToolResultPart(call_id="c1", content="ok", attachments=(report, same_again))]),
    ]
    stored, blobs, _ = take_media(events)

    assert blobs == {digest(PNG): Blob("image/png", PNG), digest(PDF): Blob("application/pdf", PDF)}
    first, second = stored
    assert first.parts == [TextPart(text="look"), ImagePart(media_type="image/png", blob=digest(PNG))]
    assert first.metadata == {"k": 1}
    (result,) = second.parts
    assert isinstance(result, ToolResultPart)
    assert (result.call_id, result.content) == ("c1", "ok")
    assert result.attachments == (
        FilePart(media_type="application/pdf", blob=digest(PDF), name="r.pdf"),
        ImagePart(media_type="image/x-png", url="https://example.com/a.png", blob=digest(PNG)),
    )
    # The caller's events are left as they were.
    assert events[0].parts[1] is image
    assert events[1].parts[0].attachments == (report, same_again)  # type: ignore[union-attr]


def test_bytes_without_a_media_type_are_refused_naming_the_parts() -> None:
    unchecked = without_validation(ImagePart, {"type": "image", "media_type": None, "data": PNG, "url": None,
                                               "blob": None})
    with pytest.raises(InvalidEvent, match="parts: the image part holds bytes but no media_type: give it one"):
        take_media([Event.model_construct(author="user", kind="message", role="user", parts=[unchecked])])


def test_wanted_digests_are_distinct_and_one_str_is_refused() -> None:
    assert wanted_digests(iter(["b", "a", "b"])) == ["b", "a"]
    assert wanted_digests(()) == []
    with pytest.raises(TypeError, match="not one str"):
        wanted_digests("abc")
