"""A session store in process memory: for tests, examples and short-lived agents.

What it keeps of an event is its JSON, as a database keeps a row, and what it reads out is
decoded from that (a session: a deep copy), so a caller editing an event it wrote or a
session or event it read never changes what is stored (as ADK's in-memory service does).
Text rather than objects also keeps a long-lived store out of the garbage collector's way:
a full collection walks every object that can hold others, and a server keeping thousands
of runs' events as pydantic models would pay for each of them, over and over. A write returns the
events it stamped, as the SQL stores do. Nothing survives the process. Any thread and any
event loop of the process may use one store at once: a threading lock guards the records,
and `run_lock` works across event loops.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from typing_extensions import override

from hookline.errors import SessionBusy, SessionExists, SessionNotFound
from hookline.events import EVENTS_ADAPTER, Event, select_view
from hookline.sessions._append import checked, stamped
from hookline.sessions._blobs import unheld, wanted_digests
from hookline.sessions._codec import (
    accumulate,
    check_view,
    decode_events,
    decode_parts,
    encode_event,
    new_id,
    stored_state,
    utcnow,
)
from hookline.sessions._search import json_form
from hookline.sessions.base import (
    Blob,
    Session,
    SessionMatch,
    SessionStore,
    check_limit,
    check_list_limit,
    check_search,
    first_mention,
)
from hookline.types import View

__all__ = ["InMemorySessionStore"]

# The kinds of stored events each view shows (partial events aside).
_VIEW_KINDS = {"prompt": ("message",), "ui": ("message", "status"), "all": ("message", "status", "marker")}
# Why `delete` refuses a session a run holds (the same words on every store).
_HELD = "a run holds it; cancel the run or wait for it to end, then delete the session"


class _Row(NamedTuple):
    """One stored event: its seq and kind (what the views select on), and its JSON."""

    seq: int
    kind: str
    json: str
    metadata_at: int
    """Where the metadata object starts in `json` (it ends one character before the end)."""
    rolled_back: bool = False


@dataclass
class _Record:
    session: Session
    log: list[_Row] = field(default_factory=list)
    pending: dict[str, Event] = field(default_factory=dict)
    blobs: dict[str, Blob] = field(default_factory=dict)

    def check_held(self, named: Sequence[str]) -> None:
        """Refuse a write whose parts name bytes by `blob` alone (`named`, digests) this session does not hold.

        Raises:
            InvalidEvent: It does not hold some of them.
        """
        missing = [digest for digest in named if digest not in self.blobs]
        if missing:
            raise unheld(self.session.id, missing)

    def keep(self, blobs: Mapping[str, Blob]) -> None:
        """Keep the bytes of `blobs` this session does not hold yet (the first media type stays)."""
        for digest, blob in blobs.items():
            self.blobs.setdefault(digest, blob)


def _as_stored(event: Event) -> Event:
    """Return `event` as a database would give it back: checked, and through JSON.

    The SQL stores keep parts and metadata as JSON, so a tuple comes back as a list and a
    datetime in metadata as text; this store does the same, and behaves like them.
    """
    row = encode_event(event)
    return event.model_copy(update={"parts": decode_parts(row.parts), "metadata": json.loads(row.metadata)})


def _row(event: Event) -> _Row:
    """The row of a stamped event: its JSON assembled as the SQL stores assemble theirs (`event_json_sql`)."""
    row = encode_event(event)
    head = json.dumps({"seq": row.seq, "id": row.id, "session_id": row.session_id, "author": row.author,
                       "kind": row.kind, "role": row.role, "source": row.source,
                       "created_at": row.created_at.isoformat()})
    body = f'{head[:-1]},"parts":{row.parts},"metadata":'
    return _Row(row.seq, row.kind, f"{body}{row.metadata}}}", len(body))


def _copies(events: list[Event]) -> list[Event]:
    """Deep copies of stored `events`: rebuilt from their fields, which is faster than `copy.deepcopy`."""
    return EVENTS_ADAPTER.validate_python(EVENTS_ADAPTER.dump_python(events))


def _as_stored_state(state: dict[str, Any]) -> dict[str, Any]:
    """Return `state` as a database would give it back (through JSON)."""
    return stored_state(state)[0]


class _RunLocks:
    """The session ids runs hold, shared by every thread and event loop of the process.

    An `asyncio.Lock` belongs to one event loop, and `run_sync` gives each thread its own,
    so the holders are a set under a threading lock, and a waiter is woken on its own
    loop (`call_soon_threadsafe`) when a lock it waits for is released.
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._held: set[str] = set()
        self._waiters: dict[str, list[asyncio.Future[None]]] = {}

    def held(self, session_id: str) -> bool:
        """Whether a run holds `session_id`."""
        return session_id in self._held

    async def acquire(self, session_id: str, timeout: float) -> None:
        """Take `session_id`, waiting up to `timeout` seconds; then raise `SessionBusy`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            woken: asyncio.Future[None] = loop.create_future()
            with self._mutex:
                if session_id not in self._held:
                    self._held.add(session_id)
                    return
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise SessionBusy(session_id, f"waited {timeout:g} s" if timeout > 0 else "")
                self._waiters.setdefault(session_id, []).append(woken)
            try:
                # Not `asyncio.wait_for`: on Python 3.11 it swallows a cancellation that lands
                # as `woken` is set, and the cancelled run would take the lock and go on.
                with suppress(TimeoutError):
                    async with asyncio.timeout(remaining):
                        await woken
            finally:
                with self._mutex:
                    waiters = self._waiters[session_id]
                    waiters.remove(woken)
                    if not waiters:
                        del self._waiters[session_id]

    def release(self, session_id: str) -> None:
        """Free `session_id` and wake whoever waits for it (they race to take it)."""
        with self._mutex:
            self._held.discard(session_id)
            waiters = list(self._waiters.get(session_id, ()))
        for woken in waiters:
            # The waiter's loop may be closed by now (its thread gone): nothing to wake.
            with suppress(RuntimeError):
                woken.get_loop().call_soon_threadsafe(_wake, woken)


def _wake(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)


class InMemorySessionStore(SessionStore):
    """Sessions kept in a dict; `run_lock` holds a session id for one run at a time.

    Partial events are listed by author name. `run_lock` guards one process only, which
    is all this store can be shared by.
    """

    def __init__(self) -> None:
        self._records: dict[str, _Record] = {}
        self._run_locks = _RunLocks()
        self._mutex = threading.Lock()

    def _record(self, session_id: str, user: str | None = None) -> _Record:
        record = self._records.get(session_id)
        if record is None or (user is not None and record.session.user != user):
            raise SessionNotFound(session_id)
        return record

    @override
    async def create(
        self,
        *,
        app: str = "default",
        user: str = "default",
        session_id: str | None = None,
        state: dict[str, Any] | None = None,
    ) -> Session:
        session_id = session_id or new_id()
        now = utcnow()
        session = Session(id=session_id, app=app, user=user, state=_as_stored_state(state or {}))
        session.created_at = session.updated_at = now
        with self._mutex:
            if session_id in self._records:
                raise SessionExists(session_id)
            self._records[session_id] = _Record(session.model_copy(deep=True))
        return session

    @override
    async def get(self, session_id: str, *, user: str | None = None, with_events: bool = True) -> Session:
        with self._mutex:
            record = self._record(session_id, user)
            session = record.session.model_copy(deep=True)
            if with_events:
                session.events = self._view(record, "ui", 0)
        return session

    async def delete(self, session_id: str, *, user: str | None = None) -> None:
        """Delete a session and its whole log.

        Raises:
            SessionNotFound: No such session (or it is another user's).
            SessionBusy: A run holds the session.

        """
        with self._mutex:
            self._record(session_id, user)
            if self._run_locks.held(session_id):
                raise SessionBusy(session_id, _HELD)
            del self._records[session_id]

    @override
    async def append_events(self, session_id: str, events: Sequence[Event]) -> list[Event]:
        events, blobs, named = checked(events)
        now = utcnow()
        with self._mutex:
            record = self._record(session_id)
            record.check_held(named)
            # Merged into copies: a batch that fails to encode leaves the pending parts.
            pending = dict(record.pending)
            stored = stamped(events, pending, session_id=session_id, first=len(record.log) + 1, now=now)
            # What is kept is JSON, so the stamped events are the caller's to keep.
            record.log.extend([_row(event) for event in stored])
            record.pending = pending
            record.keep(blobs)
            record.session.updated_at = now
            return stored

    @override
    async def prepare_event(self, session_id: str, event: Event) -> Event:
        (event,), blobs, named = checked([event])
        now = utcnow()
        with self._mutex:
            record = self._record(session_id)
            record.check_held(named)
            partial = _as_stored(accumulate(record.pending.get(event.author), event, session_id=session_id, now=now))
            record.pending[event.author] = partial
            record.keep(blobs)
            record.session.updated_at = now
            return _copies([partial])[0]

    @override
    async def events(self, session_id: str, *, view: View = "all", after_seq: int = 0) -> list[Event]:
        with self._mutex:
            return self._view(self._record(session_id), view, after_seq)

    @override
    async def page(
        self, session_id: str, *, view: View = "all", after_seq: int = 0, before_seq: int | None = None,
        limit: int = 1000, newest: bool = False,
    ) -> list[Event]:
        check_limit(limit)
        kinds = _VIEW_KINDS[check_view(view)]
        with self._mutex:
            record = self._record(session_id)
            end = len(record.log) if before_seq is None else min(max(before_seq - 1, 0), len(record.log))
            rows = [row for row in record.log[max(after_seq, 0):end]
                    if row.kind in kinds and not (view == "prompt" and row.rolled_back)]
            picked = rows[-limit:] if newest else rows[:limit]
            page = decode_events(f"[{','.join(row.json for row in picked)}]")
            if before_seq is None and (newest or len(rows) <= limit) and view != "prompt":
                page += _copies([record.pending[author] for author in sorted(record.pending)])
            return page

    @staticmethod
    def _view(record: _Record, view: View, after_seq: int) -> list[Event]:
        """The events of `view` after `after_seq`: decoded from their rows, the partial ones copied."""
        kinds = _VIEW_KINDS[check_view(view)]
        # The log is in seq order, seq n at index n - 1: the rows after `after_seq` are a slice.
        shown = record.log[max(after_seq, 0):]
        rows = [row.json for row in shown if row.kind in kinds and not (view == "prompt" and row.rolled_back)]
        logged = decode_events(f"[{','.join(rows)}]")
        partials = [record.pending[author] for author in sorted(record.pending)] if view != "prompt" else []
        return select_view([*logged, *_copies(partials)], view) if partials else logged

    @override
    async def roll_back(self, session_id: str, *, after_seq: int, through_seq: int) -> int:
        with self._mutex:
            log = self._record(session_id).log
            marked = [i for i in range(max(after_seq, 0), min(through_seq, len(log))) if not log[i].rolled_back]
            for i in marked:  # as the SQL stores mark it: first in the metadata
                row = log[i]
                head, metadata = row.json[:row.metadata_at], row.json[row.metadata_at:-1]
                flagged = '{"rolled_back":true}' if metadata == "{}" else '{"rolled_back":true,' + metadata[1:]
                log[i] = row._replace(json=f"{head}{flagged}}}", rolled_back=True)
            return len(marked)

    @override
    async def update_state(self, session_id: str, state: dict[str, Any]) -> None:
        stored = _as_stored_state(state)
        with self._mutex:
            record = self._record(session_id)
            record.session.state = stored
            record.session.updated_at = utcnow()

    @override
    async def load_blobs(self, session_id: str, digests: Iterable[str]) -> dict[str, Blob]:
        wanted = wanted_digests(digests)
        if not wanted:
            return {}
        with self._mutex:
            record = self._records.get(session_id)
            held = record.blobs if record is not None else {}
            return {digest: held[digest] for digest in wanted if digest in held}

    @asynccontextmanager
    async def run_lock(self, session_id: str, *, timeout: float = 0.0) -> AsyncIterator[None]:
        """Hold the session for one run; wait up to `timeout` s, then raise `SessionBusy`.

        The lock is on the id: it does not need the session to exist yet, so a run may
        take it before creating its session.
        """
        await self._run_locks.acquire(session_id, timeout)
        try:
            yield
        finally:
            self._run_locks.release(session_id)

    @override
    async def run_active(self, session_id: str) -> bool:
        return self._run_locks.held(session_id)

    @override
    async def search(
        self, text: str, *, app: str | None = None, user: str | None = None, limit: int = 50
    ) -> list[SessionMatch]:
        """The sessions that mention `text`, newest first, at most `limit` (see `SessionStore.search`).

        Only the messages whose JSON holds the needle's JSON form are decoded, one at a time,
        outside the lock: a copy of each log's rows is taken under it.
        """
        check_search(text, limit)
        folded, json_folded = text.casefold(), json_form(text).casefold()
        found: list[SessionMatch] = []
        for session, log in self._scoped(app, user):
            rows = (r.json for r in log
                    if r.kind == "message" and not r.rolled_back and json_folded in r.json.casefold())
            mention = first_mention((decode_events(f"[{row}]")[0] for row in rows), folded)
            if mention is not None or folded in session.id.casefold():
                found.append(SessionMatch(session, mention))
                if len(found) == limit:
                    break
        return found

    def _scoped(self, app: str | None, user: str | None) -> list[tuple[Session, list[_Row]]]:
        """Copies of the sessions of `app` and `user` (None: any), newest first, each with its log's rows now."""
        with self._mutex:
            scoped = [(r.session.model_copy(deep=True), list(r.log)) for r in self._records.values()
                      if (app is None or r.session.app == app) and (user is None or r.session.user == user)]
        return sorted(scoped, key=lambda pair: (pair[0].created_at, pair[0].id), reverse=True)

    @override
    async def list(
        self, *, app: str | None = None, user: str | None = None, limit: int | None = None
    ) -> list[Session]:
        check_list_limit(limit)
        with self._mutex:
            found = [r.session for r in self._records.values()
                     if (app is None or r.session.app == app) and (user is None or r.session.user == user)]
            newest = sorted(found, key=lambda s: (s.created_at, s.id), reverse=True)[:limit]
            return [session.model_copy(deep=True) for session in newest]
