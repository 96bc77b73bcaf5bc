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
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from starlette.requests import Request

from hookline._ids import session_id_problem
from hookline.agent import PromptRequest, RunResult
from hookline.errors import SessionExists, SessionNotFound
from hookline.events import Event
from hookline.messages import DocumentPart, Message
from hookline.result import Interruption
from hookline.resume import Approval
from hookline.server.deps import DepsContext, apply_deps
from hookline.server.errors import ProtocolError
from hookline.server.hub import Subscription
from hookline.server.routes import ServerContext
from hookline.server.runs import RunChannel, prompt_request, resume_request
from hookline.server.sse import KEEPALIVE
from hookline.sessions import Session

__all__ = [
    "ProtocolError", "RunEvents", "Translator", "Turn", "failure_of", "frames", "open_session", "paused_call",
    "start",
]


@dataclass(frozen=True, slots=True)
class Turn:
    """What a protocol request asks of a session: a new prompt, or answers to its paused calls."""

    prompt: Message | None = None
    """The new user message to run (None: a resumption)."""
    prompt_id: str | None = None
    """The id its event keeps (the client's own message id), so that the client's copy is known again."""
    approvals: Mapping[str, Approval] | None = None
    """Answers to paused calls, by call id (a resumption)."""
    documents: tuple[DocumentPart, ...] = ()
    """Documents the model gets for this run only (never stored)."""


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
                                            turn.documents, prompt_id=turn.prompt_id)
        action = "run"
    else:
        run, action = resume_request(context.agent, context.store, session_id, user, turn.approvals or {}), "resume"
    run = await apply_deps(context.deps, DepsContext(request, user, session_id, action), run)
    channel = context.runs.start(session_id, run)
    return RunEvents(channel, channel.hub.subscribe(), context.keepalive)


class RunEvents:
    """One run of this process as a protocol reads it: each event once, in the log's order, until the run ends.

    Markers and partial events are left out; so is the stored copy of an event read live.
    """

    def __init__(self, channel: RunChannel, subscription: Subscription, keepalive: float) -> None:
        self.channel = channel
        self._subscription = subscription
        self._keepalive = keepalive

    @property
    def session_id(self) -> str:
        """The run's session."""
        return self.channel.session_id

    async def check_started(self) -> None:
        """Wait for the run's first event; raise its error if it failed before any (busy: a plain 409)."""
        await self.channel.started()
        if self.channel.published == 0 and self.channel.error is not None:
            self._subscription.close()
            raise self.channel.error

    async def events(self) -> AsyncIterator[Event | None]:
        """The run's events; None when none came for `keepalive` seconds (a front end's keepalive)."""
        seen_live: set[str] = set()
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
                        seen_live.add(event.id)
                elif event.id in seen_live:
                    seen_live.discard(event.id)
                    continue
                yield event
        finally:
            self._subscription.close()

    async def outcome(self) -> tuple[RunResult | None, BaseException | None]:
        """How the run ended: its result, or its error."""
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
    async def closing(self, result: RunResult | None, error: BaseException | None) -> list[Any]:
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
    for frame in await translator.closing(result, error):
        yield encode(frame)


def paused_call(event: Event) -> Interruption | None:
    """The call a status event says the run paused for approval (its `metadata["interrupted"]`), or None."""
    paused = event.metadata.get("interrupted") if event.kind in ("status", "marker") else None
    return Interruption.model_validate(paused) if isinstance(paused, dict) else None


def failure_of(event: Event) -> dict[str, Any] | None:
    """The error body a status event reports a failed run with (`metadata["error"]`), or None."""
    error = event.metadata.get("error") if event.kind == "status" else None
    return error if isinstance(error, dict) else None
