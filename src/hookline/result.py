"""What a run produces: `RunResult`, and the `Interruption`s of a paused run."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hookline.messages import Message
from hookline.types import StopReason
from hookline.usage import Usage

__all__ = ["Interruption", "Reply", "RunResult"]


class Interruption(BaseModel):
    """A tool call paused for human approval, or for the user's answer to its tool's question."""

    model_config = ConfigDict(extra="forbid")
    call_id: str
    """The paused call's id: the key of `approvals` in `Agent.resume`."""
    name: str
    """The tool's name."""
    arguments: dict[str, Any] | str
    """The arguments the model gave."""
    reason: str = ""
    """Why it was paused; for a question, the question."""
    response_schema: dict[str, Any] | None = None
    """For a call whose tool asked the user a question (`RunContext.ask`, e.g. an MCP server's
    elicitation): the JSON schema of the answer, from which a front end renders a form. None for
    an approval."""
    agent: str | None = None
    """For a call paused inside a sub-agent (an agent run as a tool, `Agent.as_tool`): that agent's
    name (the innermost one). Its `call_id` then names the calling run's call and the sub-agent's,
    `"<call>/<inner call>"`, which the calling agent's `resume` takes. None for a call of this run."""


class Reply(BaseModel):
    """The user's reply to a paused call's question, as its tool gets it when the run resumes (`RunContext.reply`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    action: Literal["accept", "decline", "cancel"]
    """`accept`: the user answered (`content`); `decline`: they refused to; `cancel`: they dismissed the question."""
    content: Any = None
    """The answer, when accepted (a JSON value, meant to fit the question's `response_schema`)."""


class RunResult(BaseModel):
    """What a run produced."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    output: Any = ""
    """The final answer: text, or an instance of the agent's `output_type`."""
    messages: list[Message] = Field(default_factory=list)
    """This run's messages, in order: the prompt, calls, results, answer (not earlier history)."""
    stop_reason: StopReason = "completed"
    """Why the run stopped: completed, hook_exit, interrupted, max_turns, cancelled or guardrail."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens, model calls and tool calls of this run."""
    interruptions: list[Interruption] = Field(default_factory=list)
    """Calls paused for approval (when `stop_reason == "interrupted"`)."""
    session_id: str | None = None
    """The session the run was recorded in, if any."""
    exit_reason: str = ""
    """The reason a hook gave to `state.control.exit(...)`."""
