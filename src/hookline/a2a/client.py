"""`A2AAgent`: a remote A2A 1.0 agent, called as a tool, through the official `a2a-sdk` client.

One call of its tool is one remote task. The SDK's client reads the Agent Card (at
`base_url/.well-known/agent-card.json`), posts where the card says (its JSON-RPC interface)
and streams the task's updates; what they say becomes the call's:

- each working update's text is a status line of the call (`RunContext.status`);
- the task's artifacts (their text) are the call's result;
- `TASK_STATE_INPUT_REQUIRED` pauses the calling run at the call (`RunContext.ask`, with the
  remote status message as the question). Resumed with an answer, the call runs again and
  sends the remote task the data part `{"approved": true}` (with `"response"` when the answer
  has content), or `{"approved": false, "reason": ...}`, and follows the same task to its end.
  The paused task is remembered by this process; resumed elsewhere (or after a restart), the
  call sends its input again and answers the question that pauses the new task at once;
- a failed, rejected or cancelled task is a `ToolError` (the model reads why);
- cancelling the calling run cancels the remote task (`CancelTask`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, cast
from uuid import uuid4

import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.helpers import new_data_part
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from a2a.utils.errors import A2AError

from hookline.context import RunContext
from hookline.errors import ToolError
from hookline.result import Reply
from hookline.tools import Tool

__all__ = ["A2AAgent"]

logger = logging.getLogger("hookline.a2a")

_SETTLED = frozenset({TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_FAILED,
                      TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_INPUT_REQUIRED,
                      TaskState.TASK_STATE_AUTH_REQUIRED})
_MAX_PAUSED = 1000  # paused remote tasks this process remembers (the oldest go first)
_CANCEL_TIMEOUT = 5.0  # seconds a cancelled call waits for the remote agent to take its CancelTask


@dataclass
class _TaskView:
    """A remote task as its stream has told it so far."""

    task_id: str = ""
    context_id: str = ""
    state: TaskState = TaskState.TASK_STATE_UNSPECIFIED
    status_text: str = ""
    artifacts: dict[str, str] = field(default_factory=dict)
    """The text of each artifact, by id, in the order they came."""
    reply: str | None = None
    """The text of a direct message answer (a task-less reply)."""

    @property
    def settled(self) -> bool:
        """Whether it ended, or waits for input (the stream ends there)."""
        return self.reply is not None or self.state in _SETTLED

    def take(self, response: StreamResponse) -> str | None:
        """Take one update in; return the status line it says, if any."""
        kind = response.WhichOneof("payload")
        if kind == "task":
            self._task(response.task)
        elif kind == "status_update":
            update = response.status_update
            self.task_id, self.context_id = update.task_id, update.context_id
            self.state, self.status_text = update.status.state, _text(update.status.message.parts)
            if self.state == TaskState.TASK_STATE_WORKING and self.status_text:
                return self.status_text
        elif kind == "artifact_update":
            artifact = response.artifact_update.artifact
            text = _text(artifact.parts)
            if response.artifact_update.append:
                text = self.artifacts.get(artifact.artifact_id, "") + text
            self.artifacts[artifact.artifact_id] = text
        elif kind == "message":
            self.reply = _text(response.message.parts)
        return None

    def _task(self, task: Task) -> None:
        self.task_id, self.context_id = task.id, task.context_id
        self.state, self.status_text = task.status.state, _text(task.status.message.parts)
        for artifact in task.artifacts:
            self.artifacts[artifact.artifact_id] = _text(artifact.parts)

    def answer(self) -> str:
        """The task's answer: its artifacts' text (else the last status message's, or the direct reply)."""
        if self.reply is not None:
            return self.reply
        return "\n".join(self.artifacts.values()) if self.artifacts else self.status_text


def _text(parts: Any) -> str:
    return "\n".join(part.text for part in parts if part.WhichOneof("content") == "text")


class A2AAgent:
    """A remote agent that speaks A2A 1.0 (JSON-RPC), used as a tool: `A2AAgent(url, name="x").as_tool()`.

    Args:
        base_url: Where the agent lives: its card is read at `base_url/.well-known/agent-card.json`
            (once, on the first call), and its tasks are sent where the card says.
        name: The tool's name.
        headers: HTTP headers for every request (e.g. `{"Authorization": "Bearer ..."}`).
        timeout: Seconds to wait for the agent: to connect, and between two updates of a task
            (an A2A server on the SDK sends a keepalive every 15 s).
    """

    def __init__(
        self, base_url: str, *, name: str, headers: Mapping[str, str] | None = None, timeout: float = 60.0
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.name = name
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._card: AgentCard | None = None
        self._paused: dict[tuple[str | None, str | None], _TaskView] = {}

    def __repr__(self) -> str:
        return f"A2AAgent({self.base_url!r}, name={self.name!r})"

    async def card(self) -> AgentCard:
        """The agent's Agent Card (read once, then kept)."""
        if self._card is None:
            async with self._http() as http:
                return await self._card_with(http)
        return self._card

    def as_tool(self, description: str | None = None) -> Tool:
        """This agent as a tool: one argument `input: str`, the remote answer's text its result.

        Args:
            description: What the tool does, for the model; default: a line naming the agent.
        """

        async def ask(input: str, ctx: RunContext[Any]) -> str:
            return await self._call(input, ctx)

        description = description or f"Give the remote agent {self.name!r} a task (as text); it answers in text."
        return Tool(ask, name=self.name, description=description)

    def _http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(headers=self._headers, timeout=httpx.Timeout(self._timeout))

    async def _call(self, text: str, ctx: RunContext[Any]) -> str:
        key = (ctx.session_id, ctx.call_id)
        reply = ctx.reply
        paused = self._paused.pop(key, None) if reply is not None else None
        try:
            async with self._http() as http:
                client = self._client(http, await self._card_with(http))
                if paused is not None and reply is not None:
                    message, reply = _answer(paused, reply), None
                else:
                    message = Message(message_id=uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)])
                while True:
                    view = await _follow(client, message, ctx)
                    if view.state != TaskState.TASK_STATE_INPUT_REQUIRED:
                        return self._result(view)
                    if reply is None:
                        return self._pause(key, view, ctx)
                    message, reply = _answer(view, reply), None  # resumed elsewhere: the call was sent again
        except (A2AError, httpx.HTTPError) as exc:
            raise ToolError(f"the remote agent {self.name!r} failed to answer: {exc}") from exc

    def _client(self, http: httpx.AsyncClient, card: AgentCard) -> Client:
        try:
            return ClientFactory(ClientConfig(httpx_client=http)).create(card)
        except ValueError as exc:  # the SDK's "no compatible transports found"
            raise ToolError(f"the remote agent {self.name!r} offers no JSON-RPC interface in its card") from exc

    async def _card_with(self, http: httpx.AsyncClient) -> AgentCard:
        if self._card is None:
            self._card = await A2ACardResolver(http, self.base_url).get_agent_card()
        return self._card

    def _result(self, view: _TaskView) -> str:
        if view.reply is not None or view.state == TaskState.TASK_STATE_COMPLETED:
            return view.answer()
        state = TaskState.Name(view.state)
        if not view.settled:
            raise ToolError(f"the remote agent {self.name!r} stopped streaming before its task ended ({state})")
        raise ToolError(f"the remote agent {self.name!r} did not complete the task ({state})"
                        + (f": {view.status_text}" if view.status_text else ""))

    def _pause(self, key: tuple[str | None, str | None], view: _TaskView, ctx: RunContext[Any]) -> str:
        question = view.status_text or f"the remote agent {self.name!r} waits for input"
        if ctx.session_id is None:  # a run without a session cannot be resumed: nobody could answer
            raise ToolError(f"the remote agent {self.name!r} waits for input, and this run has no session to "
                            f"pause: {question}")
        try:
            ctx.ask(question)
        except RuntimeError as exc:  # a context of no run: nothing can pause
            raise ToolError(f"the remote agent {self.name!r} waits for input: {question}") from exc
        if len(self._paused) >= _MAX_PAUSED:
            del self._paused[next(iter(self._paused))]
        self._paused[key] = view
        return ""


def _answer(view: _TaskView, reply: Reply) -> Message:
    """The message answering the remote task's question with the user's reply."""
    data: dict[str, Any]
    if reply.action == "accept":
        data = {"approved": True} if reply.content is None else {"approved": True, "response": reply.content}
    else:
        reason = reply.content if isinstance(reply.content, str) else f"the user chose to {reply.action}"
        data = {"approved": False, "reason": reason}
    return Message(message_id=uuid4().hex, task_id=view.task_id, context_id=view.context_id, role=Role.ROLE_USER,
                   parts=[new_data_part(data)])


async def _follow(client: Client, message: Message, ctx: RunContext[Any]) -> _TaskView:
    """Send `message`; follow its task, its working lines as the call's, until it ends or waits for input."""
    view = _TaskView()
    stream = cast(AsyncGenerator[StreamResponse], client.send_message(SendMessageRequest(message=message)))
    try:
        async with aclosing(stream):
            async for response in stream:
                line = view.take(response)
                if line is not None:
                    ctx.status(line)
    except asyncio.CancelledError:
        if view.task_id and not view.settled:
            await _cancel(client, view.task_id)
        raise
    return view


async def _cancel(client: Client, task_id: str) -> None:
    """Cancel the remote task (the calling run was cancelled), waiting a few seconds at most."""
    try:
        async with asyncio.timeout(_CANCEL_TIMEOUT):
            await client.cancel_task(CancelTaskRequest(id=task_id))
    except (A2AError, httpx.HTTPError, TimeoutError) as exc:
        logger.warning("could not cancel the remote task %s: %s", task_id, exc)
