"""The tools of an AI SDK chat request: the client's own, and the answers its assistant message carries.

- The client's tools (the AI SDK's client-side tools, run by `useChat`'s `onToolCall`) come in
  the request body's `tools`, as `DefaultChatTransport({body: {tools}})` sends it on every
  request: `{name: {description?, inputSchema?}}`, the shape of the AI SDK's `ToolSet` with
  JSON schemas. Each is a `FrontendTool` (as AG-UI's frontend tools are) offered to the model
  for that run: its call pauses the run until the client's output comes back.
- An assistant message last answers the calls the chat waits for, by their tool parts: in
  state `approval-responded` for a call paused for approval (or for the calls paused inside
  the sub-agent it runs, which the chat holds no part of), `output-available` or
  `output-error` (`addToolOutput`) for a call to a client tool. The session's log decides what
  a part is: a call it never made is refused, a call answered already is known (the client
  sends the whole message back, earlier steps included) and left as the log has it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hookline._run.resume import Approval, paused_calls
from hookline.events import Event
from hookline.result import Interruption
from hookline.server.errors import ProtocolError
from hookline.server.protocols.base import FrontendTool

__all__ = ["Answers", "answers_of", "approval_id", "client_tools", "is_client_call"]

_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A tool name every provider takes (and the AI SDK's part type `tool-<name>` keeps)."""
_TOOLS_SHAPE = ('"tools" is an object of the client\'s tools by name: {"get_location": {"description": "...", '
                '"inputSchema": {JSON schema}}}, sent in every request (DefaultChatTransport\'s body)')
_ANSWERING = ("approval-responded", "output-available", "output-error")


def is_client_call(call: Interruption) -> bool:
    """Whether a paused call waits for the client to run it (a `FrontendTool`'s), not for an approval."""
    return call.response_schema == FrontendTool.ANSWER_SCHEMA


def client_tools(given: Any, taken: Iterable[str]) -> dict[str, FrontendTool]:
    """The client's tools a request body declares (`tools`), by name; `taken`: the agent's own tools' names.

    Raises:
        ProtocolError: `tools` is not of that shape, or a name is not a tool name or is one of the agent's.
    """
    if given is None:
        return {}
    if not isinstance(given, dict):
        raise ProtocolError(_TOOLS_SHAPE)
    tools = {name: _client_tool(name, spec) for name, spec in given.items()}
    clash = sorted(set(tools) & set(taken))
    if clash:
        raise ProtocolError(f"client tool(s) {', '.join(clash)} have the name of the agent's own tools, which run "
                            "on the server: rename them")
    return tools


def _client_tool(name: str, spec: Any) -> FrontendTool:
    if not _NAME.fullmatch(name):
        raise ProtocolError(f"client tool name {name!r}: a tool name is 1 to 64 letters, digits, _ or -")
    if not isinstance(spec, dict):
        raise ProtocolError(f"tools[{name!r}]: {_TOOLS_SHAPE}")
    description, schema = spec.get("description", ""), spec.get("inputSchema", {"type": "object"})
    if not isinstance(description, str):
        raise ProtocolError(f"tools[{name!r}].description must be a string")
    if not isinstance(schema, dict):
        raise ProtocolError(f"tools[{name!r}].inputSchema must be the JSON schema (an object) of its input, as "
                            "z.toJSONSchema(...) or the AI SDK's jsonSchema(...) gives it")
    return FrontendTool(name, description, schema)


@dataclass
class Answers:
    """What an assistant message answers: the calls the chat waits for, as a resume takes them."""

    approvals: dict[str, Approval] = field(default_factory=dict)
    """Each answered call's answer, by call id: an approval, or a client tool's output."""
    outputs: set[str] = field(default_factory=set)
    """The calls the client answered with its own tool's output (it holds that output)."""


def answers_of(message: dict[str, Any], log: list[Event], tools: Mapping[str, FrontendTool]) -> Answers:
    """The answers of an assistant message's tool parts to the calls the session's `log` (its `all` view) waits for.

    `log` holds at least the runs since the prompt the message answers: the calls its parts name.

    Raises:
        ProtocolError: A part names a call the chat never made, under another tool's name; it
            answers a call the wrong way (an output for a call paused for approval, an approval
            for a client's call); a client's call whose tool this request does not declare; or
            the message answers no call the chat waits for.
    """
    paused = {c.call_id: c for c in paused_calls(log)}
    known = {c.id: c.name for e in log if e.kind == "message" and e.role == "assistant" and not e.partial
             for c in e.to_message().tool_calls} | {c.call_id: c.name for c in paused.values()}
    answers = Answers()
    for part in message["parts"]:
        if isinstance(part, dict) and part.get("state") in _ANSWERING:
            call_id = _call_id(part, known)
            call = paused.get(call_id)
            if call is not None:
                _answer(part, call, tools, answers)
            elif part["state"] == "approval-responded":  # the calls paused inside it, if any; else answered already
                answers.approvals |= dict.fromkeys(_paused_inside(call_id, paused), _approval(part))
    if not answers.approvals:
        raise ProtocolError("the last message is the assistant's but answers no call the chat waits for: send the "
                            "next user message, or the assistant message with its waiting tool parts answered "
                            "(approval-responded; output-available or output-error for the client's own tools)")
    return answers


def approval_id(call_id: str) -> str:
    """The `approvalId` of the approval asked on call `call_id`'s part: for the call, or for those paused inside it."""
    return f"approve:{call_id}"


def _paused_inside(call_id: str, paused: Mapping[str, Interruption]) -> list[str]:
    """The paused calls of the sub-agent that call `call_id` runs (`<call_id>/...`), whose approval its part asks."""
    return [inner for inner in paused if inner.startswith(f"{call_id}/")]


def _call_id(part: dict[str, Any], known: Mapping[str, str]) -> str:
    """The call a tool part names, checked against the calls the chat made (`known`: call id -> tool name)."""
    call_id = part.get("toolCallId")
    if not isinstance(call_id, str):
        raise ProtocolError(f"a tool part in state {part['state']} needs its toolCallId")
    if call_id not in known:
        raise ProtocolError(f"tool part {call_id!r} answers a call this chat never made")
    kind = str(part.get("type", ""))
    name = part.get("toolName") if kind == "dynamic-tool" else kind.removeprefix("tool-")
    if name != known[call_id]:
        raise ProtocolError(f"tool part {call_id!r} is a {kind} part, but that call is to {known[call_id]}: send "
                            f"the part as the stream made it (tool-{known[call_id]})")
    return call_id


def _answer(part: dict[str, Any], call: Interruption, tools: Mapping[str, FrontendTool], answers: Answers) -> None:
    if part["state"] == "approval-responded":
        if is_client_call(call):
            raise ProtocolError(f"{call.name} runs in the client: answer its call {call.call_id!r} with its output "
                                "(addToolOutput), not an approval")
        answers.approvals[call.call_id] = _approval(part)
        return
    if not is_client_call(call):
        raise ProtocolError(f"{call.name} runs on the server: answer its approval (addToolApprovalResponse), not "
                            f"with an output of its call {call.call_id!r}")
    tool = tools.get(call.name)
    if tool is None:
        raise ProtocolError(f"{call.name} is not among this request's client tools: send the same tools in every "
                            "request's body (DefaultChatTransport's body option)")
    if part["state"] == "output-error":
        tool.failed[call.call_id] = str(part.get("errorText") or f"{call.name} failed in the client")
        answers.approvals[call.call_id] = {"response": tool.failed[call.call_id]}
    else:
        answers.approvals[call.call_id] = {"response": part.get("output")}
    answers.outputs.add(call.call_id)


def _approval(part: dict[str, Any]) -> Approval:
    approval = part.get("approval") or {}
    if not isinstance(approval, dict) or not isinstance(approval.get("approved"), bool):
        raise ProtocolError("an approval-responded tool part needs its toolCallId and approval.approved")
    reason = approval.get("reason")
    return True if approval["approved"] else (str(reason) if reason else False)
