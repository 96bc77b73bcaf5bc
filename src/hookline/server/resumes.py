"""What a resume over HTTP may ask for, checked against the session's log before its run starts.

A resume goes on with a run that stopped: it answers the calls paused in the session, or
(a fork, a run cut short) lets the model answer a conversation that ends with a prompt or a
tool's result. A session whose last run ended with an answer, or where no run was made, has
nothing to go on with: its resume answers 409 `nothing_paused` and starts no run, which
would only ask the model to answer its own last answer. The approvals must name calls
paused now: one naming a call answered already (or never made) answers 422
`invalid_approvals`, listing the calls that await a decision.

The log is read before the run takes the session, so two resumes racing may both pass
here; the run's own checks (`hookline._run.resume`) still hold under its lock, and a call
never runs twice. Only its tail is read, backward a page at a time: from the last answer of
the model on, which holds its paused calls and what happened to them.
"""

from __future__ import annotations

from collections.abc import Collection

from hookline._run.resume import paused_calls
from hookline.conversation import open_calls
from hookline.events import Event
from hookline.server.errors import ProtocolError

__all__ = ["check_resumable"]

def check_resumable(session_id: str, log: list[Event], approvals: Collection[str]) -> None:
    """Check that a session can be resumed with answers to `approvals` (call ids).

    `log` is the session's log (`all` view) from the model's last message on
    (`hookline._run.paused_turn.log_since_last_answer`), or the whole of it.

    Raises:
        ProtocolError: 409 `nothing_paused`: no call is paused and the model has answered
            (or no run was made); 422 `invalid_approvals`: an approval names no paused call.
    """
    messages = [e.to_message() for e in log if e.kind == "message" and not e.partial]
    pending = {call.id for call in open_calls(messages)}
    if not pending and (not messages or messages[-1].role == "assistant"):
        raise ProtocolError(f"session {session_id!r} has no paused calls: its last run ended (or none ran), so there "
                            f"is nothing to resume; send it a prompt instead (POST /v1/sessions/{session_id}/runs)",
                            status=409, code="nothing_paused")
    paused = [call.call_id for call in paused_calls(log)]  # a sub-agent's paused call as "<call>/<inner call>"
    unknown = sorted(set(approvals) - pending - set(paused))
    if unknown:
        raise ProtocolError(f"the approvals name call(s) {', '.join(map(repr, unknown))} that session {session_id!r} "
                            "does not hold paused (never made, or answered already); calls awaiting a decision: "
                            f"{', '.join(paused) or 'none'}", code="invalid_approvals")
