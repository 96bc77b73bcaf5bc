"""Properties of the session codec (`hookline.sessions._codec`), the one way every store writes and reads a row.

An event written to a row and read back is the event the store returned when it wrote
it, whatever its parts and metadata hold. The only change is the one the codec
promises: UTF-8 cannot hold a lone surrogate, so each becomes U+FFFD (and a surrogate
pair the character it encodes). The row is read back through a real SQLite database,
with the SQL the codec builds for it.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hookline import Event, TextPart, ToolCallPart, ToolResultPart
from hookline.errors import InvalidEvent
from hookline.sessions._codec import (
    EventRow,
    accumulate,
    check_event,
    decode_rows,
    encode_event,
    encode_state,
    event_json_sql,
    iso,
    merge_pending,
    stamp,
)
from support.strategies import HIGH, LOW, events, json_values, names, utf8_text

QUICK = settings(max_examples=60, deadline=None, derandomize=True)
NOW = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)

# Surrogates anywhere but in the keys of the top-level object: pydantic-core writes a lone
# surrogate there as three U+FFFD instead of refusing it, so the codec never gets to replace
# it (see the xfail tests at the end).
objects = st.dictionaries(utf8_text, json_values, max_size=4)


def stored_text(text: str) -> str:
    """What a store keeps of `text` (the reference): a surrogate pair becomes its character, a lone one U+FFFD."""
    kept: list[str] = []
    index = 0
    while index < len(text):
        unit = text[index]
        pair = text[index : index + 2]
        if len(pair) == 2 and "\ud800" <= pair[0] <= "\udbff" and "\udc00" <= pair[1] <= "\udfff":
            kept.append(chr(0x10000 + ((ord(pair[0]) - 0xD800) << 10) + (ord(pair[1]) - 0xDC00)))
            index += 2
            continue
        kept.append("\ufffd" if "\ud800" <= unit <= "\udfff" else unit)
        index += 1
    return "".join(kept)


def stored_value(value: Any) -> Any:
    """`stored_text` applied to every string of a JSON-like value, keys included."""
    if isinstance(value, str):
        return stored_text(value)
    if isinstance(value, dict):
        return {stored_text(k): stored_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [stored_value(v) for v in value]
    return value


def read_back(row: EventRow) -> Event:
    """The event SQLite builds from `row` with the codec's SQL, decoded as every store decodes it."""
    with closing(sqlite3.connect(":memory:")) as db:
        db.execute("CREATE TABLE events (session_id, seq, id, kind, author, role, source, created_at, parts, metadata)")
        columns = (*row[:7], iso(row.created_at), *row[8:])
        db.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", columns)
        select = f"SELECT {event_json_sql(quote='json_quote({})', raw='{}', partial=False)} FROM events"
        (event,) = decode_rows(db.execute(select).fetchall())
    return event


@QUICK
@given(event=events(metadata=objects), seq=st.integers(1, 2**31))
@example(event=Event(author="a", kind="message", role="user", parts=[TextPart(text=f"x\x00{HIGH}{LOW}{LOW}é")]), seq=1)
def test_an_event_read_back_from_its_row_is_the_event_stored(event: Event, seq: int) -> None:
    stamped = stamp(check_event(event), session_id="s-1", seq=seq, now=NOW)
    expected = Event.model_validate(stored_value(stamped.model_dump()))

    row = encode_event(stamped)

    assert read_back(row) == expected
    assert stamped == expected, "the event the store returns is the one it stored"


@QUICK
@given(state=objects)
def test_session_state_is_stored_as_json_with_its_text_kept(state: dict[str, Any]) -> None:
    assert json.loads(encode_state(state)) == stored_value(state)


@QUICK
@given(name=names, bad=st.sampled_from(["\x00", HIGH, LOW, "\udfff"]), at=st.integers(0, 8))
def test_a_name_holding_nul_or_a_lone_surrogate_is_refused(name: str, bad: str, at: int) -> None:
    author = name[:at] + bad + name[at:]
    with pytest.raises(InvalidEvent) as refused:
        check_event(Event(author=author, kind="status", source="agent"))
    assert refused.value.field == "author"


@QUICK
@given(prepared=st.lists(events(), min_size=1, max_size=4), final=events())
def test_prepared_parts_come_first_and_later_metadata_wins(prepared: list[Event], final: Event) -> None:
    prepared = answerable(prepared)
    pending = None
    for event in prepared:
        pending = accumulate(pending, event, session_id="s-1", now=NOW)
    assert pending is not None

    merged = merge_pending(pending, final)

    assert merged.parts == [p for e in [*prepared, final] for p in e.parts]
    assert merged.metadata == {k: v for e in [*prepared, final] for k, v in e.metadata.items()}
    assert (merged.kind, merged.role, merged.source) == (final.kind, final.role, final.source)
    assert merged.author == final.author
    assert pending.partial
    assert (pending.seq, pending.created_at) == (None, NOW)


def answerable(prepared: list[Event]) -> list[Event]:
    """`prepared` less the tool results a store refuses: those that answer no call prepared before them."""
    unanswered: set[str] = set()
    kept = []
    for event in prepared:
        parts = []
        for part in event.parts:
            if isinstance(part, ToolCallPart):
                unanswered.add(part.id)
            elif isinstance(part, ToolResultPart):
                if part.call_id not in unanswered:
                    continue
                unanswered.discard(part.call_id)
            parts.append(part)
        kept.append(event.model_copy(update={"parts": parts}))
    return kept


def test_a_lone_surrogate_in_a_metadata_key_becomes_one_replacement_character() -> None:
    event = stamp(Event(author="a", kind="marker", metadata={f"a{HIGH}b": 1}), session_id="s-1", seq=1, now=NOW)
    assert read_back(encode_event(event)).metadata == {"a\ufffdb": 1}


def test_a_lone_surrogate_in_a_state_key_becomes_one_replacement_character() -> None:
    assert json.loads(encode_state({f"a{HIGH}b": 1})) == {"a\ufffdb": 1}
