"""Runs that outlive their requests, and the hubs that hand their events to SSE clients.

A run started over HTTP runs in a task of the server, not of the request: a client that
disconnects leaves it running and recording. Its events go through its session's
`SessionHub` (`hub.py`), which hands each one to every `Subscription` (one per SSE
response): live ones as they are made, stored ones once on record. The loop stores an
event before it publishes the stored copy, so a client that joins late (a reconnect with
`Last-Event-ID`) subscribes first and reads the store's log second: every event is in one
or the other, and the overlap is dropped by `seq`. A `RunChannel` holds one run's outcome.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence

from hookline._run.resume import Approval
from hookline.agent import Agent, PromptRequest, RunResult
from hookline.errors import HooklineError, MaxTurnsExceeded, SessionBusy
from hookline.events import Event
from hookline.messages import DocumentPart, Message
from hookline.server.audit import approval_audit
from hookline.server.errors import ProtocolError, RunCrashed, error_body
from hookline.server.hub import SessionHub
from hookline.sessions import SessionStore

__all__ = ["RunChannel", "RunManager", "failure_event", "prompt_request", "resume_request"]

_DRAINING = "this server is stopping and takes no new run; send it to another server (Retry-After)"

logger = logging.getLogger("hookline.server")

_RETRY_CANCEL = 0.005  # seconds between tries to cancel a run that has not begun yet


class RunChannel:
    """One run of this process: its session's hub, how many events it published, and its outcome."""

    def __init__(self, hub: SessionHub) -> None:
        self.hub = hub
        self.session_id = hub.session_id
        self.started_at = time.monotonic()
        """When the run was started (`time.monotonic()`)."""
        self.finished_at = 0.0
        """When it ended (`time.monotonic()`; 0 until then)."""
        self.published = 0
        """How many events the run published so far."""
        self.result: RunResult | None = None
        self.error: BaseException | None = None
        self._started = asyncio.Event()
        self._recorded = asyncio.Event()
        self._finished = asyncio.Event()

    @property
    def finished(self) -> bool:
        """Whether the run has ended."""
        return self._finished.is_set()

    def publish(self, event: Event) -> None:
        """Hand `event` to the session's readers."""
        self.published += 1
        self.hub.publish(event)
        self._started.set()
        if event.seq is not None:
            self._recorded.set()

    def finish(self, result: RunResult | None = None, error: BaseException | None = None) -> None:
        """Record the outcome; the readers bound to the run end."""
        self.result, self.error = result, error
        self.finished_at = time.monotonic()
        self._finished.set()
        self._started.set()
        self._recorded.set()
        self.hub.run_ended()

    async def started(self) -> None:
        """Wait until the first event is published or the run has ended."""
        await self._started.wait()

    async def recorded(self) -> None:
        """Wait until the run's first event is stored (so any process sharing the store can tell of it) or it ended."""
        await self._recorded.wait()

    async def ended(self) -> None:
        """Wait until the run has ended (its `result` or `error` is set)."""
        await self._finished.wait()

    async def outcome(self) -> RunResult:
        """Wait for the run to end; return its result or raise its error."""
        await self._finished.wait()
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


class RunManager:
    """The runs of one server process: at most one per session, each in its own task.

    Args:
        subscriber_limit: Events a subscriber may fall behind before it is cut off.
        grace: Seconds `aclose` lets running runs finish before cancelling them, and then
            gives the cancelled ones to stop (a run that ignores cancellation is left behind).

    """

    def __init__(self, *, subscriber_limit: int = 10_000, grace: float = 10.0) -> None:
        self._active: dict[str, RunChannel] = {}
        self._hubs: dict[str, SessionHub] = {}
        self._requests: dict[str, PromptRequest] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._limit = subscriber_limit
        self._grace = grace
        self._cancelling: set[str] = set()
        self._on_start: list[Callable[[str], None]] = []
        self._on_idle: list[Callable[[SessionHub], None]] = []
        self._on_finish: list[Callable[[str], None]] = []
        self._on_end: list[Callable[[RunChannel], None]] = []
        self._on_close: list[Callable[[], None]] = []
        self._closing = False

    @property
    def subscriber_limit(self) -> int:
        """Events a subscriber may fall behind before it is cut off."""
        return self._limit

    def get(self, session_id: str) -> RunChannel | None:
        """Return the channel of the run going on in `session_id`, if any."""
        return self._active.get(session_id)

    def hub(self, session_id: str) -> SessionHub:
        """The hub of `session_id` in this process (a new one if nothing reads it and no run goes on)."""
        hub = self._hubs.get(session_id)
        if hub is None:
            hub = self._hubs[session_id] = SessionHub(session_id, limit=self._limit, on_idle=self._forget)
        return hub

    def known_hub(self, session_id: str) -> SessionHub | None:
        """The hub of `session_id` if one exists (a run goes on, or someone reads it)."""
        return self._hubs.get(session_id)

    def when_idle(self, callback: Callable[[SessionHub], None]) -> None:
        """Call `callback(hub)` each time a hub is forgotten (no run goes on in its session, nobody reads it)."""
        self._on_idle.append(callback)

    def _forget(self, hub: SessionHub) -> None:
        if self._hubs.get(hub.session_id) is hub:
            del self._hubs[hub.session_id]
        for callback in self._on_idle:
            callback(hub)

    def close_session(self, session_id: str) -> None:
        """The session is gone: its readers' streams end."""
        hub = self._hubs.get(session_id)
        if hub is not None:
            hub.close()

    def when_started(self, callback: Callable[[str], None]) -> None:
        """Call `callback(session_id)` each time a run of this process starts (before its first event)."""
        self._on_start.append(callback)

    def when_finished(self, callback: Callable[[str], None]) -> None:
        """Call `callback(session_id)` each time a run of this process has ended (its run lock released)."""
        self._on_finish.append(callback)

    def when_ended(self, callback: Callable[[RunChannel], None]) -> None:
        """Call `callback(channel)` each time a run of this process has ended (its outcome set), e.g. to count it."""
        self._on_end.append(callback)

    @property
    def closing(self) -> bool:
        """Whether `aclose` has begun: the server is stopping (or draining its runs)."""
        return self._closing

    @property
    def running(self) -> int:
        """How many runs go on in this process."""
        return len(self._active)

    def when_closing(self, callback: Callable[[], None]) -> None:
        """Call `callback()` as `aclose` begins (e.g. to end the streams that follow other processes' runs)."""
        self._on_close.append(callback)

    def cancel(self, session_id: str) -> bool:
        """Cancel the run going on in `session_id` in this process; return whether there was one.

        The run ends within moments with `stop_reason == "cancelled"` (see
        `PromptRequest.cancel`). One that has not begun yet is cancelled as soon as it does.
        """
        request = self._requests.get(session_id)
        if request is None:
            return False
        if session_id not in self._cancelling:  # once: a second cancel would hit the run's own ending
            self._cancelling.add(session_id)
            self._cancel_when_begun(session_id, request)
        return True

    def _cancel_when_begun(self, session_id: str, request: PromptRequest) -> None:
        # `PromptRequest.cancel` answers False until the request's task has started its run.
        if self._requests.get(session_id) is request and not request.cancel():
            asyncio.get_running_loop().call_later(_RETRY_CANCEL, self._cancel_when_begun, session_id, request)

    def start(self, session_id: str, request: PromptRequest) -> RunChannel:
        """Stream `request` in a task of its own; `SessionBusy` if this session already runs here.

        Raises:
            ProtocolError: 503 `draining`: the server is stopping (`aclose` began), its runs finishing.
        """
        if self._closing:
            raise ProtocolError(_DRAINING, status=503, code="draining")
        if session_id in self._active:
            raise SessionBusy(session_id, "a run on this server is writing to it")
        hub = self.hub(session_id)
        hub.run_started()
        channel = self._active[session_id] = RunChannel(hub)
        self._requests[session_id] = request
        task = asyncio.create_task(self._drive(channel, request), name=f"hookline-run-{session_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        for callback in self._on_start:
            callback(session_id)
        return channel

    async def _drive(self, channel: RunChannel, request: PromptRequest) -> None:
        result: RunResult | None = None
        error: BaseException | None = None
        try:
            async for event in request.stream(stored_copies=True):
                channel.publish(event)
            result = request.result
        except MaxTurnsExceeded as exc:
            result = exc.result
        except Exception as exc:
            error = _logged(channel.session_id, exc)
            if channel.published:
                channel.publish(failure_event(exc, request.agent.name))
        except asyncio.CancelledError:
            error = HooklineError("the server shut down while the run was going on")
            raise
        finally:
            self._active.pop(channel.session_id, None)
            self._requests.pop(channel.session_id, None)
            self._cancelling.discard(channel.session_id)
            channel.finish(result, error)
            for callback in self._on_finish:
                callback(channel.session_id)
            for ended in self._on_end:
                ended(channel)

    async def aclose(self, grace: float | None = None) -> None:
        """Let running runs finish for up to `grace` s (default: the manager's), cancel the rest, wait as long again.

        A cancelled run ends as `cancel()` ends it: its log and its streams end with "run
        cancelled". One that ignores that is cancelled the hard way and left behind.
        """
        grace = self._grace if grace is None else grace
        self._closing = True
        for callback in self._on_close:
            callback()
        for hub in list(self._hubs.values()):  # followers end now; readers of a run end with it
            hub.close_followers()
        if not self._tasks:
            return
        _, pending = await asyncio.wait(set(self._tasks), timeout=grace)
        if not pending:
            return
        for session_id in list(self._requests):
            self.cancel(session_id)
        _, stuck = await asyncio.wait(pending, timeout=grace)
        for task in stuck:
            logger.warning("%s did not stop when cancelled; the server stops without it", task.get_name())
            task.cancel()


def _logged(session_id: str, exc: Exception) -> Exception:
    """Log a run's failure; return the error its channel keeps (a crash: a `RunCrashed`, logged here only)."""
    if isinstance(exc, HooklineError):
        logger.warning("run on session %s failed: %s", session_id, exc)
        return exc
    logger.error("run on session %s failed", session_id, exc_info=exc)
    crashed = RunCrashed(session_id)
    crashed.__cause__ = exc
    return crashed


def failure_event(exc: BaseException, author: str) -> Event:
    """Build the (never stored) status event telling stream readers that the run failed, and why."""
    status, body = error_body(exc)
    return Event.status(author, "agent", f"run failed: {body.message}", error=body.model_dump(exclude_none=True),
                        http_status=status)


def prompt_request(
    agent: Agent,
    store: SessionStore,
    session_id: str,
    user: str,
    prompt: str | Message,
    documents: Sequence[DocumentPart] = (),
    prompt_id: str | None = None,
) -> PromptRequest:
    """Build a run of `agent` on `prompt` in the session (a second run at once: `SessionBusy` at once).

    `documents` go to the model for this run only (`PromptRequest.documents`): never stored.
    `prompt_id` is the id the prompt's event keeps (a client's own message id).
    """
    request = agent.prompt(prompt).session(session_id, user=user, store=store, wait=0.0, create=False,
                                           prompt_id=prompt_id)
    return request.documents(*documents) if documents else request


def resume_request(
    agent: Agent, store: SessionStore, session_id: str, user: str, approvals: Mapping[str, Approval]
) -> PromptRequest:
    """Build the resumption of an interrupted run in the session, which records who decided what (`audit.py`)."""
    return agent.resume(session_id, approvals, user=user, store=store, wait=0.0, audit=approval_audit(user))
