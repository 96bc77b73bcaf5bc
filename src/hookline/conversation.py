"""The conversation invariant the loop keeps, and checks after hooks edit messages.

Every tool call an assistant makes is answered exactly once, by tool-role messages that
come right after it, and no result answers a call that is not open. A user-authored call
(a user's own recorded action) is answered inside the same user message.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookline.messages import Message, TextPart, ToolCallPart, ToolResultPart
from hookline.models._render import user_action

__all__ = ["conversation_problem", "open_calls", "response_problem", "user_actions_as_text"]


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
    if pending:
        upcoming = [
            Message.from_valid_parts("tool", [ToolResultPart(call_id=c.id, content="")])
            for c in pending
        ]
        return conversation_problem([*messages, *upcoming], allow_open_tail=allow_open_tail)
    unanswered: dict[str, str] = {}
    for index, message in enumerate(messages):
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
    if unanswered and not allow_open_tail:
        return f"the conversation ends with unanswered tool call(s) {', '.join(sorted(unanswered))}"
    return None


def response_problem(messages: Sequence[Message], response: object) -> str | None:
    """What is wrong with `response` as the model's next message after `messages`, or None."""
    if not isinstance(response, Message) or response.role != "assistant":
        return f"state.response must be an assistant Message, not {response!r:.80}"
    return conversation_problem([*messages, response], allow_open_tail=True)


def _answer(pending: dict[str, str], message: Message, index: int) -> str | None:
    for part in message.parts:
        if not isinstance(part, ToolResultPart):
            return f"messages[{index}] (tool) holds a {part.type} part; tool messages hold only results"
        if part.call_id not in pending:
            return f"messages[{index}] answers call {part.call_id!r}, which is not an open tool call"
        del pending[part.call_id]
    return None


def _open(pending: dict[str, str], message: Message, index: int) -> str | None:
    calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
    results = [p for p in message.parts if isinstance(p, ToolResultPart)]
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
