"""The answers about runs with ids: `202` for a run that goes on (`RunAccepted`), `GET /v1/runs/{id}` (`RunInfo`).

A run gets an id when it asks for more than its answer (`RunBody.service()`): a background
run, a webhook, or a busy strategy. Its id names its session: `"<session id>~<hex>"`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from hookline.result import RunResult
from hookline.server.schemas import ErrorBody

__all__ = ["RunAccepted", "RunInfo", "RunState", "WebhookOutcome"]

RunState = Literal["queued", "running", "completed", "interrupted", "cancelled", "failed"]
"""Where a run is: waiting for its session (`queued`), going on, or ended: `completed` (an answer, a
hook's exit or the turn limit: see `result.stop_reason`), `interrupted` (paused for approval),
`cancelled`, or `failed`."""


class RunAccepted(BaseModel):
    """The answer (202) of a background run: its id, and where to ask after it."""

    model_config = ConfigDict(extra="forbid")
    run_id: str
    """The run's id."""
    session_id: str
    """Its session."""
    state: RunState
    """`running`, or `queued` behind the session's current run."""
    url: str
    """`/v1/runs/{run_id}`: its state and, once it ended, its result."""


class WebhookOutcome(BaseModel):
    """How the delivery of a run's webhook went so far (each attempt is also in the session log)."""

    model_config = ConfigDict(extra="forbid")
    attempts: int = 0
    """Attempts made."""
    delivered: bool = False
    """Whether one was answered 2xx."""
    last_status: int | None = None
    """The status the last attempt was answered with (None: no answer)."""
    last_error: str | None = None
    """Why the last attempt failed, when it did."""


class RunInfo(BaseModel):
    """The answer of `GET /v1/runs/{run_id}`."""

    model_config = ConfigDict(extra="forbid")
    run_id: str
    """The run's id."""
    session_id: str
    """Its session."""
    state: RunState
    """Where it is."""
    result: RunResult | None = None
    """Its result once it ended (a run of another process: its `stop_reason` and `output`, read from the log)."""
    error: ErrorBody | None = None
    """Why it failed (state `failed`)."""
    rolled_back: bool = False
    """Whether a later run with `if_busy: "rollback"` left its events out of what the model sees."""
    webhook: WebhookOutcome | None = None
    """Its webhook's delivery, when it asked for one (known to the process that ran it)."""
