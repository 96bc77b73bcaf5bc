"""`RunScope`: a run's status lines, what it lends the user code it calls, and that code's way back.

The loop writes its own status lines through `status`. Tools and hooks get their
`RunContext` from here, and what they report comes back through `add`: their status lines
and partial results, the log records they emit (where `StatusOptions` captures them), and
the status events of a sub-agent a tool runs. `add` may be called from a worker thread (a
`@tool(thread=True)`): the event is then handed to the run's event loop, which alone
writes to the `Recorder`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, TypeVar

from hookline._run.recorder import Recorder
from hookline._run.status import LogCapture, current_capture, describe_call, describe_result, install_log_capture
from hookline.context import ChildRuns, RunContext
from hookline.decision import Decision
from hookline.events import Event, StatusOptions
from hookline.hook_points import HookPoint
from hookline.hooks import BoundHook
from hookline.messages import ToolCallPart, ToolResultPart
from hookline.result import Interruption, Reply
from hookline.state import State
from hookline.types import StatusSource

__all__ = ["RunScope"]

_NO_CONTENT: dict[str, Any] = {"type": "object", "properties": {}}
"""The answer schema of a question asked without one: an empty form."""

T = TypeVar("T")

_status = Event.status_line
"""A status event: bound once, since a class attribute of a pydantic model costs a look-up per call. Not
`Event.status(..., **metadata)`: a user's metadata key may be named like that method's parameters."""

_BOOKKEEPING = ("started", "interrupted", "held_message", "error", "run_end", "child_session_id", "model_turn")
"""Metadata of a sub-agent's loop, misleading in the parent's log: its calls' starts and pauses,
its failure (which the parent's tool result reports), its end (the parent's run goes on), the
turns of its model calls and the sessions of its own sub-agents (the parent's children are its
own calls' only)."""


class RunScope:
    """A run's status writer, the contexts it gives its tools and hooks, and the sink of what they report.

    Args:
        recorder: The run's recorder.
        state: The run's live state.
        agent_name: The author of the agent's own status events.
        status: What status the agent writes.
        deps: The run's deps.
    """

    __slots__ = (
        "_inputs", "_loop", "_outputs", "_questions", "_thread", "agent_name", "answers", "deps", "hook_logs",
        "model_logs", "on", "recorder", "replies", "state", "tool_logs", "user",
    )

    def __init__(self, recorder: Recorder, state: State, agent_name: str, status: StatusOptions, deps: Any) -> None:
        self.recorder = recorder
        self.state = state
        self.agent_name = agent_name
        self.deps = deps
        self.user: str | None = None
        """The session's owner, once the session is loaded."""
        self.on: dict[StatusSource, bool] = {s: recorder.active and status.wants(s) for s in ("agent", "llm", "tool")}
        """Which sources of status the run writes (none without a store or a stream)."""
        self.tool_logs = self.on["tool"] and status.tool_logs
        self.hook_logs = self.on["agent"] and status.hook_logs
        self.model_logs = self.on["llm"] and status.model_logs
        self._inputs, self._outputs = status.inputs, status.outputs
        if self.hook_logs or self.model_logs:
            install_log_capture()  # tool logs: the tool runner installs it
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = 0
        self.replies: dict[str, Reply] = {}
        """The user's replies to the questions of the calls this run resumes, by call id."""
        self.answers: dict[str, dict[str, Any]] = {}
        """On resume, the user's answers to calls paused inside sub-agents, by the call of this run that runs each."""
        self._questions: dict[str, Decision] = {}

    def bind(self) -> None:
        """Note the run's event loop and its thread; call it from the run's task."""
        self._loop, self._thread = asyncio.get_running_loop(), threading.get_ident()

    def status(self, source: StatusSource, text: str | Callable[[], str], *, author: str | None = None,
               force: bool = False, **metadata: Any) -> None:
        """Record a status line of the loop; `text` may be a function, so that nobody builds unwanted lines.

        `force`: the loop needs the line's metadata on record (a call's start, a pause); when
        the user switched `source` off, it is stored as a marker, which no front end shows.
        """
        if self.on[source]:
            line = text if isinstance(text, str) else text()
            self.recorder.add(_status(author or self.agent_name, source, line, metadata))
        elif force and self.recorder.store is not None:
            self.recorder.add(Event.marker(author or self.agent_name, **metadata))

    def calling_model(self, turn: int) -> None:
        """"turn 2: calling model": the line before a model call, with the turn as data (agent status on)."""
        self.recorder.add(_status(self.agent_name, "agent", f"turn {turn}: calling model", {"model_turn": turn}))

    def model_answered(self, line: str, facts: dict[str, Any], request: dict[str, Any] | None) -> None:
        """The model's line, "gpt-4o-mini answered: 2 tool calls, 412 tokens, 380 ms", with its facts.

        `facts` go in `metadata["model_call"]`, and the `request`, where recorded, in `metadata["request"]`.
        """
        metadata = {"model_call": facts} if request is None else {"model_call": facts, "request": request}
        self.recorder.add(_status(self.agent_name, "llm", line, metadata))

    def call_started(self, call: ToolCallPart) -> None:
        """"running add(a=1, b=2)": on record before the call runs (a marker when tool status is off)."""
        if self.on["tool"]:
            line = describe_call(call, inputs=self._inputs)
            self.recorder.add(_status(call.name, "tool", line, {"call_id": call.id, "started": True}))
        elif self.recorder.store is not None:
            self.recorder.add(Event.marker(call.name, call_id=call.id, started=True))

    def call_answered(self, result: ToolResultPart) -> None:
        """"add returned 3" (or "add failed: ..."), once the call's result is in the conversation."""
        line = describe_result(result, outputs=self._outputs)
        self.recorder.add(_status(result.name or "tool", "tool", line, {"call_id": result.call_id}))

    def add(self, event: Event) -> None:
        """Record `event`, reported by user code, from any thread: streamed at once, stored at the next flush."""
        if self._loop is not None and threading.get_ident() != self._thread:
            self._loop.call_soon_threadsafe(self.recorder.add_now, event)
        else:
            self.recorder.add_now(event)

    # -- contexts --------------------------------------------------------------------------

    def tool_context(self, call: ToolCallPart) -> RunContext[Any]:
        """The context of one tool call."""
        return RunContext(
            self.deps, state=self.state, session_id=self.state.session_id, user=self.user, call_id=call.id,
            tool_name=call.name, emit=partial(self._tool_status, call) if self.on["tool"] else None,
            forward=partial(self.forward, via=call.id) if self.recorder.active else None,
            reply=self.replies.get(call.id),
            ask=partial(self._ask, call),
            child=partial(self._child_runs, call),
        )

    def _ask(self, call: ToolCallPart, question: str, response_schema: dict[str, Any] | None) -> None:
        schema = response_schema if response_schema is not None else _NO_CONTENT  # accepted or declined, no more
        self._questions[call.id] = Decision("interrupt", reason=question, response_schema=schema)

    def _child_runs(self, call: ToolCallPart) -> ChildRuns:
        return ChildRuns(self.recorder.store, self.user, self.answers.get(call.id, {}), partial(self._pause_on, call),
                         partial(self._link_child, call))

    def _link_child(self, call: ToolCallPart, agent: str, session_id: str, resumed: bool) -> None:
        """"researcher: runs in session s-1.c1": the calling run's side of a child session's link."""
        text = f"{agent}: {'goes on' if resumed else 'runs'} in session {session_id}"
        self.status("agent", text, author=agent, force=True, agent=agent, agent_call_id=call.id,
                    child_session_id=session_id)

    def _pause_on(self, call: ToolCallPart, agent: str, paused: Sequence[Interruption]) -> None:
        """Pause `call` on the paused calls of sub-agent `agent`, listed under ids prefixed with the call's."""
        inner = tuple(
            item.model_copy(update={"call_id": f"{call.id}/{item.call_id}", "agent": item.agent or agent})
            for item in paused
        )
        self._questions[call.id] = Decision("interrupt", reason=f"{agent} awaits a decision", inner=inner)

    def take_questions(self) -> dict[str, Decision]:
        """The calls whose tools asked the user a question (`RunContext.ask`) or whose sub-agents paused, as pauses."""
        questions, self._questions = self._questions, {}
        return questions

    def hook_context(self, hook: str, point: HookPoint) -> RunContext[Any]:
        """The context of one hook call."""
        emit = partial(self._hook_status, hook, point) if self.on["agent"] else None
        return RunContext(self.deps, state=self.state, session_id=self.state.session_id, user=self.user, emit=emit)

    async def call_hook(self, bound: BoundHook, point: HookPoint, *, capture_logs: bool) -> None:
        """Run a hook that takes a `RunContext`, or whose log records are captured."""
        context = None if bound.plan is None else self.hook_context(bound.name, point)
        if capture_logs:
            await self.capturing(partial(self.hook_log, bound.name, point), bound(self.state, context))
        else:
            await bound(self.state, context)

    def _tool_status(self, call: ToolCallPart, text: str, metadata: dict[str, Any]) -> None:
        self.add(_status(call.name, "tool", text, {**metadata, "call_id": call.id}))

    def _hook_status(self, hook: str, point: HookPoint, text: str, metadata: dict[str, Any]) -> None:
        self.add(_status(self.agent_name, "agent", text, {**metadata, "hook": hook, "point": point.value}))

    # -- log records -----------------------------------------------------------------------

    def tool_log(self, call: ToolCallPart, record: logging.LogRecord) -> None:
        """A record a tool's code emitted during `call`: a tool status event of the call."""
        self.add(_status(call.name, "tool", _line(record), {"call_id": call.id, **_origin(record)}))

    def hook_log(self, hook: str, point: HookPoint, record: logging.LogRecord) -> None:
        """A record a hook emitted: an agent status event naming the hook."""
        self.add(_status(self.agent_name, "agent", _line(record), {"hook": hook, "point": point.value,
                                                                    **_origin(record)}))

    def model_log(self, record: logging.LogRecord) -> None:
        """A record emitted during a model call (the adapter, its retries, the SDK): an llm status event."""
        self.add(_status(self.agent_name, "llm", _line(record), _origin(record)))

    @staticmethod
    async def capturing(sink: LogCapture, work: Awaitable[T]) -> T:
        """Await `work`, handing the log records emitted meanwhile (in this context) to `sink`."""
        token = current_capture.set(sink)
        try:
            return await work
        finally:
            current_capture.reset(token)

    # -- sub-agents ------------------------------------------------------------------------

    def forward(self, event: Event, agent: str, via: str | None = None) -> None:
        """A status event of sub-agent `agent` (run by a tool): into this run, tagged with its name.

        Its source and author stay; `metadata["agent"]` names the sub-agent (the innermost one,
        for an agent nested deeper), `metadata["agent_call_id"]` the call of this run that runs
        it (`via`), and its text starts with the name ("researcher: run completed"), so that
        neither a reader nor a front end takes it for this run's own line. The sub-agent
        loop's own bookkeeping is left out.
        """
        if event.kind != "status" or event.source is None or not self.on[event.source]:
            return
        metadata = {k: v for k, v in event.metadata.items() if k not in _BOOKKEEPING}
        metadata.setdefault("agent", agent)
        if via is not None:
            metadata["agent_call_id"] = via
        self.add(_status(event.author, event.source, f"{agent}: {event.text}", metadata))


def _line(record: logging.LogRecord) -> str:
    return f"{record.levelname.lower()}: {record.getMessage()}"


def _origin(record: logging.LogRecord) -> dict[str, Any]:
    return {"logger": record.name, "level": record.levelname}
