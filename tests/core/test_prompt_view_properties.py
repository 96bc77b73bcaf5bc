"""Properties of the prompt view (`hookline.conversation`, `select_view`), each against a simple reference.

The prompt view is what a model is sent from a session's log: its complete messages, in
log order, where every tool call has exactly one result right after it, and where a call
the user made without a result in the same message is told as text. The reference for
the invariant is `invariant.conversation_error`, written apart from the library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from hypothesis import event, given, settings
from hypothesis import strategies as st

from hookline import Event, Message, TextPart, ToolCallPart, ToolResultPart
from hookline.conversation import conversation_problem, open_calls, user_actions_as_text
from hookline.events import select_view

from .invariant import conversation_error

QUICK = settings(max_examples=300, deadline=None, derandomize=True)
IDS = ("c1", "c2", "c3")


def _call(call_id: str) -> ToolCallPart:
    return ToolCallPart(id=call_id, name=f"tool_{call_id}", arguments={"id": call_id})


def _result(call_id: str) -> ToolResultPart:
    return ToolResultPart(call_id=call_id, content=f"result of {call_id}")


def _message(role: Literal["user", "assistant", "tool", "system"], *parts: object) -> Message:
    # Unchecked on purpose: the invariant's checks must see shapes `Message(...)` would refuse too.
    return Message.from_valid_parts(role, list(parts))  # type: ignore[arg-type]


@st.composite
def turns(draw: st.DrawFn) -> list[Message]:
    """One valid turn: a prompt (maybe with a call the user made, answered), calls and their results, an answer."""
    user_call = draw(st.sampled_from([None, "u1"]))
    prompt = [TextPart(text="do it")] + ([_call(user_call), _result(user_call)] if user_call else [])
    turn = [_message("user", *prompt)]
    ids = draw(st.lists(st.sampled_from(IDS), unique=True, max_size=3))
    if ids:
        turn.append(_message("assistant", *map(_call, ids)))
        answered = draw(st.permutations(ids))
        if draw(st.booleans()):  # all results in one tool message, or one message each
            turn.append(_message("tool", *map(_result, answered)))
        else:
            turn += [_message("tool", _result(i)) for i in answered]
    turn.append(_message("assistant", TextPart(text="done")))
    return turn


stray_messages = st.one_of(
    st.builds(lambda: _message("user", TextPart(text="more"))),
    st.builds(lambda i: _message("user", _call(i)), st.sampled_from(IDS)),
    st.builds(lambda i: _message("user", _result(i)), st.sampled_from(IDS)),
    st.builds(lambda i: _message("assistant", _call(i)), st.sampled_from(IDS)),
    st.builds(lambda i: _message("assistant", _result(i)), st.sampled_from(IDS)),
    st.builds(lambda i: _message("tool", _result(i)), st.sampled_from(IDS)),
    st.builds(lambda: _message("tool", TextPart(text="not a result"))),
    st.builds(lambda i: _message("system", _call(i)), st.sampled_from(IDS)),
    st.builds(lambda: _message("system", TextPart(text="be brief"))),
)


@dataclass(frozen=True)
class Edit:
    """Break (or not) a valid conversation: drop, copy or move a message, or put a stray one in."""

    kind: Literal["drop", "copy", "move", "insert"]
    at: int
    to: int
    stray: Message

    def apply(self, messages: list[Message]) -> None:
        if not messages:
            messages.append(self.stray)
            return
        at, to = self.at % len(messages), self.to % (len(messages) + 1)
        if self.kind == "drop":
            del messages[at]
        elif self.kind == "copy":
            messages.insert(to, messages[at])
        elif self.kind == "move":
            messages.insert(to, messages.pop(at))
        else:
            messages.insert(to, self.stray)


edits = st.builds(Edit, st.sampled_from(["drop", "copy", "move", "insert"]), st.integers(0, 30), st.integers(0, 30),
                  stray_messages)


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """A valid conversation of a few turns, then up to two edits that may break it."""
    messages = [m for turn in draw(st.lists(turns(), max_size=3)) for m in turn]
    if draw(st.booleans()):  # a run paused with its calls open
        messages = messages[: -1 - draw(st.integers(0, 2))] if messages else messages
    for edit in draw(st.lists(edits, max_size=2)):
        edit.apply(messages)
    return messages


@QUICK
@given(messages=conversations(), open_tail=st.booleans())
def test_the_library_and_the_reference_agree_on_what_breaks_the_invariant(
    messages: list[Message], open_tail: bool
) -> None:
    expected = conversation_error(messages, allow_open_tail=open_tail)
    found = conversation_problem(messages, allow_open_tail=open_tail)
    event("valid" if expected is None else "invalid")
    assert (found is None) == (expected is None), f"library: {found}; reference: {expected}"


def test_a_tool_message_that_answers_no_call_breaks_the_invariant() -> None:
    """An empty tool message would reach the provider as a result without a call id."""
    messages = [Message.user("hi"), Message("tool", []), Message.assistant("done")]
    assert conversation_error(messages) is not None
    assert conversation_problem(messages) is not None


def _open_calls_reference(messages: list[Message]) -> list[ToolCallPart]:
    """The calls of the last assistant message not answered by the tool messages after it (if only those follow)."""
    tail: list[Message] = []
    for message in reversed(messages):
        if message.role != "tool":
            if message.role != "assistant":
                return []
            answered = {r.call_id for m in tail for r in m.tool_results}
            return [c for c in message.tool_calls if c.id not in answered]
        tail.append(message)
    return []


@QUICK
@given(messages=conversations())
def test_open_calls_are_the_last_assistant_calls_still_unanswered(messages: list[Message]) -> None:
    assert open_calls(messages) == _open_calls_reference(messages)


user_parts = st.lists(
    st.one_of(
        st.builds(TextPart, text=st.sampled_from(["hello", ""])),
        st.builds(_call, st.sampled_from(IDS)),
        st.builds(_result, st.sampled_from(IDS)),
    ),
    max_size=5,
)


@QUICK
@given(parts=user_parts, role=st.sampled_from(["user", "user", "user", "assistant", "tool", "system"]))
def test_a_call_the_user_made_without_its_result_is_told_as_text(
    parts: list[TextPart | ToolCallPart | ToolResultPart], role: Literal["user", "assistant", "tool", "system"]
) -> None:
    message = _message(role, *parts)
    seen = user_actions_as_text(message)

    answered = {p.call_id for p in parts if isinstance(p, ToolResultPart)}
    told = [isinstance(p, ToolCallPart) and p.id not in answered and role == "user" for p in parts]
    event(f"{sum(told)} call(s) told as text")
    if not any(told):
        assert seen is message, "a message without an unanswered user call is sent as it is"
        return
    assert seen.role == "user"
    assert len(seen.parts) == len(parts), "one part for one part, in order"
    for before, after, as_text in zip(parts, seen.parts, told, strict=True):
        if as_text:
            assert isinstance(before, ToolCallPart)
            assert isinstance(after, TextPart)
            assert after.text.startswith(f"The user called {before.name}(")
        else:
            assert after == before
    assert user_actions_as_text(seen) is seen, "told once, nothing is left to tell"
    assert message.parts == parts, "the log keeps the parts"


def _logged(seq: int, kind: str, partial: bool) -> Event:
    role, source = ("user", None) if kind == "message" else (None, "agent" if kind == "status" else None)
    return Event(author="a", kind=kind, role=role, source=source, seq=seq, partial=partial)  # type: ignore[arg-type]


@QUICK
@given(shape=st.lists(st.tuples(st.sampled_from(["message", "status", "marker"]), st.booleans()), max_size=10))
def test_the_views_keep_log_order(shape: list[tuple[str, bool]]) -> None:
    stored = [_logged(seq, kind, partial) for seq, (kind, partial) in enumerate(shape, 1)]
    complete = [e for e in stored if not e.partial]
    partial = [e for e in stored if e.partial]

    assert select_view(stored, "prompt") == [e for e in complete if e.kind == "message"]
    assert select_view(stored, "ui") == [e for e in [*complete, *partial] if e.kind != "marker"]
    assert select_view(stored, "all") == stored
