"""An independent checker of the conversation invariant, the oracle of the core-loop tests.

Written apart from `hookline.conversation`, so a test can compare the library's check with it.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookline import Message, ToolResultPart


def conversation_error(messages: Sequence[Message], *, allow_open_tail: bool = False) -> str | None:
    """An independent check of the conversation invariant; None when it holds.

    Each tool call of an assistant message is answered exactly once by the tool messages
    right after it; a tool message answers only such calls; a user message that holds
    calls answers exactly those calls itself; system messages hold neither.
    """
    index = 0
    while index < len(messages):
        message = messages[index]
        problem = _message_error(message, index)
        if problem:
            return problem
        index += 1
        own_calls = [c.id for c in message.tool_calls]
        if message.role != "assistant" or not own_calls:
            continue
        answered: list[str] = []
        while index < len(messages) and messages[index].role == "tool":
            if not all(isinstance(p, ToolResultPart) for p in messages[index].parts):
                return f"#{index}: tool message holds a non-result part"
            answered.extend(p.call_id for p in messages[index].tool_results)
            index += 1
        at_open_tail = allow_open_tail and index == len(messages)
        wrong = len(set(answered)) != len(answered) or not set(answered) <= set(own_calls)
        if wrong or (not at_open_tail and set(answered) != set(own_calls)):
            return f"calls {sorted(own_calls)} answered by {sorted(answered)}"
    return None


def _message_error(message: Message, index: int) -> str | None:
    """What is wrong with one message on its own, before looking at its neighbours."""
    own_calls = [c.id for c in message.tool_calls]
    own_results = [r.call_id for r in message.tool_results]
    if message.role == "tool":
        return f"#{index}: tool message without a call before it"
    if message.role == "system" and (own_calls or own_results):
        return f"#{index}: system message holds calls or results"
    if message.role == "user" and sorted(own_calls) != sorted(own_results):
        return f"#{index}: user message with unmatched calls/results"
    if message.role == "assistant" and own_results:
        return f"#{index}: assistant message holds a result"
    if len(set(own_calls)) != len(own_calls):
        return f"#{index}: repeated call id"
    return None
