"""Runs with ids: background runs, webhooks, and what a run does when its session is busy.

A run gets an id when its request asks for more than its answer (`RunBody.service()`):
`"background": true` (202 with the id as soon as the run's first event is stored, so any
process can tell of it; `GET /v1/runs/{run_id}` tells its state and result), a `"webhook"`
(the outcome POSTed there, signed: `webhooks.py`), or an `"if_busy"` other than `"reject"`.
Its id names its session (`"<session id>~<hex>"`), and every event it writes carries the id
(`metadata["run_id"]`, `hookline.sessions._tagged`), so any process sharing the store answers
`GET /v1/runs/{run_id}` from the log; the process running it answers from memory, with its
whole `RunResult` and its webhook's delivery.

When a run goes on in the session, here or in another process:

- `reject`: 409 `busy`, as a run without an id;
- `enqueue`: the run waits in this process's queue of the session (FIFO, at most
  `queue_limit`; a full queue answers 409) until the session is free, then starts;
- `interrupt`: the current run is cancelled (wherever it runs) and this one goes first;
- `rollback`: the same, and once the cancelled run has ended, its events (the last run of
  the log, from its prompt to its end) are left out of what the model sees
  (`SessionStore.roll_back`); they stay in the log, marked.

A queued run is on record at once: a marker (`metadata["run_queued"]`) in the session's log.
The queues live in the process that took the requests: a server that stops drops its
queued runs (each ends `cancelled`). Processes do not share one queue: each starts its own
when it finds the session free, in its own order.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import Counter, OrderedDict, deque
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from starlette.responses import Response

from hookline.agent import PromptRequest
from hookline.errors import HooklineError, SessionBusy, SessionNotFound
from hookline.events import Event, run_end
from hookline.result import RunResult
from hookline.server.auth import current_user
from hookline.server.errors import error_body, error_response, json_response
from hookline.server.log_window import last_run_bounds
from hookline.server.media import without_stored_bytes
from hookline.server.routes import RunBuilder, ServerContext, stream_channel
from hookline.server.run_schemas import RunAccepted, RunInfo, RunState, WebhookOutcome
from hookline.server.runs import RunChannel
from hookline.server.schemas import ErrorBody, IfBusy, RunBody
from hookline.server.webhooks import Webhooks, WebhookSender, check_webhook_url
from hookline.sessions import SessionStore, pages_back
from hookline.sessions._tagged import TaggedStore

__all__ = ["RUN_KEY", "BackgroundRuns", "RunRecord", "new_run_id", "run_store", "runs_api"]

logger = logging.getLogger("hookline.server")

RUN_KEY = "run_id"
"""The metadata key of the id of the run that wrote an event."""

_SEPARATOR = "~"  # never in a session id (`hookline._ids`): a run id splits at its last one
_FREE_POLL = (0.02, 0.5)  # seconds between checks that another process's run let the session go: first, most
_QUEUE_FULL = "its queue of runs is full ({} waiting); try again later"
_ENDED_STATES: dict[str | None, RunState] = {"interrupted": "interrupted", "cancelled": "cancelled", "failed": "failed"}


def new_run_id(session_id: str) -> str:
    """A fresh id for a run of `session_id`."""
    return f"{session_id}{_SEPARATOR}{os.urandom(8).hex()}"


def session_of(run_id: str) -> str | None:
    """The session a run id names, or None if it names none."""
    session_id, found, suffix = run_id.rpartition(_SEPARATOR)
    return session_id if found and session_id and suffix else None


def run_store(store: SessionStore, run_id: str) -> TaggedStore:
    """The view of `store` through which the run `run_id` writes: each event tagged with its id."""
    return TaggedStore(store, RUN_KEY, run_id)


@dataclass
class RunRecord:
    """A run with an id, in the process that took its request."""

    run_id: str
    session_id: str
    if_busy: IfBusy = "reject"
    state: RunState = "queued"
    channel: RunChannel | None = None
    result: RunResult | None = None
    error: BaseException | None = None
    rolled_back: bool = False
    webhook_url: str | None = None
    webhook: WebhookOutcome | None = None
    started: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the run started, or ended without starting (a queue dropped at shutdown)."""

    def info(self) -> RunInfo:
        """What `GET /v1/runs/{run_id}` answers."""
        error = error_body(self.error)[1] if self.error is not None else None
        result = without_stored_bytes(self.result) if self.result is not None else None
        return RunInfo(run_id=self.run_id, session_id=self.session_id, state=self.state, result=result, error=error,
                       rolled_back=self.rolled_back, webhook=self.webhook)


@dataclass
class _Queued:
    record: RunRecord
    run: PromptRequest


class BackgroundRuns:
    """The runs with ids of one server process: their records, the sessions' queues, the webhooks.

    Args:
        context: The routes' context (the store, the runs going on, the relay to other processes).
        webhooks: How webhooks are signed and sent.
        queue_limit: Runs that may wait in one session's queue.
        keep: Records of ended runs kept in memory (the oldest go first; the log still answers for them).

    """

    def __init__(self, context: ServerContext, webhooks: Webhooks, *, queue_limit: int = 16,
                 keep: int = 10_000) -> None:
        self.context = context
        self.webhooks = webhooks
        self.queue_limit = queue_limit
        self._keep = keep
        self._records: OrderedDict[str, RunRecord] = OrderedDict()
        self._queues: dict[str, deque[_Queued]] = {}
        self._drainers: dict[str, asyncio.Task[None]] = {}
        self._watchers: set[asyncio.Task[None]] = set()
        self._freed: dict[str, asyncio.Event] = {}
        self._sender = WebhookSender(webhooks, self._note)
        context.runs.when_finished(self._session_freed)

    def queued(self) -> int:
        """Runs waiting in this process's session queues."""
        return sum(len(queue) for queue in self._queues.values())

    def webhook_results(self) -> Counter[str]:
        """Webhook attempts so far, by result."""
        return self._sender.results

    def record(self, run_id: str) -> RunRecord | None:
        """The record of a run this process took, if it still keeps it."""
        return self._records.get(run_id)

    async def take(self, session_id: str, user: str, body: RunBody, build: RunBuilder, *, sse: bool) -> Response:
        """Give the run an id, check its session's owner and its webhook, then start or queue it."""
        if body.webhook is not None:  # before anything is written: a webhook this server will not call is a 400
            check_webhook_url(body.webhook, self.webhooks)
        await self.context.store.get(session_id, user=user, with_events=False)  # another user's: 404, busy or not
        run_id = new_run_id(session_id)
        run = await build(run_store(self.context.store, run_id))
        record = RunRecord(run_id, session_id, if_busy=body.if_busy, webhook_url=body.webhook,
                           webhook=WebhookOutcome() if body.webhook is not None else None)
        return await self.submit(record, run, background=body.background, sse=sse)

    async def submit(self, record: RunRecord, run: PromptRequest, *, background: bool, sse: bool) -> Response:
        """Start `run` now, or queue it behind the session's current run; answer as its request asked."""
        session_id = record.session_id
        self._keep_record(record)
        if record.if_busy == "reject" or not await self._busy(session_id):
            self._start(record, run)  # SessionBusy here is the request's 409
        else:
            await self._queue(record, run)
        if background:
            if record.channel is not None:  # started: its id is answered once another process can find it
                await record.channel.recorded()
            return json_response(RunAccepted(run_id=record.run_id, session_id=session_id, state=record.state,
                                             url=f"/v1/runs/{record.run_id}"), 202)
        await record.started.wait()
        if record.channel is None:  # dropped from its queue before it started
            raise HooklineError("the server stopped before the queued run started")
        return await _answer(record.channel, sse, self.context.keepalive)

    async def _busy(self, session_id: str) -> bool:
        return bool(self._queues.get(session_id)) or await self.context.relay.run_active(session_id)

    def _start(self, record: RunRecord, run: PromptRequest) -> RunChannel:
        channel = self.context.runs.start(record.session_id, run)
        record.channel, record.state = channel, "running"
        record.started.set()
        self._watch(self._finish(record, channel))
        return channel

    async def _queue(self, record: RunRecord, run: PromptRequest) -> None:
        queue = self._queues.setdefault(record.session_id, deque())
        if len(queue) >= self.queue_limit:
            self._records.pop(record.run_id, None)
            raise SessionBusy(record.session_id, _QUEUE_FULL.format(len(queue)))
        ahead = record.if_busy in ("interrupt", "rollback")
        (queue.appendleft if ahead else queue.append)(_Queued(record, run))
        store = run_store(self.context.store, record.run_id)
        await store.append_event(record.session_id, Event.marker("server", run_queued=True, if_busy=record.if_busy))
        if ahead:
            await self.context.relay.cancel(record.session_id)
        if record.session_id not in self._drainers:
            task = asyncio.create_task(self._drain(record.session_id), name=f"hookline-queue-{record.session_id}")
            self._drainers[record.session_id] = task

    async def _drain(self, session_id: str) -> None:
        """Start the session's queued runs one after another, each once the session is free."""
        queue = self._queues[session_id]
        try:
            while queue:
                await self._until_free(session_id)
                item = queue[0]
                if item.record.if_busy == "rollback":
                    await self._roll_back_last_run(session_id)
                if await self._started(item):
                    queue.popleft()
        except Exception:  # the store failed: the queued runs cannot start
            logger.exception("the queue of session %s stopped", session_id)
            self._drop(session_id, "cancelled")
        finally:
            self._drainers.pop(session_id, None)
            if not queue:
                self._queues.pop(session_id, None)

    async def _started(self, item: _Queued) -> bool:
        """Start a queued run; False when another process took the session first (it waits again)."""
        if self.context.runs.get(item.record.session_id) is not None:
            return False
        channel = self._start(item.record, item.run)
        await channel.started()
        if channel.published == 0 and isinstance(channel.error, SessionBusy):
            item.record.state, item.record.channel = "queued", None  # the request runs anew (a new `Run`)
            item.record.started.clear()
            return False
        return True

    async def _until_free(self, session_id: str) -> None:
        delay = _FREE_POLL[0]
        try:
            while self.context.runs.get(session_id) is not None or await self.context.relay.run_active(session_id):
                freed = self._freed.setdefault(session_id, asyncio.Event())
                freed.clear()
                try:
                    async with asyncio.timeout(delay):
                        await freed.wait()
                except TimeoutError:
                    delay = min(delay * 2, _FREE_POLL[1])
        finally:
            self._freed.pop(session_id, None)

    def _session_freed(self, session_id: str) -> None:
        freed = self._freed.get(session_id)
        if freed is not None:
            freed.set()

    async def _roll_back_last_run(self, session_id: str) -> None:
        """Leave the log's last run (the one cancelled for this run) out of the prompt view."""
        bounds = await last_run_bounds(self.context.store, session_id)
        if bounds is None:
            return
        after, end = bounds
        await self.context.store.roll_back(session_id, after_seq=after, through_seq=end.seq or 0)
        cancelled = self._records.get(str(end.metadata.get(RUN_KEY)))  # a run with an id of this process
        if cancelled is not None:
            cancelled.rolled_back = True

    async def _finish(self, record: RunRecord, channel: RunChannel) -> None:
        try:
            record.result = await channel.outcome()
        except Exception as exc:
            record.error = exc
        record.state = _state_of(record.result, record.error)
        if record.webhook_url is not None and record.webhook is not None:
            body = record.info().model_dump_json(exclude={"webhook"}).encode()
            self._sender.send(record.webhook_url, record.session_id, record.run_id, body, record.webhook)

    def _keep_record(self, record: RunRecord) -> None:
        self._records[record.run_id] = record
        while len(self._records) > self._keep:
            oldest = next(iter(self._records.values()))
            if oldest.state in ("queued", "running"):
                break
            self._records.popitem(last=False)

    def _watch(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._watchers.add(task)
        task.add_done_callback(self._watchers.discard)

    def _drop(self, session_id: str, state: RunState) -> None:
        for item in self._queues.pop(session_id, deque()):
            item.record.state = state
            item.record.started.set()

    async def _note(self, session_id: str, event: Event) -> None:
        await self.context.store.append_event(session_id, event)

    def stop_queues(self) -> None:
        """The server stops: queued runs end `cancelled`, never started."""
        for task in list(self._drainers.values()):
            task.cancel()
        for session_id in list(self._queues):
            self._drop(session_id, "cancelled")

    async def aclose(self, grace: float) -> None:
        """After the runs: their outcomes are recorded, and webhooks in flight get `grace` s."""
        self.stop_queues()
        if self._watchers:
            await asyncio.wait(set(self._watchers), timeout=grace)
        await self._sender.aclose(grace)


def _state_of(result: RunResult | None, error: BaseException | None) -> RunState:
    if error is not None or result is None:
        return "failed"
    return _ENDED_STATES.get(result.stop_reason, "completed")


async def _answer(channel: RunChannel, sse: bool, keepalive: float) -> Response:
    if sse:
        return await stream_channel(channel, keepalive)
    return json_response(without_stored_bytes(await channel.outcome()))


# -- GET /v1/runs/{run_id} ---------------------------------------------------------------------

runs_api = APIRouter(prefix="/v1", tags=["runs"])

RunId = Annotated[str, Path(description="The run's id, as its 202 answer gave it")]
User = Annotated[str, Depends(current_user)]


@runs_api.get("/runs/{run_id}", response_model=RunInfo,
              responses={code: {"model": ErrorBody} for code in (401, 404, 503)})
async def get_run(request: Request, user: User, run_id: RunId) -> Response:
    """A run with an id: its state, and once it ended its result (404 for another user's run, as for none)."""
    context: ServerContext = request.app.state.hookline
    background: BackgroundRuns = request.app.state.background
    session_id = session_of(run_id)
    if session_id is None:
        return _no_run(run_id)
    try:
        await context.store.get(session_id, user=user, with_events=False)
    except SessionNotFound:
        return _no_run(run_id)
    record = background.record(run_id)
    if record is not None:
        return json_response(record.info())
    mine = await _events_of_run(context.store, session_id, run_id)
    info = log_info(run_id, session_id, mine, await context.relay.run_active(session_id))
    return json_response(info) if info is not None else _no_run(run_id)


async def _events_of_run(store: SessionStore, session_id: str, run_id: str) -> list[Event]:
    """The events of the log that name run `run_id`, in log order, read back from the log's end a page at a time.

    Runs of a session follow one another, so the reading stops at the end of the run before it
    once it has seen the run begin, or at its `run_queued` marker (its first event, if any).
    """
    mine: list[Event] = []  # newest first
    async for page in pages_back(store, session_id):
        for event in reversed(page):
            if event.metadata.get(RUN_KEY) == run_id:
                mine.append(event)
                if event.metadata.get("run_queued"):
                    return mine[::-1]
            elif mine and run_end(event) is not None:
                return mine[::-1]
    return mine[::-1]


def _no_run(run_id: str) -> Response:
    return error_response(ErrorBody(error="not_found", message=f"run {run_id!r} not found"), 404)


def log_info(run_id: str, session_id: str, events: list[Event], active: bool) -> RunInfo | None:
    """A run's state as its session's log tells it (a run of another process); None if `events` have none of it.

    `events`: the log, or those of its events that name the run.
    """
    mine = [e for e in events if e.metadata.get(RUN_KEY) == run_id]
    if not mine:
        return None
    began = [e for e in mine if not e.metadata.get("run_queued")]
    info = RunInfo(run_id=run_id, session_id=session_id, state="queued",
                   rolled_back=any(e.metadata.get("rolled_back") for e in began))
    end = next((e for e in reversed(mine) if run_end(e) is not None), None)
    if end is not None:
        ended = run_end(end)
        info.state = _ENDED_STATES.get(ended, "completed")
        answers = [e for e in mine if e.kind == "message" and e.role == "assistant"]
        stop = "completed" if ended in ("failed", None) else ended
        info.result = RunResult(output=answers[-1].text if answers else "", stop_reason=stop, session_id=session_id)
        if ended == "failed":
            info.error = ErrorBody(error="run_failed", message=end.text)
    elif began:
        info.state = "running" if active else "failed"
        if not active:
            info.error = ErrorBody(error="run_lost", message="the process running it ended before the run did")
    return info
