"""Images and files in the log: the cases of `SessionStoreContract` about their bytes.

A store keeps the bytes of image and file parts (`ImagePart`, `FilePart`, also inside a
tool result's `attachments`) once per session by their SHA-256, and gives parts back with
`blob` set and `data` None; `load_blobs` gives the bytes. A store that keeps the bytes in
the log instead passes too: a part that comes back with its `data` is accepted wherever
one with `blob` is, and such a store's `load_blobs` may hold nothing.

A part given with `blob` and no `data` (one read back from a store) names bytes only its
session holds: a write naming bytes the session does not hold, and that no other part of
the same write brings, is refused with `InvalidEvent` and writes nothing, or the session's
log would name bytes no run could load.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable

import pytest

from hookline.errors import InvalidEvent
from hookline.events import Event
from hookline.messages import FilePart, ImagePart, Part, TextPart, ToolCallPart, ToolResultPart
from hookline.sessions import SessionStore
from hookline.testing._store_cases import fresh, user_says

__all__ = ["BlobCases"]

# Bytes that are no text: NUL, bytes UTF-8 never writes, every byte value once.
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
PDF = b"%PDF-1.7\n\xe2\xe3\xcf\xd3\n" + bytes(range(255, -1, -1))


def _user_shows(*media: ImagePart | FilePart, text: str = "look") -> Event:
    return Event(author="user", role="user", parts=[TextPart(text=text), *media])


def _tool_returns(*attachments: ImagePart | FilePart) -> Event:
    result = ToolResultPart(call_id="c1", content="rendered", name="render", attachments=attachments)
    return Event(author="render", role="tool", parts=[result])


def _editor_renders(*attachments: ImagePart | FilePart) -> Event:
    """A call a front end's editor made, with its result, as it prepares them (a prepared result needs its call)."""
    call = ToolCallPart(id="u1", name="render", arguments={})
    result = ToolResultPart(call_id="u1", content="rendered", name="render", attachments=attachments)
    return Event(author="editor", role="user", parts=[call, result])


async def _check_media(store: SessionStore, session_id: str, read: Part, given: ImagePart | FilePart) -> None:
    """`read` is `given` as a store gives it back: with its digest as `blob` (bytes loadable), or with its data."""
    assert isinstance(read, ImagePart | FilePart), f"a {given.type} part came back as {read!r}"
    assert type(read) is type(given), f"a {given.type} part came back as {read!r}"
    assert read.model_dump(exclude={"data", "blob"}) == given.model_dump(exclude={"data", "blob"})
    digest = hashlib.sha256(given.data or b"").hexdigest()
    if read.data is not None:  # a store that keeps the bytes in the log
        assert read.data == given.data
        assert read.blob in (None, digest)
        return
    assert read.blob == digest, f"a {given.type} part came back with neither its data nor its digest: {read!r}"
    loaded = await store.load_blobs(session_id, [digest])
    assert loaded[digest] == (given.media_type, given.data)
    assert type(loaded[digest].data) is bytes


class BlobCases:
    """The cases about the bytes of images and files (the last point of `SessionStore`'s contract)."""

    async def test_an_image_in_a_user_message_is_kept_by_digest(self, store: SessionStore) -> None:
        """An image's bytes come back by digest (or inline) from the append, `events` and `get`."""
        session = await store.create()
        image = ImagePart(media_type="image/png", data=PNG)
        event = _user_shows(image)
        stored = await store.append_event(session.id, event)
        assert event.parts[1] is image  # the caller's event is left as it was
        assert stored.parts[0] == TextPart(text="look")
        for read in (stored, (await store.events(session.id))[0], (await store.get(session.id)).events[0]):
            await _check_media(store, session.id, read.parts[1], image)
        (prompt,) = await store.events(session.id, view="prompt")
        assert prompt == (await store.events(session.id))[0]

    async def test_a_file_in_a_tool_results_attachments_is_kept_by_digest(self, store: SessionStore) -> None:
        """The images and files of a tool result's `attachments` are kept as top-level ones are."""
        session = await store.create()
        report = FilePart(media_type="application/pdf", data=PDF, name="report.pdf")
        chart = ImagePart(media_type="image/png", data=PNG)
        stored = await store.append_event(session.id, _tool_returns(report, chart))
        (read,) = await store.events(session.id)
        for event in (stored, read):
            result = event.parts[0]
            assert isinstance(result, ToolResultPart)
            assert (result.call_id, result.content, result.name) == ("c1", "rendered", "render")
            assert len(result.attachments) == 2
            await _check_media(store, session.id, result.attachments[0], report)
            await _check_media(store, session.id, result.attachments[1], chart)

    async def test_the_same_bytes_are_kept_once(self, store: SessionStore) -> None:
        """Bytes given twice, in one event or two, name one digest; the first media type given stays with it."""
        session = await store.create()
        first = ImagePart(media_type="image/png", data=PNG)
        again = ImagePart(media_type="image/x-png", data=PNG)
        await store.append_event(session.id, _user_shows(first, first))
        await store.append_event(session.id, _user_shows(again))
        events = await store.events(session.id)
        parts = [*events[0].parts[1:], events[1].parts[1]]
        assert [p.media_type for p in parts] == ["image/png", "image/png", "image/x-png"]  # type: ignore[union-attr]
        digest = hashlib.sha256(PNG).hexdigest()
        assert {p.blob for p in parts} <= {digest, None}  # type: ignore[union-attr]
        loaded = await store.load_blobs(session.id, [digest, digest])
        if any(p.blob for p in parts):  # type: ignore[union-attr]
            assert loaded == {digest: ("image/png", PNG)}

    async def test_a_url_part_is_stored_as_it_is(self, store: SessionStore) -> None:
        """A part holding only a URL (http or `data:`) reads back unchanged, and has no bytes to load."""
        session = await store.create()
        remote = ImagePart(url="https://example.com/chart.png")
        inline = FilePart(url="data:text/plain;base64,aGk=", media_type="text/plain", name="hi.txt")
        stored = await store.append_event(session.id, _user_shows(remote, inline))
        (read,) = await store.events(session.id)
        assert stored.parts[1:] == read.parts[1:] == [remote, inline]
        assert await store.append_event(session.id, _tool_returns(remote)) == (await store.events(session.id))[1]
        assert (await store.events(session.id))[1].parts[0].attachments == (remote,)  # type: ignore[union-attr]

    async def test_a_prepared_image_is_merged_into_the_next_append(self, store: SessionStore) -> None:
        """An image prepared (`prepare_event`) is kept as an appended one, and merged into its author's next event."""
        session = await store.create()
        image = ImagePart(media_type="image/png", data=PNG)
        partial = await store.prepare_event(session.id, _user_shows(image, text="this one"))
        await _check_media(store, session.id, partial.parts[1], image)
        shown = (await store.get(session.id)).events[-1]
        assert shown.partial
        await _check_media(store, session.id, shown.parts[1], image)

        merged = await store.append_event(session.id, user_says("what is in it?"))
        assert [p.type for p in merged.parts] == ["text", "image", "text"]
        (read,) = await store.events(session.id)
        assert read == merged
        await _check_media(store, session.id, read.parts[1], image)

    async def test_load_blobs_of_nothing_is_empty(self, store: SessionStore) -> None:
        """`load_blobs` of no digests, or of digests the session never held, is empty."""
        session = await store.create()
        await store.append_event(session.id, _user_shows(ImagePart(media_type="image/png", data=PNG)))
        assert await store.load_blobs(session.id, []) == {}
        assert await store.load_blobs(session.id, [hashlib.sha256(b"never stored").hexdigest()]) == {}

    async def test_a_session_cannot_load_another_sessions_bytes(self, store: SessionStore) -> None:
        """The bytes are kept per session: another session's digests load nothing."""
        mine, theirs = await store.create(), await store.create()
        await store.append_event(theirs.id, _user_shows(ImagePart(media_type="image/png", data=PNG)))
        assert await store.load_blobs(mine.id, [hashlib.sha256(PNG).hexdigest()]) == {}

    async def test_delete_removes_the_bytes(self, store: SessionStore) -> None:
        """A deleted session's bytes are gone: a new session of the same id holds none."""
        session_id = fresh("s")
        await store.create(session_id=session_id)
        await store.append_event(session_id, _user_shows(ImagePart(media_type="image/png", data=PNG)))
        await store.prepare_event(session_id, _editor_renders(FilePart(media_type="application/pdf", data=PDF)))
        await store.delete(session_id)
        await store.create(session_id=session_id)
        digests = [hashlib.sha256(PNG).hexdigest(), hashlib.sha256(PDF).hexdigest()]
        assert await store.load_blobs(session_id, digests) == {}

    async def test_a_failed_write_keeps_none_of_its_bytes(self, store: SessionStore) -> None:
        """A batch that cannot be stored keeps neither its events nor its bytes."""
        session = await store.create()
        bad = Event(author="user", role="user", metadata={"when": object()})
        with pytest.raises(InvalidEvent, match="metadata"):
            await store.append_events(session.id, [_user_shows(ImagePart(media_type="image/png", data=PNG)), bad])
        assert await store.events(session.id) == []
        assert await store.load_blobs(session.id, [hashlib.sha256(PNG).hexdigest()]) == {}

    # -- parts that name bytes by `blob` alone: the session must hold them, or the write brings them --

    async def test_a_part_naming_bytes_the_session_does_not_hold_is_refused(self, store: SessionStore) -> None:
        """A part with `blob` and no `data` (read from another session) naming bytes this one lacks: nothing written.

        Every write that takes events refuses it with `InvalidEvent` naming the digest and the
        session, and keeps nothing of the write: no event, no seq, no bytes, no state, no
        prepared parts. The session goes on as before.
        """
        source, session = await store.create(), await store.create()
        await store.append_event(source.id, _user_shows(ImagePart(media_type="image/png", data=PNG)))
        await store.append_event(session.id, user_says("before"))
        before = await store.get(session.id)
        borrowed = ImagePart(media_type="image/png", blob=_digest(PNG))  # as `source` gives it back
        writes: dict[str, Callable[[], Awaitable[object]]] = {
            "append_event": lambda: store.append_event(session.id, _user_shows(borrowed)),
            "append_events": lambda: store.append_events(session.id, [
                user_says("fine"), _user_shows(FilePart(media_type="application/pdf", data=PDF)),
                _user_shows(borrowed)]),
            "append_and_save_state": lambda: store.append_and_save_state(
                session.id, [_user_shows(borrowed)], {"saved": True}),
            "prepare_event": lambda: store.prepare_event(session.id, _user_shows(borrowed)),
        }
        for name, write in writes.items():
            with pytest.raises(InvalidEvent) as refused:
                await write()
            assert _digest(PNG) in str(refused.value), f"{name}: {refused.value}"
            assert session.id in str(refused.value), f"{name}: {refused.value}"
        after = await store.get(session.id)
        assert (after.events, after.state) == (before.events, before.state)
        assert await store.load_blobs(session.id, [_digest(PNG), _digest(PDF)]) == {}
        assert (await store.append_event(session.id, user_says("after"))).seq == 2

    async def test_an_attachment_naming_bytes_the_session_does_not_hold_is_refused(self, store: SessionStore) -> None:
        """The attachments of a tool result are checked as top-level parts are; once held, they are accepted."""
        session = await store.create()
        report = FilePart(media_type="application/pdf", blob=_digest(PDF), name="report.pdf")
        chart = ImagePart(media_type="image/png", blob=_digest(PNG))
        with pytest.raises(InvalidEvent) as refused:
            await store.append_event(session.id, _tool_returns(report, chart))
        assert any(d in str(refused.value) for d in (_digest(PDF), _digest(PNG))), str(refused.value)
        assert session.id in str(refused.value)
        assert await store.events(session.id) == []

        await store.append_event(session.id, _user_shows(ImagePart(media_type="image/png", data=PNG),
                                                         FilePart(media_type="application/pdf", data=PDF)))
        stored = await store.append_event(session.id, _tool_returns(report, chart))
        assert stored.seq == 2

    async def test_a_part_naming_bytes_the_session_holds_is_accepted(self, store: SessionStore) -> None:
        """Parts read back from a session, given to it again, are accepted; so are bytes it holds from a prepare."""
        session = await store.create()
        image = ImagePart(media_type="image/png", data=PNG)
        report = FilePart(media_type="application/pdf", data=PDF, name="report.pdf")
        await store.append_events(session.id, [_user_shows(image), _tool_returns(report)])
        again = [Event(author=e.author, role=e.role, parts=e.parts) for e in await store.events(session.id)]
        stored = await store.append_events(session.id, again)
        for event in (stored, (await store.events(session.id))[2:]):
            await _check_media(store, session.id, event[0].parts[1], image)
            await _check_media(store, session.id, event[1].parts[0].attachments[0], report)  # type: ignore[union-attr]

        chart = ImagePart(media_type="image/png", data=PNG[::-1])
        await store.prepare_event(session.id, _editor_renders(chart))
        if await store.load_blobs(session.id, [_digest(chart.data or b"")]):  # bytes kept apart from the log
            named = ImagePart(media_type="image/png", blob=_digest(chart.data or b""))
            shown = await store.append_event(session.id, _user_shows(named))
            await _check_media(store, session.id, shown.parts[1], chart)

    async def test_a_part_whose_bytes_come_in_the_same_write_is_accepted(self, store: SessionStore) -> None:
        """A part naming bytes by `blob` alone is accepted when another part of the same write brings them."""
        session = await store.create()
        image = ImagePart(media_type="image/png", data=PNG)
        named = ImagePart(media_type="image/png", blob=_digest(PNG))
        stored = await store.append_events(session.id, [_user_shows(named), _tool_returns(image)])
        for events in (stored, await store.events(session.id)):
            await _check_media(store, session.id, events[0].parts[1], image)
            await _check_media(store, session.id, events[1].parts[0].attachments[0], image)  # type: ignore[union-attr]
        partial = await store.prepare_event(session.id, _user_shows(FilePart(media_type="application/pdf", data=PDF),
                                                                    FilePart(media_type="application/pdf",
                                                                             blob=_digest(PDF))))
        assert len(partial.parts) == 3


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
