"""What the server writes into a session's log beside the loop: who decided an approval.

**Approvals.** Before a resume runs, each paused call its approvals decide gets a status
line in the log: "alice approved danger(target='prod')", "alice denied danger: too risky",
with `metadata["approval"]` holding the call, the decision, the reason and the user; the
line's `created_at` is when. It is written while the server holds the session's run lock,
so a resume that would answer 409 `busy` records nothing; one whose approvals name a call
the session never made records nothing either (it answers 422), nor one whose edited
arguments do not fit their tool (checked here, before anything is written). An approval
that edits the arguments says so: "alice approved danger(target='staging') (arguments
edited)". A call named again after it was answered is no decision, and gets no line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hookline.agent_spec import AgentSpec
from hookline.conversation import open_calls
from hookline.events import Event
from hookline.messages import ToolCallPart
from hookline.result import Interruption
from hookline.resume import Answer, edited_calls, paused_calls
from hookline.server.forking import FORK_AUTHOR
from hookline.sessions import SessionStore
from hookline.state import State

__all__ = ["approval_lines", "record_approvals"]


async def record_approvals(
    store: SessionStore, session_id: str, user: str, approvals: Mapping[str, Answer], agent: AgentSpec | None = None
) -> list[Event]:
    """Write who approved or denied which paused call, before the resume that applies it runs; answer the lines.

    Raises:
        SessionBusy: A run holds the session (the resume would answer 409 too).
        ConfigError: Edited arguments do not fit the tool of `agent` (nothing is written).
    """
    async with store.run_lock(session_id, timeout=0.0):
        log = await store.events(session_id, view="all")
        if agent is not None and any(isinstance(answer, dict) for answer in approvals.values()):
            messages = [e.to_message() for e in log if e.kind == "message" and not e.partial]
            edited_calls(open_calls(messages), approvals, agent.tools_for(State(agent, messages)))
        lines = approval_lines(log, approvals, user)
        return await store.append_events(session_id, lines) if lines else []


def approval_lines(log: Sequence[Event], approvals: Mapping[str, Answer], user: str) -> list[Event]:
    """The audit lines for `approvals` on a log: one per paused call they decide (none if they name unknown calls)."""
    made = {p.id for e in log if e.kind == "message" and e.role == "assistant" for p in e.parts
            if isinstance(p, ToolCallPart)}
    if any(call_id not in made for call_id in approvals):
        return []  # the resume answers 422 and must record nothing
    return [_line(call, approvals[call.call_id], user) for call in paused_calls(log) if call.call_id in approvals]


def _line(call: Interruption, answer: Answer, user: str) -> Event:
    edited = isinstance(answer, dict)
    approved = answer is True or edited
    reason = answer if isinstance(answer, str) else ""
    arguments = answer["args"] if isinstance(answer, dict) else call.arguments
    shown = f"{call.name}({_arguments(arguments)})" + (" (arguments edited)" if edited else "")
    text = f"{user} {'approved' if approved else 'denied'} {shown}" + (f": {reason}" if reason else "")
    approval = {"call_id": call.call_id, "name": call.name, "decision": "approved" if approved else "denied",
                "reason": reason, "user": user}
    return Event.status(FORK_AUTHOR, "agent", text, approval=approval | ({"arguments": arguments} if edited else {}))


def _arguments(arguments: dict[str, object] | str) -> str:
    if isinstance(arguments, str):
        return arguments
    return ", ".join(f"{key}={value!r}" for key, value in arguments.items())
