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
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from starlette.requests import Request

from hookline._ids import session_id_problem
from hookline._run.resume import Approval
from hookline.agent import PromptRequest, RunResult
from hookline.errors import SessionExists, SessionNotFound
from hookline.events import Event
from hookline.messages import DocumentPart, Message, ToolCallPart, ToolResultPart
from hookline.models import ToolSpec
from hookline.result import Interruption
from hookline.server.deps import DepsContext, apply_deps
from hookline.server.errors import ProtocolError
from hookline.server.hub import Subscription, covers_deltas
from hookline.server.routes import ServerContext
from hookline.server.runs import RunChannel, prompt_request, resume_request
from hookline.server.sse import KEEPALIVE
from hookline.sessions import Session
from hookline.tools import Tool, current_context, error_result, result_of

__all__ = [
    "FrontendTool", "ProtocolError", "RunEvents", "Translator", "Turn", "denied_call", "failure_of", "frames", "join",
    "open_session", "paused_call", "start",
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
    tools: tuple[Tool, ...] = ()
    """Tools offered for this run only (a client's own: `FrontendTool`)."""


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
    if turn.tools:
        run.tools(*turn.tools)
    run = await apply_deps(context.deps, DepsContext(request, user, session_id, action), run)
    channel = context.runs.start(session_id, run)
    return RunEvents(channel, channel.hub.subscribe(), context.keepalive)


class RunEvents:
    """One run as a protocol reads it (started here, or joined in any process): each event once, in order, to its end.

    Markers and partial events are left out; so is the stored copy of an event read live, and
    a stored event at or before the last seq read (`after_seq`, for a reader that read the log
    first: `join`). A run of this process has its `channel` (its outcome); one joined from
    elsewhere has none.
    """

    def __init__(
        self, channel: RunChannel | None, subscription: Subscription, keepalive: float, *,
        first: Sequence[Event] = (), after_seq: int = 0, known: set[str] | None = None,
    ) -> None:
        self.channel = channel
        self._subscription = subscription
        self._keepalive = keepalive
        self._first = first
        self._after = after_seq
        self._known = known or set()

    @property
    def session_id(self) -> str:
        """The run's session."""
        return self._subscription.hub.session_id

    @property
    def going_on(self) -> bool:
        """Whether a run went on when it was read (else `events()` ends at once)."""
        return not self._subscription.closed

    async def check_started(self) -> None:
        """Wait for the run's first event; raise its error if it failed before any (busy: a plain 409)."""
        if self.channel is None:
            return
        await self.channel.started()
        if self.channel.published == 0 and self.channel.error is not None:
            self._subscription.close()
            raise self.channel.error

    async def events(self) -> AsyncGenerator[Event | None]:
        """The run's events; None when none came for `keepalive` seconds (a front end's keepalive)."""
        seen_live, last = set(self._known), self._after
        try:
            for event in self._first:
                if self._fresh(event, seen_live, last):
                    last = max(last, event.seq or 0)
                    yield event
            while True:
                try:
                    came = await self._subscription.get(self._keepalive)
                except TimeoutError:
                    yield None
                    continue
                if came is None:
                    return
                if self._fresh(came, seen_live, last):
                    last = max(last, came.seq or 0)
                    yield came
        finally:
            self._subscription.close()

    @staticmethod
    def _fresh(event: Event, seen_live: set[str], last: int) -> bool:
        """Whether `event` is one to read (noting a live one, to know its stored copy again)."""
        if event.kind == "marker" or event.partial:
            return False
        if event.seq is None:
            if event.id is not None and event.kind != "delta":
                if event.id in seen_live:
                    return False
                seen_live.add(event.id)
            return True
        if event.seq <= last:
            return False
        if event.id in seen_live:
            seen_live.discard(event.id)
            return False
        return True

    def close(self) -> None:
        """Stop reading the run (its subscription ends), whether or not `events()` was read."""
        self._subscription.close()

    async def outcome(self) -> tuple[RunResult | None, BaseException | None]:
        """How the run ended, for a run of this process: its result, or its error (else None, None)."""
        if self.channel is None:
            return None, None
        await self.channel.ended()
        return self.channel.result, self.channel.error


async def join(
    context: ServerContext, session_id: str, after_seq: int, *, replay: bool = False
) -> tuple[list[Event], RunEvents]:
    """The session's stored events after `after_seq`, and the run going on in it from there (in any process).

    It subscribes before it reads the log (as `GET .../events/stream` does), so each event is
    in one or the other. The `RunEvents` starts with the live events not stored yet (the
    deltas of the answer going on, from its first: a reader rebuilds it), and with `replay`
    with the stored ones too; it ends at once when no run goes on (`going_on`).
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
    answered = any(covers_deltas(e) and (e.seq or 0) > subscription.tail_after for e in stored)
    held = {e.id for e in stored if e.id is not None}
    tail = [e for e in subscription.tail if e.id not in held and not (answered and e.kind == "delta")]
    last = max((e.seq or 0 for e in stored), default=after_seq)
    first = [*stored, *tail] if replay else tail
    return stored, RunEvents(channel, subscription, context.keepalive, first=first,
                             after_seq=after_seq if replay else last, known=None if replay else held)


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


class FrontendTool(Tool):
    """A tool the client runs (AG-UI's frontend tools): its call pauses the run; the client's result answers it.

    The model sees the client's schema; when it calls the tool, the call is not run here: the
    run stops with the call paused (a question, `RunContext.ask`), and the next request carries
    the result, given back as the call's reply (`{"response": result}`), which the call returns.
    A client that reports the call failed puts its error in `failed` first: the result is then
    an error with that text.

    Args:
        name: The tool's name.
        description: What it does, for the model.
        parameters: The JSON schema of its arguments.

    Attributes:
        failed: The error texts of the calls the client failed to run, by call id.
    """

    ANSWER_SCHEMA: ClassVar[dict[str, Any]] = {"description": "the call's result, as the client ran it"}

    def __init__(self, name: str, description: str, parameters: dict[str, Any]) -> None:
        # Not Tool.__init__: that builds a schema from a Python signature; a client brings its own.
        self.name, self.description, self.parameters = name, description, parameters
        self.function = self._unused
        self._is_async, self._thread, self.inline = True, False, False
        self._spec = ToolSpec(name=name, description=description, parameters=parameters)
        self.failed: dict[str, str] = {}

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments as they are: the client checks them against its schema."""
        return dict(arguments)

    async def answer(self, call: ToolCallPart, values: dict[str, Any] | None = None) -> ToolResultPart:
        """The client's result when the run resumes with it; else the run pauses at this call."""
        context = current_context(call)
        reply = context.reply if context is not None else None
        if reply is not None and call.id in self.failed:
            return error_result(call, self.failed[call.id])
        if reply is not None and reply.action == "accept":
            return result_of(call, reply.content, self.name)
        if reply is not None:
            return error_result(call, f"the client did not run {self.name}")
        if context is None:
            return error_result(call, f"{self.name} runs in the client, which only a run with a session can ask")
        context.ask(f"run {self.name} in the client", self.ANSWER_SCHEMA)
        return error_result(call, "waiting for the client")

    @staticmethod
    async def _unused(**arguments: Any) -> None:
        """Never called: `answer` is the tool's own."""


def paused_call(event: Event) -> Interruption | None:
    """The call a status event says the run paused for approval (its `metadata["interrupted"]`), or None."""
    paused = event.metadata.get("interrupted") if event.kind in ("status", "marker") else None
    return Interruption.model_validate(paused) if isinstance(paused, dict) else None


def denied_call(event: Event) -> str | None:
    """The call a resume's audit line says the user denied (`metadata["approval"]`), or None."""
    approval = event.metadata.get("approval") if event.kind == "status" else None
    if isinstance(approval, dict) and approval.get("decision") == "denied":
        return str(approval.get("call_id"))
    return None


def failure_of(event: Event) -> dict[str, Any] | None:
    """The error body a status event reports a failed run with (`metadata["error"]`), or None."""
    error = event.metadata.get("error") if event.kind == "status" else None
    return error if isinstance(error, dict) else None
