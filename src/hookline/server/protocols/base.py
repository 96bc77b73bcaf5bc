"""The seam of the protocol surfaces: a request becomes a run, and its events are read once, in order.

A protocol module (`ag_ui.py`, `ai_sdk.py`, `a2a.py`) parses a request in its own form into a
`Turn` (a prompt, or answers to paused calls), opens the session it names (`open_session`),
starts the run (`start`) and reads its `RunEvents`: every event of the run once, in the log's
order, live ones as they are made (an event read live is not read again when stored). Its
`Translator` turns each one into the protocol's frames; `frames` drives the translator and
sends `: keepalive` comments while a run is quiet.

The facts a translator needs are read off the events as data (`paused_call`, `failure_of`,
`events.run_end`), never parsed out of their text.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from starlette.requests import Request

from hookline._ids import session_id_problem
from hookline.agent import PromptRequest, RunResult
from hookline.errors import HooklineError, SessionExists, SessionNotFound
from hookline.events import Event
from hookline.messages import Message
from hookline.result import Interruption
from hookline.resume import Approval
from hookline.server.deps import DepsContext, apply_deps
from hookline.server.hub import Subscription
from hookline.server.routes import ServerContext
from hookline.server.runs import RunChannel, prompt_request, resume_request
from hookline.server.sse import KEEPALIVE
from hookline.sessions import Session

__all__ = [
    "ProtocolError", "RunEvents", "Translator", "Turn", "failure_of", "frames", "join", "open_session",
    "paused_call", "start",
]


class ProtocolError(HooklineError):
    """A request a protocol cannot take: `status` and a message that says what to send instead.

    Each protocol answers it in its own error form (a JSON-RPC error, a plain HTTP error).
    """

    def __init__(self, message: str, *, status: int = 422, code: str = "invalid_request") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass(frozen=True, slots=True)
class Turn:
    """What a protocol request asks of a session: a new prompt, or answers to its paused calls."""

    prompt: Message | None = None
    """The new user message to run (None: a resumption)."""
    prompt_id: str | None = None
    """The id its event keeps (the client's own message id), so that the client's copy is known again."""
    approvals: Mapping[str, Approval] | None = None
    """Answers to paused calls, by call id (a resumption)."""


async def open_session(context: ServerContext, session_id: str, user: str) -> Session:
    """The session a protocol names (its thread, chat or context id), created for `user` on first use.

    Raises:
        ProtocolError: `session_id` is not a valid session id (422).
        SessionNotFound: It is another user's (404, as for any route).
    """
    problem = session_id_problem(session_id)
    if problem is not None:
        raise ProtocolError(problem)
    store = context.store
    try:
        return await store.get(session_id, user=user, with_events=False)
    except SessionNotFound:
        try:
            return await store.create(app=context.agent.app, user=user, session_id=session_id)
        except SessionExists:  # taken meanwhile, or another user's
            return await store.get(session_id, user=user, with_events=False)


async def start(
    context: ServerContext, request: Request, user: str, session_id: str, turn: Turn
) -> RunEvents:
    """Start `turn` as a run of the server (deps, audit and busy sessions as for `POST .../runs`), subscribed."""
    action: Literal["run", "resume"]
    if turn.prompt is not None:
        run: PromptRequest = prompt_request(context.agent, context.store, session_id, user, turn.prompt,
                                            prompt_id=turn.prompt_id)
        action = "run"
    else:
        run, action = resume_request(context.agent, context.store, session_id, user, turn.approvals or {}), "resume"
    run = await apply_deps(context.deps, DepsContext(request, user, session_id, action), run)
    channel = context.runs.start(session_id, run)
    return RunEvents(channel, channel.hub.subscribe(), context.keepalive)


async def join(context: ServerContext, session_id: str, after_seq: int) -> tuple[list[Event], RunEvents]:
    """The session's stored events after `after_seq`, and the run going on in it from there (in any process).

    It subscribes before it reads the log (as `GET .../events/stream` does), so each event is
    in one or the other; the `RunEvents` leaves out what the log held, and ends at once when no
    run goes on. A line made live before it joined comes once stored; the deltas of an answer
    going on do not come. Its `outcome()` is known only for a run of this process (else
    `(None, None)`).
    """
    hub, channel = context.runs.hub(session_id), context.runs.get(session_id)
    if channel is None and await context.relay.run_active(session_id):
        hub.run_started()
    subscription = hub.subscribe()
    try:
        stored = await context.store.events(session_id, view="all", after_seq=after_seq)
    except BaseException:
        subscription.close()
        raise
    if not subscription.closed and context.runs.get(session_id) is None:
        context.relay.watch(hub, stored)
    last = max((e.seq or 0 for e in stored), default=after_seq)
    return stored, RunEvents(channel, subscription, context.keepalive, after_seq=last,
                             known={e.id for e in stored if e.id is not None})


class RunEvents:
    """One run as a protocol reads it (started here, or joined in any process): each event once, in order, to its end.

    Markers and partial events are left out; so is the stored copy of an event read live, and,
    for a reader that joined a run going on (`join`), every event up to `after_seq` and the
    live ones whose id is `known` (it read them from the log).
    """

    def __init__(
        self, channel: RunChannel | None, subscription: Subscription, keepalive: float, *, after_seq: int = 0,
        known: set[str] | None = None,
    ) -> None:
        self.channel = channel
        self._subscription = subscription
        self._keepalive = keepalive
        self._after = after_seq
        self._known = known or set()

    @property
    def session_id(self) -> str:
        """The run's session."""
        return self._subscription.hub.session_id

    async def events(self) -> AsyncGenerator[Event | None]:
        """The run's events; None when none came for `keepalive` seconds (a front end's keepalive)."""
        seen_live: set[str] = set(self._known)
        try:
            while True:
                try:
                    event = await self._subscription.get(self._keepalive)
                except TimeoutError:
                    yield None
                    continue
                if event is None:
                    return
                if event.kind == "marker" or event.partial:
                    continue
                if event.seq is None:
                    if event.id is not None and event.kind != "delta":
                        if event.id in seen_live:
                            continue
                        seen_live.add(event.id)
                elif event.seq <= self._after:
                    continue
                elif event.id in seen_live:
                    seen_live.discard(event.id)
                    continue
                yield event
        finally:
            self._subscription.close()

    def close(self) -> None:
        """Stop reading the run (its subscription ends), whether or not `events()` was read."""
        self._subscription.close()

    async def outcome(self) -> tuple[RunResult | None, BaseException | None]:
        """How the run ended: its result, or its error (both None for a run of another process)."""
        if self.channel is None:
            return None, None
        await self.channel.ended()
        return self.channel.result, self.channel.error


class Translator(ABC):
    """Turns one run's events into one protocol's frames (JSON-able values; the protocol encodes them)."""

    def opening(self) -> list[Any]:
        """The frames before the run's first event (none by default)."""
        return []

    @abstractmethod
    def event(self, event: Event) -> list[Any]:
        """The frames of one event of the run."""

    @abstractmethod
    def closing(self, result: RunResult | None, error: BaseException | None) -> list[Any]:
        """The frames after the run's last event, from how it ended."""


async def frames(run: RunEvents, translator: Translator, encode: Callable[[Any], bytes]) -> AsyncIterator[bytes]:
    """The encoded frames of `run` through `translator`, with `: keepalive` comments while it is quiet."""
    for frame in translator.opening():
        yield encode(frame)
    async for event in run.events():
        if event is None:
            yield KEEPALIVE
            continue
        for frame in translator.event(event):
            yield encode(frame)
    result, error = await run.outcome()
    for frame in translator.closing(result, error):
        yield encode(frame)


def paused_call(event: Event) -> Interruption | None:
    """The call a status event says the run paused for approval (its `metadata["interrupted"]`), or None."""
    paused = event.metadata.get("interrupted") if event.kind in ("status", "marker") else None
    return Interruption.model_validate(paused) if isinstance(paused, dict) else None


def failure_of(event: Event) -> dict[str, Any] | None:
    """The error body a status event reports a failed run with (`metadata["error"]`), or None."""
    error = event.metadata.get("error") if event.kind == "status" else None
    return error if isinstance(error, dict) else None
