"""The session-store seam: a durable, ordered event log per session.

`SessionStore` is the whole interface a backend implements, as httpx's `BaseTransport` is
for transports; `Session` is what it stores besides the events. The loop is the store's only
writer during a run; hooks and tools act through `State`. Every method is async and nothing
blocks the event loop. The backends (`hookline.sessions.memory`, `.sqlite`, `.postgres`)
import from here, and this module from none of them.
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from functools import partial
from types import TracebackType
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from hookline.errors import ConfigError, SessionBusy, SessionExists, SessionNotFound
from hookline.events import Event
from hookline.messages import ToolResultPart
from hookline.types import View

__all__ = ["Blob", "LastWrite", "RunHold", "Session", "SessionMatch", "SessionStore", "pages_back"]


class Session(BaseModel):
    """A session: who owns it, its saved state, and (from `get`) its events."""

    model_config = ConfigDict(extra="forbid")
    id: str
    """The session's id."""
    app: str = "default"
    """The application it belongs to."""
    user: str = "default"
    """The user who owns it; other users never see it."""
    state: dict[str, Any] = Field(default_factory=dict)
    """The user's own keys (`State.data`), saved with the session."""
    events: list[Event] = Field(default_factory=list)
    """The log in the `ui` view (from `get`; empty in `list`)."""
    created_at: datetime | None = None
    """When it was created (UTC)."""
    updated_at: datetime | None = None
    """When its log or state last changed (UTC)."""


class Blob(NamedTuple):
    """The bytes of an image or file part, kept once per session apart from the log."""

    media_type: str
    """Their MIME type, as the part that first stored them gave it."""
    data: bytes
    """The bytes."""


class SessionMatch(NamedTuple):
    """A session that `SessionStore.search` found, and where its messages mention the text."""

    session: Session
    """The session (without its events)."""
    text: str | None
    """The first text of its messages holding the needle, whole: a message's text or a tool result's
    content, in log order. None when only the session's id holds it."""


def check_limit(limit: int, what: str = "a page's limit") -> None:
    """Raise `ValueError` unless `limit` (a page's size, or `what` it is) is a positive integer."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"{what} must be a positive integer, not {limit!r}")


def check_list_limit(limit: int | None) -> None:
    """Raise `ValueError` unless `limit` (the most sessions `list` answers) is None or a positive integer."""
    if limit is not None:
        check_limit(limit, "a list's limit (None: every session)")


LastWrite = Callable[[Sequence[Event], dict[str, Any]], Coroutine[Any, Any, builtins.list[Event]]]
"""`finish(events, state)`: a held run's last write (its last events and its saved state)."""


class RunHold(NamedTuple):
    """A session held for one run, as `SessionStore.hold_for_run` read it at the run's start."""

    session: Session
    """The session (without its events)."""
    prompt: builtins.list[Event]
    """Its log in the `prompt` view."""
    finish: LastWrite
    """The run's last write: its last events and its saved state (see `append_and_save_state`); a
    store that can lets the session go in the same transaction."""


class SessionStore(ABC):
    """Where sessions live. Subclass it to add a backend.

    Semantics every backend keeps (one contract suite tests them all):

    - `append_event` assigns `seq` (1, 2, 3, ... per session, no gaps) inside one
      transaction and returns the event with `id`, `session_id`, `seq`, `created_at` set.
    - `prepare_event` accumulates parts per (session, author) durably without starting a
      turn; `get` and the `ui` view end with one `partial=True` event per author holding
      them; that author's next `append_event` merges them in (prepared parts first).
    - `run_lock` gives one run at a time a session, across processes where the backend is
      shared: a second run waits up to `timeout` seconds, then gets `SessionBusy`.
    - An unknown id, or one owned by another user when `user` is given, raises
      `SessionNotFound`.
    - The bytes of image and file parts (`ImagePart`, `FilePart`, also inside a tool
      result's `attachments`) are kept once per session by their SHA-256: events come
      back with the part's `blob` set and `data` None, and `load_blobs` gives the bytes.
      A backend that keeps the bytes in the log instead returns parts with `data` and
      needs not override `load_blobs`. A write whose part names bytes by `blob` alone
      (no `data`) that the session does not hold, and the write does not bring, raises
      `InvalidEvent` and writes nothing.

    `open_for_run` (a run's first read) and `append_and_save_state` (its last write) are
    optional: their defaults call the abstract methods, and a backend overrides them only
    to do each in one transaction. So is `hold_for_run`, which the loop calls: `run_lock`,
    then `open_for_run`, by default; a backend may take its lock and read in one
    transaction, and let go with the last write. So is `run_active`, which a backend overrides to tell
    whether a run holds a session without taking its lock. So is `search`, which by default reads
    each session a page at a time, and a backend overrides to search them all in one query.
    """

    @abstractmethod
    async def create(
        self,
        *,
        app: str = "default",
        user: str = "default",
        session_id: str | None = None,
        state: dict[str, Any] | None = None,
    ) -> Session:
        """Create a session (a new uuid4 hex id when `session_id` is None)."""

    @abstractmethod
    async def get(self, session_id: str, *, user: str | None = None, with_events: bool = True) -> Session:
        """Return the session with its events in the `ui` view (none when `with_events` is false)."""

    @abstractmethod
    async def list(
        self, *, app: str | None = None, user: str | None = None, limit: int | None = None
    ) -> list[Session]:
        """Sessions of `app` and `user` (None: any), newest first, without their events: the newest `limit`.

        With `limit` None, every session: a server or a page that lists them for someone
        passes a limit, so that a user with very many sessions costs one bounded read. A
        backend cuts the list where it reads it (SQL `LIMIT`), not after.

        Raises:
            ValueError: `limit` is neither None nor a positive integer.
        """

    async def search(
        self, text: str, *, app: str | None = None, user: str | None = None, limit: int = 50
    ) -> builtins.list[SessionMatch]:
        """The sessions of `app` and `user` (None: any) that mention `text`, newest first, at most `limit`.

        A session mentions it where its id, the text of one of its messages (the `prompt` view:
        complete, not rolled back) or the content of one of their tool results holds it,
        letters of any case alike (as `str.casefold` has them; PostgreSQL as its database's
        locale folds them); status lines, tool calls' arguments and prepared parts are not
        searched. `%`, `_` and backslashes are plain characters. The default reads each session
        of `list` a page at a time (`page`), up to its first mention, and stops at `limit`
        sessions: correct, and as slow as that; a backend overrides it to search in one query.

        Raises:
            ValueError: `text` is empty, or `limit` is not positive.
        """
        check_search(text, limit)
        folded, found = text.casefold(), []
        for session in await self.list(app=app, user=user):
            mention = await _first_mention(self, session.id, folded)
            if mention is not None or folded in session.id.casefold():
                found.append(SessionMatch(session, mention))
                if len(found) == limit:
                    break
        return found

    @abstractmethod
    async def delete(self, session_id: str, *, user: str | None = None) -> None:
        """Delete a session and its whole log.

        Raises:
            SessionNotFound: No such session (of `user`, when given).
            SessionBusy: A run holds the session, in this process or any other sharing the store.

        """

    @abstractmethod
    async def append_events(self, session_id: str, events: Sequence[Event]) -> builtins.list[Event]:
        """Append events in one transaction; return them as stored."""

    async def append_event(self, session_id: str, event: Event) -> Event:
        """Append one event; return it with `id`, `session_id`, `seq` and `created_at` set."""
        (stored,) = await self.append_events(session_id, [event])
        return stored

    @abstractmethod
    async def prepare_event(self, session_id: str, event: Event) -> Event:
        """Add `event`'s parts to its author's pending parts; return the partial event."""

    @abstractmethod
    async def events(self, session_id: str, *, view: View = "all", after_seq: int = 0) -> builtins.list[Event]:
        """Return the events of `view` whose `seq` is above `after_seq` (partials last in `ui`)."""

    async def page(
        self, session_id: str, *, view: View = "all", after_seq: int = 0, before_seq: int | None = None,
        limit: int = 1000, newest: bool = False,
    ) -> builtins.list[Event]:
        """At most `limit` stored events of `view` with `after_seq < seq < before_seq`, in log order.

        The first ones of that range, or with `newest` its last ones. A page that reaches the
        log's end (no `before_seq`, and nothing after it left out) ends with the pending
        (partial) events, in the views that hold them. The default reads `events` and cuts
        it; a backend overrides it to read only the page, so that a long session is read a
        page at a time.

        Raises:
            SessionNotFound: No such session.
            ValueError: `limit` is not positive.
        """
        check_limit(limit)
        every = await self.events(session_id, view=view, after_seq=after_seq)
        stored = [e for e in every if not e.partial and (before_seq is None or (e.seq or 0) < before_seq)]
        page = stored[-limit:] if newest else stored[:limit]
        tail = before_seq is None and (newest or len(stored) <= limit)
        return page + [e for e in every if e.partial] if tail else page

    @abstractmethod
    async def update_state(self, session_id: str, state: dict[str, Any]) -> None:
        """Replace the session's saved state."""

    async def open_for_run(
        self, session_id: str, *, user: str | None = "default", create: bool = True, app: str = "default"
    ) -> tuple[Session, builtins.list[Event]]:
        """The session a run starts on (without its events) and its log in the `prompt` view.

        A session that does not exist is created (for `app` and `user`) when `create` is
        true; one created meanwhile by someone else is read instead. The default calls
        `get`, `create` and `events`; a backend may override it to do it all in one
        transaction.

        Raises:
            SessionNotFound: No such session of `user` (None: any), and `create` is false
                (or the id is another user's).

        """
        try:
            session = await self.get(session_id, user=user, with_events=False)
        except SessionNotFound:
            if not create:
                raise
            try:
                session = await self.create(app=app, user=user or "default", session_id=session_id)
            except SessionExists:  # created meanwhile: by another process, or a killed run's late commit
                session = await self.get(session_id, user=user, with_events=False)
        return session, await self.events(session_id, view="prompt")

    async def append_and_save_state(
        self, session_id: str, events: Sequence[Event], state: dict[str, Any]
    ) -> builtins.list[Event]:
        """Append `events` (there may be none), then replace the saved state; return the events as stored.

        A run's last write. The default calls `append_events`, then `update_state`; a
        backend may override it to do both in one transaction.
        """
        stored = await self.append_events(session_id, events) if events else []
        await self.update_state(session_id, state)
        return stored

    @asynccontextmanager
    async def hold_for_run(
        self, session_id: str, *, user: str | None = "default", create: bool = True, app: str = "default",
        timeout: float = 0.0,
    ) -> AsyncIterator[RunHold]:
        """Hold the session for one run (`run_lock`) and read it (`open_for_run`), until the block ends.

        The `RunHold`'s `finish` is the run's last write. The default takes the lock, then
        reads, and releases at the end of the block; a backend may do the first two in one
        transaction, and release with `finish` (the block's end then releases only if that
        did not). One whose lock and read are one transaction checks the owner first: a
        session of another user is `SessionNotFound`, even while a run holds it.

        Raises:
            SessionBusy: A run holds it still after `timeout` seconds.
            SessionNotFound: As `open_for_run` raises it.

        """
        async with self.run_lock(session_id, timeout=timeout):
            session, prompt = await self.open_for_run(session_id, user=user, create=create, app=app)
            yield RunHold(session, prompt, partial(self.append_and_save_state, session_id))

    async def roll_back(self, session_id: str, *, after_seq: int, through_seq: int) -> int:
        """Leave the events from `after_seq` (excluded) to `through_seq` out of the `prompt` view; return how many.

        What a run rolled back wrote stays in the log (the `ui` and `all` views), each event
        marked in its metadata (`"rolled_back": true`), and the model no longer sees it.
        Events marked already are left as they are. The default cannot mark anything.

        Raises:
            ConfigError: This store cannot roll back (the default).
            SessionNotFound: No such session.

        """
        raise ConfigError(f"{type(self).__name__} cannot roll back a run's events; use a hookline store")

    async def load_blobs(self, session_id: str, digests: Iterable[str]) -> dict[str, Blob]:
        """The stored bytes of session `session_id`'s media parts, by digest (`part.blob`).

        Digests the session does not hold are left out. The default holds none: for a
        backend that keeps the bytes in the log itself.
        """
        return {}

    @abstractmethod
    def run_lock(self, session_id: str, *, timeout: float = 0.0) -> AbstractAsyncContextManager[None]:
        """Hold the session for one run; wait up to `timeout` s, then raise `SessionBusy`."""

    async def run_active(self, session_id: str) -> bool:
        """Whether a run holds `session_id` now, in any process sharing the store (a snapshot).

        The default takes the run lock for an instant, so a run starting at that very moment
        finds the session busy: a backend overrides it to read who holds the lock instead.
        """
        try:
            async with self.run_lock(session_id, timeout=0.0):
                return False
        except SessionBusy:
            return True

    async def aclose(self) -> None:  # noqa: B027 - optional to override: the default is a no-op
        """Close connections; the default does nothing."""

    async def __aenter__(self) -> SessionStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self.aclose()


async def pages_back(
    store: SessionStore, session_id: str, view: View = "all", size: int = 1000
) -> AsyncIterator[builtins.list[Event]]:
    """The stored events of a session's `view`, a page of `size` at a time, from the log's end back to its start.

    Each page is in log order. For readers of a long log's tail (the last run, the calls paused
    in it, the last prompt): they stop where they have found what they look for.

    Raises:
        SessionNotFound: No such session.
    """
    before: int | None = None
    while True:
        page = [e for e in await store.page(session_id, view=view, before_seq=before, limit=size, newest=True)
                if not e.partial]
        if page:
            yield page
        if len(page) < size or page[0].seq == 1:
            return
        before = page[0].seq


PAGE = 500
"""Events of a session's log the default `search` reads at a time."""


def check_search(text: str, limit: int) -> None:
    """Raise `ValueError` unless `text` is a non-empty string and `limit` a positive integer."""
    if not isinstance(text, str) or not text:
        raise ValueError(f"a search needs some text to find, not {text!r}")
    check_limit(limit, "a search's limit")


def mentions(event: Event) -> Iterator[str]:
    """The texts of `event` a search reads, in order: its text, then the content of each tool result."""
    yield event.text
    yield from (p.content for p in event.parts if isinstance(p, ToolResultPart))


def first_mention(events: Iterable[Event], folded: str) -> str | None:
    """The first text of `events` that holds `folded` (a casefolded needle), in order; None: none does."""
    return next((text for e in events for text in mentions(e) if folded in text.casefold()), None)


async def _first_mention(store: SessionStore, session_id: str, folded: str) -> str | None:
    """The first text of a session's `prompt` view holding `folded`, read a page at a time; None: none, or gone."""
    after = 0
    while True:
        try:
            page = await store.page(session_id, view="prompt", after_seq=after, limit=PAGE)
        except SessionNotFound:  # deleted since it was listed
            return None
        mention = first_mention(page, folded)
        if mention is not None or len(page) < PAGE:
            return mention
        after = page[-1].seq or 0
