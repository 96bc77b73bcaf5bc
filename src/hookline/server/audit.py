"""What the server has a resume write into a session's log: who decided an approval.

**Approvals.** Each paused call a resume's approvals decide gets a status line in the log:
"alice approved danger(target='prod')", "alice denied danger: too risky", with
`metadata["approval"]` holding the call, the decision, the reason and the user; the line's
`created_at` is when. An approval that edits the arguments says so: "alice approved
danger(target='staging') (arguments edited)". A call named again after it was answered is
no decision, and gets no line.

The resume run writes the lines itself (`Agent.resume(audit=approval_audit(user))`): while
it holds the session's run lock, once it has loaded the session and checked the approvals
against the paused calls, right before those calls run or are refused (and before the
user's edit of a call's arguments goes on record). So only a resume that applies its
decisions leaves lines: one that answers 409 `busy` records nothing, nor one that finds the
calls answered meanwhile by another resume, nor one whose approvals name a call the
session never made or whose edited arguments do not fit their tool (it answers 422).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

from hookline._run.resume import Answer, AuditLines
from hookline.events import Event
from hookline.messages import ToolCallPart
from hookline.server.forking import FORK_AUTHOR

__all__ = ["approval_audit", "approval_lines"]


def approval_audit(user: str) -> AuditLines:
    """The audit of a resume by `user`, for `Agent.resume(audit=...)`: one line per paused call it decides."""
    return partial(approval_lines, user=user)


def approval_lines(calls: Sequence[ToolCallPart], approvals: Mapping[str, Answer], user: str) -> list[Event]:
    """The audit lines of `user`'s `approvals`: one per call of `calls` (the paused ones, as made) they decide."""
    return [_line(call, approvals[call.id], user) for call in calls if call.id in approvals]


def _line(call: ToolCallPart, answer: Answer, user: str) -> Event:
    edited = isinstance(answer, dict) and "args" in answer
    decision = _decision(answer)
    reason = answer if isinstance(answer, str) else ""
    arguments = answer["args"] if edited else call.arguments  # type: ignore[index]  # a dict with "args"
    shown = f"{call.name}({_arguments(arguments)})" + (" (arguments edited)" if edited else "")
    text = f"{user} {decision} {shown}" + (f": {reason}" if reason else "")
    approval = {"call_id": call.id, "name": call.name, "decision": decision, "reason": reason, "user": user}
    return Event.status(FORK_AUTHOR, "agent", text, approval=approval | ({"arguments": arguments} if edited else {}))


def _decision(answer: Answer) -> str:
    """What the user did with a paused call: approved, denied, answered (a question) or cancelled."""
    if isinstance(answer, dict):
        return "answered" if "response" in answer else "cancelled" if answer.get("cancel") else "approved"
    return "approved" if answer is True else "denied"


def _arguments(arguments: dict[str, object] | str) -> str:
    if isinstance(arguments, str):
        return arguments
    return ", ".join(f"{key}={value!r}" for key, value in arguments.items())
