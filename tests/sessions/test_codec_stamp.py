"""`stamp` and `new_id`, built for speed: they must give what `model_copy` and `uuid4().hex` give."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from hookline import Event, TextPart, ToolCallPart
from hookline.sessions._codec import new_id, stamp

NOW = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def _slow_stamp(event: Event, *, session_id: str, seq: int, now: datetime) -> Event:
    update = {"id": event.id, "session_id": session_id, "seq": seq, "created_at": now, "partial": False,
              "parts": list(event.parts), "metadata": dict(event.metadata)}
    return event.model_copy(update=update)


def test_a_stamped_event_is_the_event_as_stored_and_shares_nothing_mutable_with_it() -> None:
    event = Event(id="e1", author="assistant", kind="message", role="assistant",
                  parts=[TextPart(text="hi"), ToolCallPart(id="c1", name="add", arguments={"a": 1})],
                  metadata={"k": [1, 2]})

    stored = stamp(event, session_id="s", seq=7, now=NOW)

    assert stored == _slow_stamp(event, session_id="s", seq=7, now=NOW)
    assert stored.model_dump_json() == _slow_stamp(event, session_id="s", seq=7, now=NOW).model_dump_json()
    assert (stored.id, stored.session_id, stored.seq, stored.created_at, stored.partial) == ("e1", "s", 7, NOW, False)
    stored.parts.append(TextPart(text="later"))
    stored.metadata["k2"] = 1
    assert len(event.parts) == 2
    assert event.metadata == {"k": [1, 2]}
    assert (event.seq, event.session_id) == (None, None), "the event given is left as it was"


def test_an_event_without_an_id_gets_a_fresh_one() -> None:
    event = Event.status("assistant", "agent", "turn 1: calling model", turn=1)
    first, second = stamp(event, session_id="s", seq=1, now=NOW), stamp(event, session_id="s", seq=2, now=NOW)
    assert first.id is not None
    assert second.id is not None
    assert first.id != second.id
    assert first.metadata == {"turn": 1}
    assert event.id is None


def test_new_ids_are_version_4_uuids_in_hex_and_do_not_repeat() -> None:
    ids = [new_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for value in ids[:200]:
        parsed = uuid.UUID(hex=value)
        assert (parsed.version, parsed.variant, parsed.hex) == (4, uuid.RFC_4122, value)
