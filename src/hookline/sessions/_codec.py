"""Events as database rows, the rules for prepared parts, and the errors of the store boundary.

Every store shares this module, so the three backends cannot drift apart: the same checks
decide what may be stored, the same functions accumulate prepared parts and merge them
into an author's next event, and the same encoders write a row.

A row holds the scalars a query filters on (`session_id`, `seq`, `kind`, `author`,
`created_at`) beside two JSON columns, `parts` and `metadata`, written with pydantic's
serializer. Reading goes the other way in one step: the database assembles each row into
the event's JSON (see `event_json_sql`), the rows are joined into one JSON array, and
`decode_events` validates it in one call into pydantic-core: no Python code runs per
field, and status rows the prompt view skips are never read.

Text is stored as given, NUL (U+0000) included, with one exception: UTF-8 cannot encode a
lone surrogate (U+D800 to U+DFFF unpaired), so in parts, metadata and state each one
becomes U+FFFD, the replacement character, in every store alike (a pair of surrogates
becomes the character it encodes). An author or event id holding NUL or a surrogate is
refused: those are names, compared by the databases as text.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple, cast, get_args

from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError

from hookline._hot_path import collector_paused
from hookline.errors import ConfigError, InvalidEvent, SessionBusy
from hookline.events import EVENTS_ADAPTER, Event
from hookline.messages import Part, ToolCallPart, ToolResultPart, without_validation
from hookline.sessions.base import Session
from hookline.types import Role, View

__all__ = [
    "EventRow",
    "accumulate",
    "check_event",
    "check_view",
    "decode_events",
    "decode_parts",
    "decode_rows",
    "decode_session",
    "encode_event",
    "encode_state",
    "event_json_sql",
    "iso",
    "merge_pending",
    "new_id",
    "poll_lock",
    "stamp",
    "stored_state",
    "utcnow",
]

_PARTS_ADAPTER: TypeAdapter[list[Part]] = TypeAdapter(list[Part])
_METADATA_ADAPTER: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
_STORABLE_KINDS = ("message", "status", "marker")
_TEXT_COLUMNS = ("id", "session_id", "author", "kind", "role", "source", "created_at")
_BIG_JSON = 1_000_000
_ROLES: tuple[str, ...] = get_args(Role)
_VIEWS: tuple[str, ...] = get_args(View)
_SURROGATE = re.compile("[\ud800-\udfff]")


class EventRow(NamedTuple):
    """One event as the columns of a row."""

    session_id: str
    """The session."""
    seq: int
    """Its position in the log."""
    id: str
    """The event's id."""
    kind: str
    """"message", "status" or "marker"."""
    author: str
    """Who wrote it."""
    role: str | None
    """The message role, if any."""
    source: str | None
    """The status source, if any."""
    created_at: datetime
    """When it was stored (UTC)."""
    parts: str
    """The parts, as a JSON array."""
    metadata: str
    """The metadata, as a JSON object."""


def utcnow() -> datetime:
    """Return the current time, timezone-aware in UTC."""
    return datetime.now(UTC)


def new_id() -> str:
    """Return a fresh random id: a version-4 UUID as 32 hex digits, as `uuid.uuid4().hex` gives.

    Built from the random bytes directly: a store makes one per event, and the `UUID`
    object would cost more (docs/perf/README.md).
    """
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # the RFC 4122 variant
    return raw.hex()


def check_event(event: Event | Mapping[str, Any]) -> Event:
    """Return `event` as an `Event` fit to be stored, or raise `InvalidEvent` naming the bad field.

    A mapping is validated into an `Event`. Deltas are never stored, a message needs a
    role, `partial` is the store's to set, and the author must be named.
    """
    if not isinstance(event, Event):
        try:
            event = Event.model_validate(event)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(loc) for loc in error["loc"]) or "event"
            raise InvalidEvent(error["msg"], field=field) from exc
    if event.kind not in _STORABLE_KINDS:
        expected = "expected message, status or marker"
        raise InvalidEvent(f"{event.kind!r} events are streamed, never stored; {expected}", field="kind")
    if event.kind == "message" and event.role not in _ROLES:
        raise InvalidEvent(f"a message event needs a role, one of: {', '.join(_ROLES)}", field="role")
    if event.partial:
        raise InvalidEvent("the store sets partial; use prepare_event to add pending parts", field="partial")
    if not event.author:
        raise InvalidEvent("an event needs a non-empty author", field="author")
    _check_name(event.author, "author")
    if event.id is not None:
        _check_name(event.id, "id")
    return event


def _check_name(value: str, field: str) -> None:
    if "\x00" in value or (not value.isascii() and _SURROGATE.search(value)):
        raise InvalidEvent("must not hold NUL (\\x00) or lone surrogates: it is a name, stored as text", field=field)


def check_view(view: str) -> View:
    """Return `view` if it names a view; raise `ValueError` listing them otherwise."""
    if view not in _VIEWS:
        raise ValueError(f"unknown view {view!r}; expected one of: {', '.join(_VIEWS)}")
    return cast(View, view)


def stamp(event: Event, *, session_id: str, seq: int, now: datetime) -> Event:
    """Return `event` as stored at `seq`: with `id` (kept if given), `session_id` and `created_at`.

    A new event, built without validating again what `check_event` let through.
    """
    values = dict(event.__dict__)
    values.update(
        id=event.id or new_id(),
        session_id=session_id,
        seq=seq,
        created_at=now,
        partial=False,
        parts=list(event.parts),
        metadata=dict(event.metadata),
    )
    return without_validation(type(event), values)


def accumulate(pending: Event | None, event: Event, *, session_id: str, now: datetime) -> Event:
    """Return the author's partial event once `event`'s parts are added to it.

    The parts are appended to those already pending, metadata keys are merged (later
    ones win), and kind, role and source follow the latest prepared event. The partial
    event keeps the id and `created_at` of the first prepare; it has no `seq`, as it is
    not in the log yet.

    Raises:
        InvalidEvent: A tool result answers no tool call prepared before it (pending, or
            earlier in `event`), or one already answered: merged into the author's next
            event it would be an orphan result, or a second one, in a real message.

    """
    _check_prepared_results(pending.parts if pending is not None else [], event.parts)
    if pending is None:
        return event.model_copy(
            update={
                "id": event.id or new_id(),
                "session_id": session_id,
                "seq": None,
                "created_at": now,
                "partial": True,
                "parts": list(event.parts),
                "metadata": dict(event.metadata),
            }
        )
    return pending.model_copy(
        update={
            "kind": event.kind,
            "role": event.role,
            "source": event.source,
            "parts": [*pending.parts, *event.parts],
            "metadata": {**pending.metadata, **event.metadata},
        }
    )


def _check_prepared_results(pending: Sequence[Part], parts: Sequence[Part]) -> None:
    unanswered = {p.id for p in pending if isinstance(p, ToolCallPart)}
    unanswered -= {p.call_id for p in pending if isinstance(p, ToolResultPart)}
    for index, part in enumerate(parts):
        if isinstance(part, ToolCallPart):
            unanswered.add(part.id)
        elif isinstance(part, ToolResultPart):
            if part.call_id not in unanswered:
                raise InvalidEvent(f"a prepared tool result must answer a tool call prepared before it (in this "
                                   f"event or an earlier prepare of its author) that has no result yet; "
                                   f"{part.call_id!r} is none", field=f"parts.{index}.call_id")
            unanswered.discard(part.call_id)


def merge_pending(pending: Event | None, event: Event) -> Event:
    """Return `event` with its author's pending parts merged in: prepared parts first."""
    if pending is None:
        return event
    return event.model_copy(
        update={"parts": [*pending.parts, *event.parts], "metadata": {**pending.metadata, **event.metadata}}
    )


def encode_event(event: Event) -> EventRow:
    """Return the row of a stamped event (`session_id`, `id` and `created_at` set).

    Lone surrogates in parts or metadata become U+FFFD (see the module docstring), in the
    row and in `event` itself, so the event a store returns is the one it stored.
    """
    assert event.session_id is not None
    assert event.id is not None
    assert event.created_at is not None
    try:
        parts = _encode(_PARTS_ADAPTER, event.parts, "parts")
    except _Surrogates:
        event.parts = _PARTS_ADAPTER.validate_python(_replace_surrogates(_PARTS_ADAPTER.dump_python(event.parts)))
        parts = _encode(_PARTS_ADAPTER, event.parts, "parts")
    metadata = "{}" if event.metadata == {} else _encode_metadata(event)  # most events have none
    row = (event.session_id, event.seq or 0, event.id, event.kind, event.author, event.role, event.source)
    return EventRow(*row, event.created_at, parts, metadata)


def _encode_metadata(event: Event) -> str:
    if _surrogate_in_keys(event.metadata):
        event.metadata = _replace_surrogates(event.metadata)
    try:
        return _encode(_METADATA_ADAPTER, event.metadata, "metadata")
    except _Surrogates:
        event.metadata = _replace_surrogates(event.metadata)
        return _encode(_METADATA_ADAPTER, event.metadata, "metadata")


class _Surrogates(Exception):
    """The value holds a lone surrogate, which UTF-8 cannot encode."""


def _encode(adapter: TypeAdapter[Any], value: Any, field: str) -> str:
    try:
        return adapter.serializer.to_json(value, warnings="error").decode()  # dump_json, less its wrapper
    except (PydanticSerializationError, ValueError, TypeError) as exc:
        if "surrogates not allowed" in str(exc):
            raise _Surrogates from exc
        raise InvalidEvent(f"cannot be stored as JSON ({exc})", field=field) from exc


def _surrogate_in_keys(mapping: Mapping[str, Any]) -> bool:
    # pydantic-core writes a lone surrogate in a top-level key as three U+FFFD and raises
    # nothing (nested keys do raise), so the codec looks for them itself.
    return any(not key.isascii() and _SURROGATE.search(key) for key in mapping if isinstance(key, str))


def _replace_surrogates(value: Any) -> Any:
    """Return `value` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_replace_surrogates(v) for v in value]
    return value


def stored_state(state: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Return the state a store keeps of `state` (a copy, lone surrogates as U+FFFD) and its JSON.

    What `create` answers: the caller's own dict may hold what the store could not keep.
    """
    encoded = encode_state(state)
    return json.loads(encoded), encoded


def encode_state(state: dict[str, Any]) -> str:
    """Encode a session's state as a JSON object; `ConfigError` if it holds non-JSON values."""
    if _surrogate_in_keys(state):
        state = _replace_surrogates(state)
    try:
        return _dump_state(state)
    except _Surrogates:
        return _dump_state(_replace_surrogates(state))


def _dump_state(state: dict[str, Any]) -> str:
    try:
        return _METADATA_ADAPTER.dump_json(state, warnings="error").decode()
    except (PydanticSerializationError, ValueError, TypeError) as exc:
        if "surrogates not allowed" in str(exc):
            raise _Surrogates from exc
        raise ConfigError(f"session state must hold JSON values only (str, numbers, lists, dicts): {exc}") from exc


def decode_session(
    session_id: str, app: str, user: str, state: str, created_at: datetime | str, updated_at: datetime | str
) -> Session:
    """Decode the columns of a `hookline_sessions` row (`state` as JSON text)."""
    fields = {"id": session_id, "app": app, "user": user, "state": json.loads(state)}
    return Session.model_validate({**fields, "created_at": created_at, "updated_at": updated_at})


def iso(moment: datetime) -> str:
    """Format `moment` as ISO-8601 text with microseconds, so text order is time order."""
    return moment.isoformat(timespec="microseconds")


def decode_events(json_array: str) -> list[Event]:
    """Decode a JSON array of event objects (a long one with the garbage collector paused: no event forms a cycle)."""
    if len(json_array) < _BIG_JSON:
        return EVENTS_ADAPTER.validate_json(json_array)
    with collector_paused():
        return EVENTS_ADAPTER.validate_json(json_array)


def decode_rows(rows: Iterable[Sequence[Any]]) -> list[Event]:
    """Decode rows whose first column is an event's JSON (from `event_json_sql`)."""
    return decode_events(f"[{','.join(row[0] for row in rows)}]")


def decode_parts(json_array: str) -> list[Part]:
    """Decode a `parts` column."""
    return _PARTS_ADAPTER.validate_json(json_array)


async def poll_lock(take: Callable[[], Awaitable[bool]], *, session_id: str, timeout: float) -> None:
    """Call `take` until it returns True, for up to `timeout` seconds; then raise `SessionBusy`.

    The pause between tries grows from 5 ms to 100 ms, so a lock freed soon is taken soon
    and a long wait costs little.
    """
    deadline = time.monotonic() + timeout
    delay = 0.005
    while not await take():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SessionBusy(session_id, f"waited {timeout:g} s" if timeout > 0 else "")
        await asyncio.sleep(min(delay, remaining))
        delay = min(delay * 2, 0.1)


def event_json_sql(*, quote: str, raw: str, partial: bool) -> str:
    """Return a SQL expression building an event's JSON object from its row.

    Plain concatenation rather than the database's JSON builders: `parts` and `metadata`
    already hold JSON written by `encode_event`, so they are spliced in as text, never
    parsed again.

    Args:
        quote: A template turning a text column `{}` into a JSON string or `null`.
        raw: A template giving a JSON column `{}` as text.
        partial: Build the partial event of a `hookline_pending` row (no `seq`).

    """
    members = [] if partial else [("seq", "seq")]
    members += [(column, quote.format(column)) for column in _TEXT_COLUMNS]
    members += [("parts", raw.format("parts")), ("metadata", raw.format("metadata"))]
    if partial:
        members.append(("partial", "'true'"))
    body = " || ',' || ".join(f"""'"{name}":' || {value}""" for name, value in members)
    return f"'{{' || {body} || '}}'"
