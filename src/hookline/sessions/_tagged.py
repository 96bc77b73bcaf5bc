"""`TaggedStore`: a view of a session store through which one writer signs what it appends.

Every event appended through the view carries `metadata[key] = value`, in the same
transaction as the event itself, so a reader of the log knows exactly which writer wrote
what: a durable workflow (`hookline.durable`), or a server's run with an id
(`hookline.server.background`).
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any

from hookline.events import Event
from hookline.sessions.base import Blob, LastWrite, RunHold, Session, SessionMatch, SessionStore
from hookline.types import View

__all__ = ["TaggedStore"]


class TaggedStore(SessionStore):
    """A view of `inner` whose appends carry `metadata[key] = value`; every other call goes to `inner`.

    It forwards the methods `SessionStore` gives defaults to as well, or the defaults would
    run instead of `inner`'s own: `open_for_run` and `append_and_save_state` (one transaction
    each in the SQL stores), `hold_for_run` (whose last write it tags too), `load_blobs`
    (the bytes of images and files) and `search` (one query in the SQL stores). Two stay
    unforwarded: `append_event`, built on `append_events`, and `aclose`, since the view does
    not own `inner`.

    Args:
        inner: The session store.
        key: The metadata key every appended event gets.
        value: Its value (e.g. the id of the workflow or the run writing through this view).
    """

    def __init__(self, inner: SessionStore, key: str, value: str) -> None:
        self.inner = inner
        self.key = key
        self.value = value

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "key", "value") or name.startswith("__"):  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)  # a backend's own extras (e.g. `run_active`)

    def _tagged(self, events: Sequence[Event]) -> builtins.list[Event]:
        """Copies of `events`, each with the tag in its metadata."""
        return [e.model_copy(update={"metadata": {**e.metadata, self.key: self.value}}) for e in events]

    async def append_events(self, session_id: str, events: Sequence[Event]) -> builtins.list[Event]:
        """Append `events`, each tagged, in one transaction."""
        return await self.inner.append_events(session_id, self._tagged(events))

    async def append_and_save_state(
        self, session_id: str, events: Sequence[Event], state: dict[str, Any]
    ) -> builtins.list[Event]:
        """Append `events`, tagged as `append_events` tags them, and save `state`: in one transaction if `inner` can."""
        return await self.inner.append_and_save_state(session_id, self._tagged(events), state)

    async def open_for_run(
        self, session_id: str, *, user: str | None = "default", create: bool = True, app: str = "default"
    ) -> tuple[Session, builtins.list[Event]]:
        """Open a session of `inner` for a run (in one transaction where `inner` can)."""
        return await self.inner.open_for_run(session_id, user=user, create=create, app=app)

    async def create(
        self,
        *,
        app: str = "default",
        user: str = "default",
        session_id: str | None = None,
        state: dict[str, Any] | None = None,
    ) -> Session:
        """Create a session in `inner`."""
        return await self.inner.create(app=app, user=user, session_id=session_id, state=state)

    async def get(self, session_id: str, *, user: str | None = None, with_events: bool = True) -> Session:
        """Return a session of `inner`."""
        return await self.inner.get(session_id, user=user, with_events=with_events)

    async def list(
        self, *, app: str | None = None, user: str | None = None, limit: int | None = None
    ) -> builtins.list[Session]:
        """List the sessions of `inner` (the newest `limit`; None: all)."""
        return await self.inner.list(app=app, user=user, limit=limit)

    async def search(
        self, text: str, *, app: str | None = None, user: str | None = None, limit: int = 50
    ) -> builtins.list[SessionMatch]:
        """The sessions of `inner` that mention `text` (one query where `inner` can)."""
        return await self.inner.search(text, app=app, user=user, limit=limit)

    async def delete(self, session_id: str, *, user: str | None = None) -> None:
        """Delete a session of `inner`."""
        await self.inner.delete(session_id, user=user)

    async def prepare_event(self, session_id: str, event: Event) -> Event:
        """Prepare parts in `inner` (untagged: they are the user's, merged into a later append)."""
        return await self.inner.prepare_event(session_id, event)

    async def events(self, session_id: str, *, view: View = "all", after_seq: int = 0) -> builtins.list[Event]:
        """Read a session's events from `inner`."""
        return await self.inner.events(session_id, view=view, after_seq=after_seq)

    async def page(
        self, session_id: str, *, view: View = "all", after_seq: int = 0, before_seq: int | None = None,
        limit: int = 1000, newest: bool = False,
    ) -> builtins.list[Event]:
        """A page of a session's events, from `inner`."""
        return await self.inner.page(session_id, view=view, after_seq=after_seq, before_seq=before_seq, limit=limit,
                                     newest=newest)

    async def update_state(self, session_id: str, state: dict[str, Any]) -> None:
        """Save a session's state in `inner`."""
        await self.inner.update_state(session_id, state)

    async def roll_back(self, session_id: str, *, after_seq: int, through_seq: int) -> int:
        """Leave events of a session of `inner` out of its prompt view."""
        return await self.inner.roll_back(session_id, after_seq=after_seq, through_seq=through_seq)

    async def load_blobs(self, session_id: str, digests: Iterable[str]) -> dict[str, Blob]:
        """The bytes of a session's images and files, from `inner`."""
        return await self.inner.load_blobs(session_id, digests)

    @asynccontextmanager
    async def hold_for_run(
        self, session_id: str, *, user: str | None = "default", create: bool = True, app: str = "default",
        timeout: float = 0.0,
    ) -> AsyncIterator[RunHold]:
        """Hold and read a session of `inner` for a run; its last write tagged as `append_events` tags."""
        async with self.inner.hold_for_run(session_id, user=user, create=create, app=app, timeout=timeout) as hold:
            yield hold._replace(finish=partial(self._finish, hold.finish))

    async def _finish(self, finish: LastWrite, events: Sequence[Event], state: dict[str, Any]) -> builtins.list[Event]:
        return await finish(self._tagged(events), state)

    def run_lock(self, session_id: str, *, timeout: float = 0.0) -> AbstractAsyncContextManager[None]:
        """Hold a session of `inner` for one run."""
        return self.inner.run_lock(session_id, timeout=timeout)

    async def run_active(self, session_id: str) -> bool:
        """Whether a run holds a session of `inner` (asked of `inner`, which takes no lock)."""
        return await self.inner.run_active(session_id)
