"""Forks: a new session that shares a session's log up to an event (time travel on the log).

A fork copies the events before the one it is made at, adds a status line saying where it
came from and who forked it, then, for an edit, the edited message (a user message or a
tool result). For a tool result it also copies the other results of the same model turn,
so the conversation stays valid. A fork without an edit may be made at any event: before an
answer, it is that answer regenerated. The new session then goes on with `resume`
(approvals `{}`): the model is called on the conversation as it stands, and the source
session is left as it was.

Copied events get new ids, seqs and times; each keeps where it came from, and its
original time, in `metadata["copied_from"]`. The fork's `State.data` is the `state` the fork
asks for, else the state recorded last before the event it is made at (by runs with
`StatusOptions(state=True)`), else a copy of the source session's as it is now.
Images and files are copied with their bytes: the fork's log names them by digest as the
source's does, and its store must hold them. A fork reads only what it copies: the log up to
its event, and for an edited tool result the page after it that holds the rest of its turn.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookline._run.prompt_view import load_media
from hookline.conversation import conversation_problem, user_actions_as_text
from hookline.errors import ConfigError
from hookline.events import Event
from hookline.messages import Part, TextPart, ToolCallPart, ToolResultPart
from hookline.server.inspect_schemas import ForkBody
from hookline.server.recorded_state import state_before
from hookline.sessions import Session, SessionStore

__all__ = ["FORK_AUTHOR", "fork_session", "forked_log"]

FORK_AUTHOR = "hookline"
"""The author of the line that records a fork (and of the server's other notes in a log)."""

_TURN_PAGE = 1000  # the events read after an edited tool result, for the other results of its turn


async def fork_session(store: SessionStore, source: Session, body: ForkBody, user: str) -> Session:
    """Create the fork of `source` that `body` asks for, owned by `user`; answer it (without events).

    Raises:
        ConfigError: `body` does not fit the log (the message says why and what would).
        SessionExists: `body.id` is taken.
    """
    events = await _read_to(store, source.id, body)
    log = forked_log(source.id, events, body, user)
    log = await load_media(store, source.id, log)  # the fork's store keeps its own copy of the bytes
    state = body.state if body.state is not None else state_before(events, body.at_seq)
    if state is None:
        state = dict(source.state)
    fork = await store.create(app=source.app, user=user, session_id=body.id, state=state)
    try:
        await store.append_events(fork.id, log)
    except BaseException:
        await store.delete(fork.id)
        raise
    return await store.get(fork.id, with_events=False)


async def _read_to(store: SessionStore, source_id: str, body: ForkBody) -> list[Event]:
    """The source's stored events up to event `at_seq`; after it, a page more when an edit may be of a tool result."""
    through = await store.page(source_id, view="all", before_seq=body.at_seq + 1, limit=body.at_seq)
    if body.content is None:
        return through
    return through + await store.page(source_id, view="all", after_seq=body.at_seq, before_seq=body.at_seq + 1
                                      + _TURN_PAGE, limit=_TURN_PAGE)


def forked_log(source_id: str, events: Sequence[Event], body: ForkBody, user: str) -> list[Event]:
    """The events of the fork: the copied prefix, the fork's own line, the edited message, the turn's other results."""
    logged = [e for e in events if not e.partial and e.seq is not None]
    target = next((e for e in logged if e.seq == body.at_seq), None)
    editing = body.text is not None or body.content is not None
    if target is None or (editing and (target.kind != "message" or target.role not in ("user", "tool"))):
        raise ConfigError(_not_editable(source_id, body.at_seq, target))
    before = [_copy(source_id, e) for e in logged if e.seq is not None and e.seq < body.at_seq]
    rest: list[Event] = []
    if not editing:
        if not any(e.kind == "message" for e in before):
            raise ConfigError(f"nothing comes before event {body.at_seq} to fork: fork at a later event, or edit "
                              "the first message (send `text`)")
        edited, what = None, ""
    elif target.role == "user":
        edited, what = _edit_user(target, body), ": edited the user message"
    else:
        edited, call_id = _edit_result(target, body)
        what = f": edited the result of {_result_name(target, call_id)}"
        rest = [_copy(source_id, e) for e in _rest_of_turn(logged, target, call_id)]
    where = f"at event {body.at_seq}" if editing else f"before event {body.at_seq}"
    state_note = ", with its state edited" if body.state is not None else ""
    note = Event.status(FORK_AUTHOR, "agent", f"forked from session {source_id} {where} by {user}{what}{state_note}",
                        forked_from=_origin(source_id, body, user, editing))
    log = [*before, note, *([edited] if edited is not None else []), *rest]
    _check_conversation(log, body.at_seq)
    return log


def _origin(source_id: str, body: ForkBody, user: str, editing: bool) -> dict[str, object]:
    """The fork line's `forked_from`: the source and the event; `edited: false` for a fork without an edit."""
    origin: dict[str, object] = {"session_id": source_id, "seq": body.at_seq, "user": user}
    if not editing:
        origin["edited"] = False
    if body.state is not None:
        origin["state_edited"] = True
    return origin


def _not_editable(source_id: str, seq: int, target: Event | None) -> str:
    if target is None:
        return f"session {source_id!r} has no event {seq}; fork at the seq of one of its events"
    what = f"a {target.role} message" if target.kind == "message" else f"a {target.kind} event"
    return (f"event {seq} is {what}; an edit forks at the seq of a user message (send `text`) or a tool result "
            "(send `content`); send neither to fork before any event")


def _copy(source_id: str, event: Event) -> Event:
    origin = {"session_id": source_id, "seq": event.seq,
              "created_at": event.created_at.isoformat() if event.created_at else None}
    return event.model_copy(update={"id": None, "session_id": None, "seq": None, "created_at": None,
                                    "metadata": {**event.metadata, "copied_from": origin}})


def _edit_user(target: Event, body: ForkBody) -> Event:
    if body.text is None:
        raise ConfigError(f"event {body.at_seq} is a user message: send its new `text`, not `content`")
    parts: list[Part] = []
    for part in target.parts:
        if isinstance(part, TextPart):
            if not any(isinstance(p, TextPart) for p in parts):
                parts.append(TextPart(text=body.text))
        else:
            parts.append(part)
    if not any(isinstance(p, TextPart) for p in parts):
        parts.append(TextPart(text=body.text))
    return Event(author=target.author, kind="message", role="user", parts=parts)


def _edit_result(target: Event, body: ForkBody) -> tuple[Event, str]:
    if body.content is None:
        raise ConfigError(f"event {body.at_seq} is a tool result: send its new `content`, not `text`")
    results = [p for p in target.parts if isinstance(p, ToolResultPart)]
    chosen = [r for r in results if body.call_id in (None, r.call_id)]
    if len(chosen) != 1:
        ids = ", ".join(r.call_id for r in results)
        raise ConfigError(f"event {body.at_seq} holds the results of {ids}; name one in `call_id`"
                          if body.call_id is None else f"event {body.at_seq} holds no result of call "
                          f"{body.call_id!r}; it holds: {ids}")
    old = chosen[0]
    new = ToolResultPart(call_id=old.call_id, content=body.content, is_error=body.is_error, name=old.name)
    parts = [new if p is old else p for p in target.parts]
    return Event(author=target.author, kind="message", role="tool", parts=parts), old.call_id


def _result_name(target: Event, call_id: str) -> str:
    return next((p.name for p in target.parts if isinstance(p, ToolResultPart) and p.call_id == call_id),
                "") or target.author


def _rest_of_turn(logged: Sequence[Event], target: Event, call_id: str) -> list[Event]:
    """The other results of the edited result's turn (and their status lines) that follow it."""
    assert target.seq is not None
    calls = _turn_calls(logged, target.seq)
    rest = []
    for event in (e for e in logged if e.seq is not None and e.seq > target.seq):
        if event.kind == "message":
            if event.role != "tool":
                break
            rest.append(event)
        elif event.metadata.get("call_id") in calls and event.metadata.get("call_id") != call_id:
            rest.append(event)
        elif event.kind == "status" and event.source == "agent":
            break  # the turn is over: the next model call, or the run's end
    return rest


def _turn_calls(logged: Sequence[Event], seq: int) -> set[str]:
    for event in reversed([e for e in logged if e.seq is not None and e.seq < seq]):
        if event.kind == "message" and event.role == "assistant":
            return {p.id for p in event.parts if isinstance(p, ToolCallPart)}
    return set()


def _check_conversation(log: Sequence[Event], seq: int) -> None:
    messages = [user_actions_as_text(e.to_message()) for e in log if e.kind == "message"]
    problem = conversation_problem(messages, allow_open_tail=True)
    if problem:
        raise ConfigError(f"a fork at event {seq} would not be a valid conversation: {problem}")
