"""The request and response bodies of the HTTP API that are not library types.

Sessions, events and run results go on the wire as the library's own models (`Session`,
`Event`, `RunResult`); this module holds only what the HTTP surface adds: request bodies,
the error body and the health answer. Every request body forbids unknown keys, so a typo
answers 422 instead of being silently ignored.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator

from hookline._ids import SESSION_ID_PATTERN, session_id_problem

__all__ = [
    "MAX_SEQ",
    "SESSION_ID_PATTERN",
    "CancelAccepted",
    "CreateSession",
    "ApprovalAnswer",
    "ErrorBody",
    "Health",
    "ResumeBody",
    "RunBody",
    "ValidationIssue",
]

MAX_SEQ = 2**62
"""The largest `after_seq` / `Last-Event-ID` accepted (every backend stores seq as a 64-bit int)."""

_FORBID = ConfigDict(extra="forbid")


class CreateSession(BaseModel):
    """The body of `POST /v1/sessions`: both keys optional (`{}` makes a fresh id)."""

    model_config = _FORBID
    id: Annotated[str, Field(json_schema_extra={"pattern": SESSION_ID_PATTERN})] | None = None
    """The new session's id (the rule of `hookline._ids`); a random one when absent. Taken ids answer 409."""
    state: dict[str, Any] = Field(default_factory=dict)
    """The session's initial `State.data`."""

    @field_validator("id")
    @classmethod
    def _valid_id(cls, value: str | None) -> str | None:
        problem = session_id_problem(value) if value is not None else None
        if problem is not None:
            raise ValueError(problem)
        return value


class RunBody(BaseModel):
    """The body of `POST /v1/sessions/{id}/runs`."""

    model_config = _FORBID
    prompt: str = Field(min_length=1)
    """The user's message; it must hold some non-blank text."""

    @field_validator("prompt")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the prompt is blank: send the text the agent should answer")
        return value


class ApprovalAnswer(BaseModel):
    """One paused call's answer as an object: `{"args": {...}}` runs it with these arguments."""

    model_config = _FORBID
    approve: StrictBool | None = None
    """`true` runs the call, `false` refuses it (the default, with `args`: `true`)."""
    args: dict[str, Any] | None = None
    """The arguments to run the call with instead of the model's (checked against the tool's schema)."""
    reason: str | None = None
    """Why it is refused (with `approve: false`)."""


class ResumeBody(BaseModel):
    """The body of `POST /v1/sessions/{id}/resume`."""

    model_config = _FORBID
    approvals: dict[str, StrictBool | str | ApprovalAnswer]
    """`{call_id: true}` runs a paused call; `false` or a reason string refuses it;
    `{call_id: {"args": {...}}}` runs it with these arguments; `{"approve": false, "reason": "..."}` refuses it."""

    def answers(self) -> dict[str, Any]:
        """The approvals as `Agent.resume` takes them (`hookline.resume.parse_approvals` checks them)."""
        return {
            call_id: answer.model_dump(exclude_none=True) if isinstance(answer, ApprovalAnswer) else answer
            for call_id, answer in self.approvals.items()
        }


class ValidationIssue(BaseModel):
    """One problem found in a request."""

    loc: list[str | int]
    """Where: e.g. `["body", "prompt"]`."""
    msg: str
    """What is wrong."""
    type: str
    """A stable code for the problem, e.g. `missing`."""


class ErrorBody(BaseModel):
    """Every error answer: a stable code, a readable message and, where known, details."""

    error: str
    """A stable code: `not_found`, `busy`, `invalid_request`, `hook_failed`, ..."""
    message: str
    """What went wrong, for a person."""
    hook: str | None = None
    """For `hook_failed`: the hook's name."""
    point: str | None = None
    """For `hook_failed`: the hook point it ran at."""
    status_code: int | None = None
    """For `model_failed`: the status the model provider answered, if any."""
    detail: list[ValidationIssue] | None = None
    """For `invalid_request`: every problem found."""


class Health(BaseModel):
    """The answer of `GET /healthz`."""

    status: Literal["ok"] = "ok"
    """Always "ok" when the process serves requests."""
    version: str
    """The hookline version."""


class CancelAccepted(BaseModel):
    """The answer of `POST /v1/sessions/{id}/cancel` (202): the run is being cancelled."""

    session_id: str
    """The session whose run is being cancelled."""
    status: Literal["cancelling"] = "cancelling"
    """Always "cancelling": the run stops within moments, with `stop_reason == "cancelled"`."""
