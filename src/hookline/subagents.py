"""Sub-agents: an agent run by a tool call of another (`Agent.as_tool`), in a session of its own.

When the calling run has a session, the sub-agent runs in a **child session** of the same
store, owned by the same user, named after the call: `"<session id>.<call id>"` (a call id
with characters other than letters, digits, `_` and `-` is replaced by a digest of it, and
an id too long for the rule of session ids by a digest of both: `child_session_id`). The
link is recorded on both sides, as data:

- the child's log starts with a marker (in the `all` view) whose metadata holds
  `parent_session_id` and `parent_call_id`, written in the transaction of the child's prompt;
- the calling run's log gets a status line (a marker when agent status is off) authored by the
  sub-agent, with `metadata["child_session_id"]`, `metadata["agent"]` (its name) and
  `metadata["agent_call_id"]` (the call): "researcher: runs in session s-1.c1". A call run
  again on resume writes one more ("goes on in session ...").

Because the child's id is the call's, a call run again (its sub-agent's paused calls answered,
or after a crash, once approved) goes on with the same child: a child that holds a prompt is
resumed from its log, never prompted anew. When the sub-agent pauses (`stop_reason ==
"interrupted"`), the call pauses the calling run on the sub-agent's paused calls
(`RunContext`'s `child_runs(ctx).pause`), which the calling run lists under the ids
`"<call id>/<inner call id>"`; the calling agent's `resume` answers them, and the call
hands the answers on to the sub-agent's own resumption. Without a session in the calling
run, the sub-agent runs without one, as any prompt does.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from hookline._ids import session_id_problem
from hookline.context import RunContext, child_runs, status_forwarder
from hookline.errors import SessionNotFound
from hookline.events import Event
from hookline.result import RunResult
from hookline.sessions.base import SessionStore
from hookline.tools import to_content

__all__ = ["ChildLink", "ChildSession", "child_session_id", "children_of", "open_child", "run_subagent"]

_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def child_session_id(session_id: str, call_id: str) -> str:
    """The id of the session in which the sub-agent of call `call_id` of session `session_id` runs.

    `"<session id>.<call id>"`, or, where that would break the rule of session ids (too long,
    or odd characters in the call id), a digest of both in its place: `"sub-<40 hex digits>"`.
    """
    if _PLAIN_ID.fullmatch(call_id) is None:  # it names a URL path segment: keep it plain
        call_id = hashlib.sha256(call_id.encode()).hexdigest()[:24]
    child = f"{session_id}.{call_id}"
    if session_id_problem(child) is None:
        return child
    return "sub-" + hashlib.sha256(f"{session_id}\0{call_id}".encode()).hexdigest()[:40]


@dataclass(frozen=True, slots=True)
class ChildSession:
    """Where a sub-agent call runs: its session, and whether that session already holds its prompt."""

    session_id: str
    """The child session's id (`child_session_id`)."""
    store: SessionStore
    """The calling run's store."""
    user: str | None
    """The calling session's owner."""
    started: bool
    """The child holds a prompt: the call runs again, and the sub-agent goes on from its log."""
    answers: dict[str, Any]
    """The user's answers to the sub-agent's paused calls, by its own call ids (on resume)."""
    link: Event
    """The child's first event: the marker naming the calling session and call."""


async def open_child(ctx: RunContext[Any], agent: str) -> ChildSession | None:
    """The child session of the tool call of `ctx` for sub-agent `agent`; None when the calling run has no session.

    Records the link in the calling run's log, and reads the child (one read; two when it exists).
    """
    runs = child_runs(ctx)
    if runs is None or runs.store is None or ctx.session_id is None or ctx.call_id is None:
        return None
    session_id = child_session_id(ctx.session_id, ctx.call_id)
    started = await _holds_prompt(runs.store, session_id, runs.user)
    runs.link(agent, session_id, started)
    link = Event.marker("hookline", parent_session_id=ctx.session_id, parent_call_id=ctx.call_id)
    return ChildSession(session_id, runs.store, runs.user, started, dict(runs.answers), link)


async def _holds_prompt(store: SessionStore, session_id: str, user: str | None) -> bool:
    try:
        await store.get(session_id, user=user, with_events=False)
    except SessionNotFound:
        return False
    # it exists: a run made it; a process that died before the prompt's write left it empty
    return any(e.role == "user" for e in await store.events(session_id, view="prompt"))


async def run_subagent(request: Any, ctx: RunContext[Any], agent: str) -> str:
    """Run `request` (the sub-agent's `PromptRequest`) for the tool call of `ctx`; its output as a tool result.

    The calling run's deps are passed on and the sub-agent's status is forwarded to it live
    (when it records any). A sub-agent that pauses pauses the call (and so the calling run)
    on its paused calls; what the tool returns then is dropped.
    """
    if ctx.deps is not None:
        request.deps(ctx.deps)
    result = await _run(request, ctx, agent)
    if result.stop_reason == "interrupted":
        runs = child_runs(ctx)
        if runs is not None:
            runs.pause(agent, result.interruptions)
        return ""
    return to_content(result.output)


async def _run(request: Any, ctx: RunContext[Any], agent: str) -> RunResult:
    forward = status_forwarder(ctx)
    if forward is None:
        result: RunResult = await request
        return result
    async for event in request.stream():
        forward(event, agent)
    assert request.result is not None  # set once the stream ends without an error
    return request.result  # type: ignore[no-any-return]


class ChildLink(BaseModel):
    """A child session of a session, as its log names it (`GET /v1/sessions/{id}/children`)."""

    model_config = ConfigDict(extra="forbid")
    session_id: str
    """The child session's id."""
    call_id: str
    """The call of the parent session whose tool ran the sub-agent there."""
    agent: str
    """The sub-agent's name."""
    seq: int | None = None
    """The seq of the parent's first line naming the child (its first run's start)."""


def children_of(events: Iterable[Event]) -> list[ChildLink]:
    """The child sessions a session's log (any view but `prompt`) names, once each, in the order they first ran."""
    found: dict[str, ChildLink] = {}
    for event in events:
        child = event.metadata.get("child_session_id") if event.kind != "message" else None
        if isinstance(child, str) and child not in found:
            found[child] = ChildLink(session_id=child, call_id=str(event.metadata.get("agent_call_id", "")),
                                     agent=str(event.metadata.get("agent", event.author)), seq=event.seq)
    return list(found.values())
