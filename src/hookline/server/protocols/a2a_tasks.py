"""A2A tasks as a session's log holds them: what `protocols/a2a.py` serves as tasks and their updates.

A task is one prompt and the runs that answer it: the first run, and the resumptions of its
paused calls. Its id names the session (the A2A context) and the `seq` of its prompt in the
log (`"<context id>:<seq>"`), so a task is found, and read, from the log alone: after a
restart, in any process, with every store. Its span is the log from its prompt to the next
prompt of the session (a new task). How it stands is read off the span's events as data:

- the last run's end (`events.run_end`): completed → `TASK_STATE_COMPLETED`, interrupted →
  `TASK_STATE_INPUT_REQUIRED` (with the calls it paused, `paused_call`), cancelled →
  `TASK_STATE_CANCELED`, failed → `TASK_STATE_FAILED` (with `failure_of`'s message), a
  guardrail's stop → `TASK_STATE_REJECTED`;
- no end after its last events: `TASK_STATE_WORKING` while a run goes on, else
  `TASK_STATE_FAILED` (the process running it stopped);
- a task still paused when the next prompt came is `TASK_STATE_CANCELED`: that prompt
  answered its paused calls as never run.

The answer (the last answer of the span) is the task's one artifact; the prompt is its
history. While a run goes on, `TaskTranslator` turns its events into the stream's updates:
each status line one `TASK_STATE_WORKING` update (the line as the message's text), then the
artifact and the final state, and the stream ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from a2a.helpers import new_data_part
from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

from hookline.agent import RunResult
from hookline.events import Event, run_end
from hookline.messages import TextPart
from hookline.result import Interruption
from hookline.server.errors import error_body
from hookline.server.protocols.base import Translator, failure_of, paused_call

__all__ = ["TERMINAL", "TaskProgress", "TaskRef", "TaskTranslator", "is_prompt", "task_span"]

TERMINAL = frozenset({TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_FAILED,
                      TaskState.TASK_STATE_REJECTED})
"""The states a task never leaves."""

_ENDS = {
    "interrupted": TaskState.TASK_STATE_INPUT_REQUIRED,
    "cancelled": TaskState.TASK_STATE_CANCELED,
    "failed": TaskState.TASK_STATE_FAILED,
    "guardrail": TaskState.TASK_STATE_REJECTED,
}
_DIED = "the run stopped without recording its end (the process running it stopped)"
_ABANDONED = ("a newer message in this context started another task, which answered this task's paused calls "
              "as never run")
_ANSWER = "answer"


class TaskRef(NamedTuple):
    """Where a task lives: its session (the A2A context id) and the seq of its prompt."""

    session_id: str
    seq: int

    @classmethod
    def parse(cls, task_id: str) -> TaskRef | None:
        """The task `task_id` names, or None when it names none (`"<context id>:<seq>"`)."""
        session_id, _, seq = task_id.rpartition(":")
        if not session_id or not seq.isdigit() or len(seq) > 18:
            return None
        return cls(session_id, int(seq))

    @property
    def task_id(self) -> str:
        """The task's id."""
        return f"{self.session_id}:{self.seq}"


def is_prompt(event: Event) -> bool:
    """Whether `event` is a prompt: the user's message that starts a task."""
    return event.kind == "message" and event.role == "user" and event.author == "user" and not event.partial


def task_span(events: Sequence[Event], ref: TaskRef) -> tuple[list[Event], bool] | None:
    """The task's events (its prompt first, up to the next prompt), and whether a next prompt came; None if none.

    `events` is the log from the task's prompt on (`after_seq=ref.seq - 1`).
    """
    if not events or events[0].seq != ref.seq or not is_prompt(events[0]):
        return None
    span = [events[0]]
    for event in events[1:]:
        if is_prompt(event):
            return span, True
        if not event.partial:
            span.append(event)
    return span, False


@dataclass
class TaskProgress:
    """How a task stands, from the events of its span read in order."""

    state: TaskState = TaskState.TASK_STATE_SUBMITTED
    status_text: str = ""
    """The text of the status message: the last line, the paused calls, or why it failed."""
    answer: Event | None = None
    """The last answer (an assistant message with text and no tool calls)."""
    paused: list[Interruption] = field(default_factory=list)
    """The calls the last run paused (when it ended interrupted)."""
    ended: bool = False
    """Whether the last event read ended a run."""
    last_end: tuple[TaskState, str] | None = None
    """The state and status text the last run ended with."""

    def note(self, event: Event) -> Literal["line", "end"] | None:
        """Take `event` in; say whether it is a working line, or ends the run (a final state, or input required)."""
        if event.kind not in ("message", "status", "marker"):
            return None
        ended = run_end(event)
        if ended is not None:
            self._end(ended, failure_of(event))
            return "end"
        if self.ended:  # the first event of the next run (a resumption)
            self.ended, self.paused = False, []
        if event.kind == "message":
            if event.role == "assistant" and _is_answer(event):
                self.answer = event
            return None
        call = paused_call(event)
        if call is not None:
            self.paused.append(call)
            return None
        failure = failure_of(event)
        if failure is not None:  # a failure the run could not record (its end is not in the log)
            self._end("failed", failure)
            return "end"
        if event.kind != "status":
            return None
        self.state, self.status_text = TaskState.TASK_STATE_WORKING, event.text
        return "line"

    def _end(self, ended: str, failure: dict[str, Any] | None) -> None:
        self.state, self.ended = _ENDS.get(ended, TaskState.TASK_STATE_COMPLETED), True
        if self.state != TaskState.TASK_STATE_INPUT_REQUIRED:
            self.paused = []
        if self.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            self.status_text = _paused_text(self.paused)
        elif self.state == TaskState.TASK_STATE_FAILED:
            self.status_text = str((failure or {}).get("message") or "the run failed")
        elif self.state == TaskState.TASK_STATE_CANCELED:
            self.status_text = "the run was cancelled"
        else:
            self.status_text = ""
        self.last_end = self.state, self.status_text

    def settle(self, *, running: bool, followed: bool) -> None:
        """Read what the log cannot say by itself: whether a run goes on, and whether a newer task followed.

        A followed task is over: what comes after its last end is the next prompt closing its
        calls left open.
        """
        if followed:
            self.state, self.status_text = self.last_end or (TaskState.TASK_STATE_FAILED, _DIED)
            if self.state == TaskState.TASK_STATE_INPUT_REQUIRED:
                self.state, self.status_text, self.paused = TaskState.TASK_STATE_CANCELED, _ABANDONED, []
            self.ended = True
        elif not self.ended:
            self.state, self.status_text = (TaskState.TASK_STATE_WORKING, self.status_text) if running else (
                TaskState.TASK_STATE_FAILED, _DIED)


def _is_answer(event: Event) -> bool:
    return not any(p.type == "tool_call" for p in event.parts) and bool(event.text)


def _paused_text(paused: list[Interruption]) -> str:
    lines = [f"{call.name}({_arguments(call.arguments)})" + (f": {call.reason}" if call.reason else "")
             for call in paused]
    return ("waiting for approval of " + "; ".join(lines) + ' (answer with the DataPart {"approved": true} '
            'or {"approved": false, "reason": "..."})')


def _arguments(arguments: dict[str, Any] | str) -> str:
    if isinstance(arguments, str):
        return arguments
    return ", ".join(f"{key}={value!r}" for key, value in arguments.items())


class TaskTranslator(Translator):
    """One task's runs as A2A stream events: the task, its working lines, its answer and its final state.

    Args:
        context_id: The task's context (its session).
        ref: The task, when known (a resumption); None until its prompt is read.
        prompt_id: The id of the prompt that starts the task (a new task).
        progress: How it stands so far (a resumption continues from the log's reading).
        prompt: The prompt's event, the task's history (a resumption).
    """

    def __init__(
        self, context_id: str, *, ref: TaskRef | None = None, prompt_id: str | None = None,
        progress: TaskProgress | None = None, prompt: Event | None = None,
    ) -> None:
        self.context_id = context_id
        self.ref = ref
        self.prompt_id = prompt_id
        self.progress = progress or TaskProgress()
        self.prompt = prompt
        self.opened = False
        """Whether the stream's opening went out (`opening()` gives it once)."""
        self.final = False
        """Whether the final update (an end, or input required) went out: the stream ends there."""

    @classmethod
    def from_log(cls, ref: TaskRef, span: list[Event]) -> TaskTranslator:
        """The task as its span of the log holds it (then `progress.settle` what the log cannot say)."""
        progress = TaskProgress()
        for event in span[1:]:
            progress.note(event)
        return cls(ref.session_id, ref=ref, progress=progress, prompt=span[0])

    def opening(self) -> list[Any]:
        """A resumption's stream starts with the task, working again (once; a new task's starts with its prompt)."""
        if self.opened or self.ref is None:
            self.opened = True
            return []
        self.opened = True
        self.progress.state, self.progress.status_text, self.progress.ended = TaskState.TASK_STATE_WORKING, "", False
        return [self.task()]

    def event(self, event: Event) -> list[Any]:
        """The updates of one event of the run (the task itself once its prompt is stored)."""
        if self.ref is None:
            if is_prompt(event) and event.id == self.prompt_id and event.seq is not None:
                self.ref, self.prompt = TaskRef(self.context_id, event.seq), event
                self.progress.state = TaskState.TASK_STATE_WORKING
                return [self.task()]
            return []
        if self.final:
            return []
        noted = self.progress.note(event)
        if noted == "line":
            return [self._status_update(event.id)]
        return self.ending() if noted == "end" else []

    async def closing(self, result: RunResult | None, error: BaseException | None) -> list[Any]:
        """The final update of a run whose end the events did not carry (it failed, or the server stopped)."""
        if self.final or self.ref is None or (result is None and error is None):
            return []
        if error is not None:
            self.progress.state, self.progress.status_text = TaskState.TASK_STATE_FAILED, error_body(error)[1].message
        else:
            assert result is not None
            self.progress.state = _ENDS.get(result.stop_reason, TaskState.TASK_STATE_COMPLETED)
        return self.ending()

    def ending(self) -> list[Any]:
        """The task's last updates: its answer (when it completed), then its state; the stream ends after them."""
        self.final = True
        frames: list[Any] = []
        artifact = self._artifact()
        if artifact is not None:
            frames.append(TaskArtifactUpdateEvent(task_id=self._task_id, context_id=self.context_id,
                                                  artifact=artifact, last_chunk=True))
        frames.append(self._status_update(None))
        return frames

    @property
    def _task_id(self) -> str:
        assert self.ref is not None
        return self.ref.task_id

    def _status_update(self, message_id: str | None) -> TaskStatusUpdateEvent:
        return TaskStatusUpdateEvent(task_id=self._task_id, context_id=self.context_id, status=self._status(message_id))

    def _status(self, message_id: str | None) -> TaskStatus:
        progress = self.progress
        if not progress.status_text:
            return TaskStatus(state=progress.state)
        parts = [Part(text=progress.status_text)]
        if progress.state == TaskState.TASK_STATE_INPUT_REQUIRED and progress.paused:
            parts.append(new_data_part({"pausedCalls": [_paused_data(call) for call in progress.paused]}))
        message = Message(message_id=message_id or f"{self._task_id}:status", context_id=self.context_id,
                          task_id=self._task_id, role=Role.ROLE_AGENT, parts=parts)
        return TaskStatus(state=progress.state, message=message)

    def _artifact(self) -> Artifact | None:
        answer = self.progress.answer
        if answer is None or self.progress.state != TaskState.TASK_STATE_COMPLETED:
            return None
        return Artifact(artifact_id=answer.id or _ANSWER, name=_ANSWER, parts=[Part(text=answer.text)])

    def task(self) -> Task:
        """The task as it stands: its state, its status message, its answer, and its prompt as history."""
        artifact = self._artifact()
        return Task(id=self._task_id, context_id=self.context_id, status=self._status(None),
                    artifacts=[artifact] if artifact is not None else [], history=self._history())

    def _history(self) -> list[Message]:
        prompt = self.prompt
        if prompt is None:
            return []
        parts = [Part(text=p.text) for p in prompt.parts if isinstance(p, TextPart)]
        return [Message(message_id=prompt.id or f"{self._task_id}:prompt", context_id=self.context_id,
                        task_id=self._task_id, role=Role.ROLE_USER, parts=parts)]


def _paused_data(call: Interruption) -> dict[str, Any]:
    data: dict[str, Any] = {"callId": call.call_id, "tool": call.name, "arguments": call.arguments,
                            "reason": call.reason}
    if call.response_schema is not None:
        data["responseSchema"] = call.response_schema
    return data
