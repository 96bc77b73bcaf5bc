"""The bodies of the inspector's routes: session summaries, timelines, model calls and forks.

They describe what the server reads back from a session's log for the web page's
inspector (`hookline.server.inspection`, `hookline.server.forking`). Times are those the
store recorded; an event copied into a fork keeps the time of its original.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from hookline._ids import SESSION_ID_PATTERN, session_id_problem
from hookline.messages import Message
from hookline.models import ToolSpec
from hookline.server.schemas import MAX_SEQ

__all__ = [
    "ForkBody", "ModelCall", "ModelCallRequest", "PromptTrace", "RunTimeline", "SessionState", "SessionSummary", "Span",
    "Timeline", "TraceSpan", "Traces",
]


class SessionSummary(BaseModel):
    """One line of the session list: the session and its title."""

    id: str
    """The session's id."""
    title: str
    """Its first prompt (its first line, up to 200 characters), or "" while it has none."""
    created_at: datetime | None = None
    """When it was created (UTC)."""
    updated_at: datetime | None = None
    """When its log or state last changed (UTC)."""
    running: bool = False
    """A run holds it now, in this server process or any other sharing the store."""
    waiting: int = 0
    """The calls of its last run that wait for a human's approval."""
    last_run: str | None = None
    """How its last run ended (completed, interrupted, failed, cancelled, ...); None before any ended."""
    snippet: str | None = None
    """With a search (`q`): the words around its first match."""
    forked_from: str | None = None
    """The session it was forked from (its log starts with events copied from there), if any."""


class SessionState(BaseModel):
    """A session's `state.data`, as saved or as recorded at an event (`StatusOptions(state=True)`)."""

    session_id: str
    """The session."""
    state: dict[str, Any]
    """Its `state.data` as saved; with `at_seq`, as recorded at that event."""
    at_seq: int | None = None
    """The event asked about (`?at_seq=`); None: the state as saved."""
    recorded_seq: int | None = None
    """The marker that recorded `state`: the last one at or before `at_seq`."""
    previous: dict[str, Any] | None = None
    """The state recorded before that one, what the change at `recorded_seq` was made to; None: none within reach."""


class Span(BaseModel):
    """One bar of a timeline: a model call or a tool call."""

    kind: Literal["model", "tool"]
    """What ran."""
    name: str
    """The model's or the tool's name."""
    seq: int
    """The first event of the span (a model call's "calling model" line, a tool's start or result)."""
    end_seq: int | None = None
    """The event that ended it (the model's answer, the tool's result); None while it runs."""
    started_at: datetime | None = None
    """When it started."""
    ended_at: datetime | None = None
    """When it ended: for a model call, its start plus the duration its status line reports."""
    duration_ms: float | None = None
    """How long it took: a model call as its status line reports it; a tool call until its result was recorded."""
    tokens: int | None = None
    """A model call's tokens (input plus output), as its status line reports them."""
    input_tokens: int | None = None
    """A model call's input tokens, where its status line records them as data."""
    output_tokens: int | None = None
    """A model call's output tokens, where its status line records them as data."""
    ttft_ms: float | None = None
    """A streamed model call's time to its first token, where its status line records it."""
    cost: float | None = None
    """A model call's cost, where its model has prices (`Model.prices`)."""
    currency: str | None = None
    """The currency of `cost`."""
    call_id: str | None = None
    """A tool call's id."""
    is_error: bool = False
    """A tool call that failed or was refused."""
    ran: bool = True
    """False for a tool call answered without running (denied, skipped, not run)."""
    child_session_id: str | None = None
    """For a tool call that ran a sub-agent (`Agent.as_tool`): the child session it ran in."""


class RunTimeline(BaseModel):
    """One run of a session: its model and tool calls over time."""

    first_seq: int
    """Its first event."""
    last_seq: int
    """Its last event so far."""
    title: str
    """Its prompt, or "resumed" for a resumption."""
    started_at: datetime | None = None
    """When its first event was recorded."""
    ended_at: datetime | None = None
    """When its last line ("run completed", ...) was recorded; None while it goes on."""
    outcome: str | None = None
    """How it ended: completed, interrupted, failed, cancelled, hook_exit, max_turns; None while it goes on."""
    error: str | None = None
    """Why it failed, where the server recorded the reason."""
    tokens: int = 0
    """The tokens of its model calls."""
    spans: list[Span] = Field(default_factory=list)
    """Its model and tool calls, in the order they started."""


class Timeline(BaseModel):
    """A session's runs, oldest first."""

    session_id: str
    """The session."""
    runs: list[RunTimeline]
    """Its runs."""
    complete: bool = True
    """False: the log holds runs before these, left out (only its latest 5,000 events are read)."""


class TraceSpan(BaseModel):
    """One row of a prompt's trace: a run, a model or tool call in it, a hook's line, or a human's wait."""

    kind: Literal["run", "model", "tool", "hook", "approval"]
    """What it is: a run (the prompt's or a resume), a call in it, a hook's line, the wait for an approval."""
    name: str
    """The run's name ("run", "resume"), the model's or the tool's, the hook's, or the paused tool's."""
    depth: int
    """How deep it nests: 0 for runs and approvals, 1 for what happened in a run."""
    seq: int
    """Its first event."""
    end_seq: int | None = None
    """The event that ended it; None while it goes on (or for a hook's line, an instant)."""
    started_at: datetime | None = None
    """When it started."""
    ended_at: datetime | None = None
    """When it ended."""
    duration_ms: float | None = None
    """How long it took (a model call as its status line reports it)."""
    tokens: int | None = None
    """A model call's tokens (input plus output), as its status line reports them."""
    input_tokens: int | None = None
    """A model call's input tokens, where its status line records them as data."""
    output_tokens: int | None = None
    """A model call's output tokens, where its status line records them as data."""
    ttft_ms: float | None = None
    """A streamed model call's time to its first token, where its status line records it."""
    cost: float | None = None
    """A model call's cost, where its model has prices (`Model.prices`)."""
    currency: str | None = None
    """The currency of `cost`."""
    call_id: str | None = None
    """A tool call's id (or the paused call's)."""
    is_error: bool = False
    """A run that failed, or a tool call that failed or was refused."""
    ran: bool = True
    """False for a tool call answered without running (denied, skipped, not run)."""
    outcome: str | None = None
    """How a run ended (None while it goes on); an approval's decision and who took it ("alice approved")."""


class PromptTrace(BaseModel):
    """Everything one prompt set off, across the resumes of its approvals: its runs and their calls over time."""

    title: str
    """The prompt (its first line, shortened), or "resumed" for runs before any prompt of the log."""
    first_seq: int
    """Its first event."""
    last_seq: int
    """Its last event so far."""
    started_at: datetime | None = None
    """When it started."""
    ended_at: datetime | None = None
    """When its last run ended; None while one goes on."""
    outcome: str | None = None
    """How its last run ended; None while it goes on."""
    error: str | None = None
    """Why its last run failed, where the server recorded the reason."""
    tokens: int = 0
    """The tokens of its model calls."""
    input_tokens: int = 0
    """The input tokens of its model calls (where their status lines record them as data)."""
    output_tokens: int = 0
    """The output tokens of its model calls (where their status lines record them as data)."""
    cost: float | None = None
    """What its model calls cost, where their models have prices (None: none has, or their currencies differ)."""
    currency: str | None = None
    """The currency of `cost`."""
    waited_ms: float = 0
    """How long it waited for humans (its approvals)."""
    spans: list[TraceSpan] = Field(default_factory=list)
    """Each run, then what ran in it (in the order it started), then the approvals it waited for."""


class Traces(BaseModel):
    """A session's prompts, oldest first, each with its trace."""

    session_id: str
    """The session."""
    prompts: list[PromptTrace]
    """Its prompts."""
    complete: bool = True
    """False: the log holds prompts before these, left out (only its latest 5,000 events are read)."""


class ModelCallRequest(BaseModel):
    """What a model call was sent, as rebuilt from the log and the agent (see `ModelCall.notes`)."""

    model: str
    """The model's name."""
    provider: str
    """The provider's name ("openai", "function", ...)."""
    messages: list[Message]
    """The conversation sent: the instructions (when they are a string), then every message logged before the call."""
    tools: list[ToolSpec]
    """The tools offered."""
    settings: dict[str, Any]
    """The request parameters the model sends with every call (`temperature`, `max_tokens`, ...)."""
    output_schema: dict[str, Any] | None = None
    """The JSON schema the answer had to follow, if the agent has an `output_type`."""


class ModelCall(BaseModel):
    """One model call of a session: what it was sent, what it answered, its tokens and duration."""

    session_id: str
    """The session."""
    turn: int | None = None
    """Its turn in its run (from the "turn N: calling model" line)."""
    seqs: list[int]
    """Its events: the "calling model" line, the model's status line, the answer message."""
    started_at: datetime | None = None
    """When it was made."""
    duration_ms: float | None = None
    """How long the provider took, as the model's status line reports it."""
    tokens: int | None = None
    """Input plus output tokens, as the model's status line reports them."""
    input_tokens: int | None = None
    """Input tokens, where the model's status line records them as data."""
    output_tokens: int | None = None
    """Output tokens, where the model's status line records them as data."""
    ttft_ms: float | None = None
    """Time to the first token of a streamed call, where the model's status line records it."""
    cost: float | None = None
    """A model call's cost, where its model has prices (`Model.prices`)."""
    currency: str | None = None
    """The currency of `cost`."""
    exact: bool = False
    """The request is the one the provider got, as the run recorded it (`StatusOptions(requests=True)`);
    False: rebuilt from the log and the agent (see `notes`)."""
    request: ModelCallRequest
    """What the model was sent."""
    response: Message | None = None
    """What it answered (None: no answer is on record, e.g. the call failed)."""
    error: str | None = None
    """Why the run failed at this call, where the server recorded the reason."""
    notes: list[str]
    """Where the request may differ from what the provider got, and why."""


class ForkBody(BaseModel):
    """The body of `POST /v1/sessions/{id}/fork`: the event to fork at, and what to change.

    `text` edits a user message (its text parts become this text; its other parts stay);
    `content` edits a tool result; with neither, the fork holds the log before event
    `at_seq`, whatever event it is (an answer: regenerate it). `state` replaces the fork's
    `state.data` (by default the state recorded before `at_seq`, else the source session's now).
    """

    model_config = ConfigDict(extra="forbid")
    at_seq: int = Field(ge=1, le=MAX_SEQ)
    """The `seq` of the event to fork at; the fork copies the log before it."""
    text: str | None = None
    """The new text of a user message."""
    content: str | None = None
    """The new content of a tool result."""
    call_id: str | None = None
    """Which result to edit, when the tool message at `at_seq` holds several."""
    is_error: StrictBool = False
    """Whether the edited tool result is an error."""
    state: dict[str, Any] | None = None
    """The fork's `state.data`; None: the state recorded last before `at_seq` (`StatusOptions(state=True)`),
    else a copy of the source session's as it is now."""
    id: Annotated[str, Field(json_schema_extra={"pattern": SESSION_ID_PATTERN})] | None = None
    """The new session's id; a random one when absent. Taken ids answer 409."""

    @field_validator("id")
    @classmethod
    def _valid_id(cls, value: str | None) -> str | None:
        problem = session_id_problem(value) if value is not None else None
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _one_edit(self) -> ForkBody:
        if self.text is not None and self.content is not None:
            raise ValueError("send at most one of `text` (a user message's new text) or `content` (a tool result's)")
        if self.text is not None and not self.text.strip():
            raise ValueError("the text is blank: send the message the agent should answer")
        return self
