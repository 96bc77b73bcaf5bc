"""`Caller`: the run behind one MCP tool call, where the call's log lines go and who answers its questions.

A server asks the user something (MCP elicitation) with `elicitation/create` while it runs
a call (2025-era connections), or answers the call with an `input_required` result holding
such a request (2026-07-28, which the SDK turns into the same callback and a retry of the
call). Either way the question reaches the `Caller` of its call and waits there for the
user's `Reply`: the toolset pauses the run at that call (`RunContext.ask`) and gives the
reply when the run is resumed. Meanwhile the call's log lines go nowhere: the run that
made it has ended, and the resumed run takes them over.
"""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types

from hookline._run.status import LogCapture
from hookline.result import Reply

__all__ = ["Caller", "elicit_result", "question_of"]


class Caller:
    """The run behind one tool call: where its log lines and progress go, and its user's replies.

    Args:
        capture: Where the call's log lines and progress go (None: nowhere).
        reply: A reply to give the first question at once (the run was resumed with it, and
            the call sent again); None to wait for one.
        pausable: Whether a question can pause the run (False outside a run: it is cancelled).
    """

    def __init__(self, capture: LogCapture | None, reply: Reply | None, *, pausable: bool) -> None:
        self.capture = capture
        self.reply = reply
        self.pausable = pausable
        self.asked: types.ElicitRequestParams | None = None
        """The question the server waits on, if any."""
        self._asked = asyncio.Event()
        self._answered = asyncio.Event()

    async def ask(self, params: types.ElicitRequestParams) -> types.ElicitResult:
        """The server's question, answered: with the reply given, or once the user gives one (`answer`)."""
        if self.reply is None and not self.pausable:
            return types.ElicitResult(action="cancel")
        if self.reply is None:
            self.asked = params
            self._asked.set()
            await self._answered.wait()
            self._answered.clear()
        reply, self.reply = self.reply, None
        assert reply is not None
        return elicit_result(reply, params)

    async def wait_asked(self) -> types.ElicitRequestParams:
        """Wait until the server asks a question; return it."""
        await self._asked.wait()
        self._asked.clear()
        assert self.asked is not None
        return self.asked

    def answer(self, reply: Reply) -> None:
        """Give the question waiting the user's reply."""
        self.reply, self.asked = reply, None
        self._answered.set()


def question_of(params: types.ElicitRequestParams) -> tuple[str, dict[str, Any]]:
    """The question for the user, and the JSON schema of the answer (an empty form for a URL to open)."""
    if isinstance(params, types.ElicitRequestURLParams):
        return f"{params.message} (open {params.url}, then accept or decline)", {"type": "object", "properties": {}}
    return params.message, dict(params.requested_schema)


def elicit_result(reply: Reply, params: types.ElicitRequestParams) -> types.ElicitResult:
    """The server's `ElicitResult` for the user's reply: an accepted form gets the schema's defaults it left out."""
    if reply.action != "accept":
        return types.ElicitResult(action=reply.action)
    if isinstance(params, types.ElicitRequestURLParams):
        return types.ElicitResult(action="accept")
    content = dict(reply.content) if isinstance(reply.content, dict) else {}
    for name, schema in (params.requested_schema.get("properties") or {}).items():
        if name not in content and isinstance(schema, dict) and "default" in schema:
            content[name] = schema["default"]
    return types.ElicitResult(action="accept", content=content)
