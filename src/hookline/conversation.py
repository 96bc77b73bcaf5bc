"""The conversation invariant the loop keeps, and checks after hooks edit messages.

Every tool call an assistant makes is answered exactly once, by tool-role messages that
come right after it, and no result answers a call that is not open. A user-authored call
(a user's own recorded action) is answered inside the same user message.

The check reads the messages in order, keeping the calls still open. `ConversationCheck`
keeps that reading between checks, so that the loop, which checks before every model call
once a hook has run, reads only the messages added since: a run's checks then cost what
its messages do, not the square of their number. `HookWatch` runs those checks for a
run's hooks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hookline.errors import HookError
from hookline.hook_points import HookPoint
from hookline.messages import Message, TextPart, ToolCallPart, ToolResultPart, edit_stamp, tracks_edits
from hookline.models._render import user_action

if TYPE_CHECKING:
    from hookline.state import State

__all__ = ["ConversationCheck", "conversation_problem", "open_calls", "response_problem", "user_actions_as_text"]


def conversation_problem(
    messages: Sequence[Message], *, allow_open_tail: bool = False, pending: Sequence[ToolCallPart] = ()
) -> str | None:
    """Describe what breaks the invariant in `messages`, or return None when they are valid.

    Args:
        messages: The conversation to check.
        allow_open_tail: Whether the last assistant message may still await its results.
        pending: Calls whose results the loop is about to append (in a tool turn): the
            conversation must be valid once they are, so the calls must be last and open.
    """
    unanswered: dict[str, str] = {}
    return _read(unanswered, messages) or _ending(unanswered, len(messages), allow_open_tail, pending)


def response_problem(messages: Sequence[Message], response: object) -> str | None:
    """What is wrong with `response` as the model's next message after `messages`, or None."""
    if not isinstance(response, Message) or response.role != "assistant":
        return f"state.response must be an assistant Message, not {response!r:.80}"
    return conversation_problem([*messages, response], allow_open_tail=True)


class ConversationCheck:
    """`conversation_problem` and `response_problem` for one live conversation, read incrementally.

    After a check finds the messages valid, it keeps the list, how much of it was read and
    the calls left open there. The next check of the same list goes on from there when
    nothing read may have changed: the caller says the list was only appended to, no
    message was edited in place since (`edit_stamp()`), and every message read notes its
    edits (`tracks_edits`). Otherwise it reads from the first message. Either way the
    answer is the one `conversation_problem` gives.
    """

    __slots__ = ("_messages", "_open", "_read", "_stamp")

    def __init__(self) -> None:
        self._messages: Sequence[Message] | None = None
        self._read = 0
        self._open: dict[str, str] = {}
        self._stamp = -1

    def problem(
        self,
        messages: Sequence[Message],
        *,
        edited: bool = True,
        allow_open_tail: bool = False,
        pending: Sequence[ToolCallPart] = (),
    ) -> str | None:
        """What breaks the invariant in `messages`, or None (see `conversation_problem`).

        Args:
            messages: The conversation to check.
            edited: Whether `messages` may have changed otherwise than by appends since the
                last check (then it is read from the first message).
            allow_open_tail: Whether the last assistant message may still await its results.
            pending: Calls whose results are about to be appended (see `conversation_problem`).
        """
        problem, unanswered = self._catch_up(messages, edited)
        return problem or _ending(unanswered, len(messages), allow_open_tail, pending)

    def response_problem(self, messages: Sequence[Message], response: object, *, edited: bool = True) -> str | None:
        """What is wrong with `response` as the model's next message after `messages`, or None."""
        if not isinstance(response, Message) or response.role != "assistant":
            return f"state.response must be an assistant Message, not {response!r:.80}"
        problem, unanswered = self._catch_up(messages, edited)
        return problem or _read(unanswered, [response], numbered_from=len(messages))

    def _catch_up(self, messages: Sequence[Message], edited: bool) -> tuple[str | None, dict[str, str]]:
        """Read what was not read yet: the first problem, or None, and the calls left open.

        A valid reading is kept for the next check (the caller gets a copy of the open calls).
        """
        stamp = edit_stamp()
        start = self._read
        if edited or messages is not self._messages or stamp != self._stamp or len(messages) < start:
            start, self._messages, self._read, self._open = 0, None, 0, {}
        unanswered = dict(self._open)
        problem = _read(unanswered, messages, start)
        if problem is None and all(tracks_edits(messages[i]) for i in range(start, len(messages))):
            self._messages, self._read, self._open, self._stamp = messages, len(messages), dict(unanswered), stamp
        elif problem is None:
            self._messages = None
        return problem, unanswered


class HookWatch:
    """The conversation a run's hooks leave, checked.

    After each hook that changed it, and, before each model call, once more for edits of a
    message's parts in place, which no hook's return shows (`edit_stamp`). A broken
    conversation is the hook's `HookError`.
    """

    __slots__ = ("_check", "_since")

    def __init__(self) -> None:
        self._check = ConversationCheck()  # reads only what was appended since its last check
        self._since: list[tuple[str, HookPoint]] = []  # the hooks that ran since the last check

    def after_hook(self, name: str, point: HookPoint, state: State, response: Message | None,
                   pending: Sequence[ToolCallPart]) -> None:
        """Check after hook `name` at `point` ran (`response`: `state.response` before it ran)."""
        self._since.append((name, point))
        if not state.messages.changed and state.response is response:
            return
        edited, state.messages.changed = state.messages.changed, False
        if point is HookPoint.AFTER_LLM:
            problem = self._check.response_problem(state.messages, state.response, edited=edited)
        else:
            problem = self._check.problem(state.messages, edited=edited, pending=pending)
        if problem:
            raise HookError(f"hook {name!r} at {point.value} broke the conversation: {problem}",
                            hook=name, point=point.value)

    def before_model(self, state: State) -> None:
        """Check what the hooks since the last model call may have edited in place."""
        if not self._since:
            return
        ran, self._since = self._since, []
        problem = self._check.problem(state.messages, edited=state.messages.changed)
        if problem:
            names = ", ".join(f"{name!r} at {point.value}" for name, point in ran)
            name, point = ran[-1]
            raise HookError(f"the conversation was broken by an in-place edit in one of the hooks {names}: {problem}",
                            hook=name, point=point.value)


def _read(
    unanswered: dict[str, str], messages: Sequence[object], start: int = 0, *, numbered_from: int = 0
) -> str | None:
    """Read `messages[start:]` on from the calls `unanswered` (updated); the first problem, or None.

    Problems name message `numbered_from + i` for `messages[i]`.
    """
    for i in range(start, len(messages)):
        message, index = messages[i], numbered_from + i
        if not isinstance(message, Message):
            return f"messages[{index}] is a {type(message).__name__}, not a Message"
        if message.role == "tool":
            problem = _answer(unanswered, message, index)
        elif unanswered:
            missing = ", ".join(sorted(unanswered))
            problem = f"messages[{index}] ({message.role}) comes before the results of call(s) {missing}"
        else:
            problem = _open(unanswered, message, index)
        if problem:
            return problem
    return None


def _ending(
    unanswered: dict[str, str], length: int, allow_open_tail: bool, pending: Sequence[ToolCallPart]
) -> str | None:
    """The problem of a conversation of `length` messages read up to `unanswered`, once `pending` is answered."""
    if pending:
        upcoming = [Message.from_valid_parts("tool", [ToolResultPart(call_id=c.id, content="")]) for c in pending]
        problem = _read(unanswered, upcoming, numbered_from=length)
        if problem:
            return problem
    if unanswered and not allow_open_tail:
        return f"the conversation ends with unanswered tool call(s) {', '.join(sorted(unanswered))}"
    return None


def _answer(pending: dict[str, str], message: Message, index: int) -> str | None:
    if not message.parts:  # a provider would get a result without a call id
        return f"messages[{index}] (tool) holds no result; a tool message answers at least one call"
    for part in message.parts:
        if not isinstance(part, ToolResultPart):
            return f"messages[{index}] (tool) holds a {part.type} part; tool messages hold only results"
        if part.call_id not in pending:
            return f"messages[{index}] answers call {part.call_id!r}, which is not an open tool call"
        del pending[part.call_id]
    return None


def _open(pending: dict[str, str], message: Message, index: int) -> str | None:
    calls, results = message.tool_calls, message.tool_results
    if message.role == "assistant":
        if results:
            return f"messages[{index}] (assistant) holds a tool result; results go in tool messages"
        for call in calls:
            if call.id in pending:
                return f"messages[{index}] repeats the call id {call.id!r}"
            pending[call.id] = call.name
        return None
    if message.role == "system" and (calls or results):
        return f"messages[{index}] (system) holds tool calls or results"
    called = [c.id for c in calls]
    answered = [r.call_id for r in results]
    if sorted(called) != sorted(answered) or len(set(called)) != len(called):
        return f"messages[{index}] ({message.role}) must answer each of its own tool calls exactly once"
    return None


def open_calls(messages: Sequence[Message]) -> list[ToolCallPart]:
    """The calls of the last assistant message that have no result yet."""
    answered: set[str] = set()
    for message in reversed(messages):
        if message.role == "tool":
            answered.update(p.call_id for p in message.tool_results)
        elif message.role == "assistant":
            return [c for c in message.tool_calls if c.id not in answered]
        else:
            return []
    return []


def user_actions_as_text(message: Message) -> Message:
    """A user message as the model gets it: a call the user made without its result becomes text.

    A user's call answered in the same message is a valid record of what the user did;
    one without a result would reach the provider as an orphan tool id, which it rejects.
    So it becomes a sentence, as every adapter renders it; the log keeps the parts.
    """
    if message.role != "user":
        return message
    calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
    if not calls:
        return message
    answered = {p.call_id for p in message.parts if isinstance(p, ToolResultPart)}
    if all(c.id in answered for c in calls):
        return message
    parts = [
        TextPart(text=user_action(p, None) + "\n\n") if isinstance(p, ToolCallPart) and p.id not in answered else p
        for p in message.parts
    ]
    return Message.from_valid_parts("user", parts)
