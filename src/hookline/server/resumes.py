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
from hookline.sessions import SessionStore

__all__ = ["check_resumable", "log_since_last_answer"]

_PAGE = 1_000
"""Events read at a time: each page is decoded on the event loop, so none is long."""


async def log_since_last_answer(store: SessionStore, session_id: str) -> list[Event]:
    """The session's log (`all` view) from the model's last message on; all of it when there is none."""
    pages: list[list[Event]] = []
    before: int | None = None
    while True:
        page = await store.page(session_id, view="all", before_seq=before, limit=_PAGE, newest=True)
        answers = [i for i, e in enumerate(page) if e.kind == "message" and e.role == "assistant" and not e.partial]
        stored = [e for e in page if not e.partial]
        pages.append(page[answers[-1]:] if answers else page)
        if answers or len(stored) < _PAGE or stored[0].seq == 1:
            return [e for p in reversed(pages) for e in p]
        before = stored[0].seq


def check_resumable(session_id: str, log: list[Event], approvals: Collection[str]) -> None:
    """Check that a session can be resumed with answers to `approvals` (call ids).

    `log` is the session's log (`all` view) from the model's last message on
    (`log_since_last_answer`), or the whole of it.

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
