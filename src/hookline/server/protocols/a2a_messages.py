"""What an A2A message asks of a session: a prompt (a new task), or the answers to a task's paused calls."""

from __future__ import annotations

import json
from typing import Any

from a2a.helpers import get_data_parts
from a2a.types import Message as A2AMessage
from a2a.utils.errors import ContentTypeNotSupportedError, InvalidParamsError

from hookline._run.resume import Approval
from hookline.messages import Message, TextPart
from hookline.result import Interruption

__all__ = ["APPROVAL", "approvals_of", "prompt_of"]

APPROVAL = 'the data part {"approved": true}, or {"approved": false, "reason": "..."}'
"""How to answer a paused task, as error messages say it."""


def prompt_of(message: A2AMessage) -> Message:
    """The user's message to run: its text parts, and its data parts as their JSON text (files are refused)."""
    texts: list[str] = []
    for index, part in enumerate(message.parts):
        content = part.WhichOneof("content")
        if content == "text":
            texts.append(part.text)
        elif content == "data":
            texts.append(json.dumps(get_data_parts([part])[0]))
        else:
            raise ContentTypeNotSupportedError(message=f"part {index} is a {content or 'empty'} part: this agent "
                                                       "takes text parts and data parts (read as JSON text)")
    if not any(text.strip() for text in texts):
        raise InvalidParamsError(message="the message has no text: send a text part (or a data part)")
    return Message(role="user", parts=[TextPart(text=text) for text in texts])


def approvals_of(message: A2AMessage, paused: list[Interruption], task_id: str) -> dict[str, Approval]:
    """The answers to every paused call of the task, from the message's one approval data part.

    `{"approved": true}` approves each (a call that asked a question gets `"response"`, when
    the part has one, as its answer); `{"approved": false, "reason": ...}` refuses each.
    """
    found = [data for data in get_data_parts(message.parts) if isinstance(data, dict) and "approved" in data]
    if len(found) != 1:
        problem = "holds no" if not found else "holds more than one"
        raise InvalidParamsError(message=f"the message to task {task_id!r} {problem} approval: send {APPROVAL}")
    answer = found[0]
    approved, reason = answer.get("approved"), answer.get("reason")
    if not isinstance(approved, bool) or not isinstance(reason, str | None):
        raise InvalidParamsError(message=f'"approved" must be true or false and "reason" a string: send {APPROVAL}')
    return {call.call_id: _answer(call.response_schema is not None, approved, reason, answer) for call in paused}


def _answer(question: bool, approved: bool, reason: str | None, answer: dict[str, Any]) -> Approval:
    if not approved:
        return reason or False
    if question and "response" in answer:
        return {"response": answer["response"]}
    return True
