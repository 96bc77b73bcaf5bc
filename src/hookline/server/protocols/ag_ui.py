"""AG-UI 1.0 at `POST /v1/ag-ui`: a `RunAgentInput` in, server-sent AG-UI events out.

What maps to what (docs/ag-ui.md has the whole table):

- `threadId` is the session's id (created for the caller on first use); `runId` is echoed.
- The conversation a client sends is known up to the last message whose id the session holds;
  the user messages after it are the new prompt (joined, in order, if several; the event keeps
  the last one's id). `resume` answers paused calls instead (with a new user message: 422).
- An answer streams as `TEXT_MESSAGE_START/CONTENT/END` whose `messageId` is the id its stored
  message keeps; reasoning as `REASONING_*`; a model's tool calls as
  `TOOL_CALL_START/ARGS/END` (parent: the answer's id), their results as `TOOL_CALL_RESULT`.
- Status lines are `ACTIVITY_SNAPSHOT`s of type `hookline.status`, one activity message per
  tool call (and one for the run) showing its latest line (`replace: true`); a sub-agent's lines
  are attributed to a `SUBAGENT_STARTED` ... `SUBAGENT_FINISHED` around its call.
- `state.data` is a `STATE_SNAPSHOT` first, and a `STATE_DELTA` (RFC 6902) at the end when the
  run changed it (hookline saves the state at a run's end).
- Paused calls end the run with `RUN_FINISHED` outcome `interrupt`; a cancelled run with
  outcome `cancelled`; a failure with `RUN_ERROR`. A stream that resumes a paused run starts
  with a `MESSAGES_SNAPSHOT` of the session, so that it stands alone.
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError

from hookline import __version__
from hookline._run.paused_turn import log_since_last_answer
from hookline._run.resume import Approval, paused_calls
from hookline.agent import RunResult
from hookline.events import Event
from hookline.messages import DocumentPart, Message, TextPart
from hookline.result import Interruption
from hookline.server.errors import ProtocolError, error_body
from hookline.server.protocols.base import FrontendTool, Translator, Turn, frames, open_session, paused_call, start
from hookline.server.routes import Ctx, User
from hookline.sessions import SessionStore, pages_back

__all__ = ["AGUITranslator", "ag_ui_api", "approvals_of", "state_patch", "to_ag_ui_messages"]

ag_ui_api = APIRouter(prefix="/v1/ag-ui", tags=["protocols"])

PROTOCOL_VERSION = "1.0"
STATUS_ACTIVITY = "hookline.status"
"""The activity type of status lines."""
INTERRUPT_PREFIX = "approve:"
"""An interrupt's id: this prefix and the paused call's id."""
_APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean"},
        "reason": {"type": "string", "description": "why it is refused"},
        "editedArgs": {"type": "object", "description": "run the call with these arguments instead"},
    },
    "required": ["approved"],
}
_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _now() -> int:
    return int(time.time() * 1000)


def _frame(event: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"


# -- the route ------------------------------------------------------------------------------


@ag_ui_api.post("", response_class=StreamingResponse, responses={
    200: {"description": "Server-sent AG-UI 1.0 events", "content": {"text/event-stream": {}}},
    404: {"description": "Another user's thread"}, 409: {"description": "A run is going on in the thread"},
    422: {"description": "Not a RunAgentInput, or one this server cannot take"}})
async def run_ag_ui(
    context: Ctx, user: User, request: Request, body: Annotated[dict[str, Any], Body()]
) -> StreamingResponse:
    """Run the agent on an AG-UI `RunAgentInput` (camelCase JSON); answer its events as SSE."""
    from ag_ui.core import RunAgentInput

    try:
        given = RunAgentInput.model_validate(body)
    except ValidationError as exc:
        raise ProtocolError(f"not an AG-UI RunAgentInput: {_first_error(exc)}") from None
    session = await open_session(context, given.thread_id, user)
    frontend = tuple(FrontendTool(t.name, t.description, t.parameters or {"type": "object"})
                     for t in given.tools or ())
    turn, snapshot = await _turn(context.store, given, frontend)
    if given.state and given.state != session.state:
        await context.store.update_state(session.id, dict(given.state))
        session.state = dict(given.state)
    run = await start(context, request, user, session.id, turn)
    await run.check_started()
    translator = AGUITranslator(given.thread_id, given.run_id, state=session.state, messages=snapshot,
                                frontend={t.name for t in frontend})
    return StreamingResponse(frames(run, _StateAtEnd(translator, context.store, session.id), _frame),
                             media_type="text/event-stream", headers=_HEADERS)


@ag_ui_api.get("/capabilities")
async def ag_ui_capabilities(context: Ctx, user: User) -> JSONResponse:
    """The agent's AG-UI `AgentCapabilities` (camelCase): what a client may rely on."""
    agent = context.agent
    tools = [{"name": s.name, "description": s.description, "parameters": s.parameters}
             for s in agent.tool_catalog().specs]
    return JSONResponse({
        "identity": {"name": agent.name, "type": "hookline", "version": __version__},
        "transport": {"streaming": True, "resumable": True},
        "tools": {"supported": bool(tools), "items": tools, "parallelCalls": True, "clientProvided": False},
        "state": {"snapshots": True, "deltas": True, "persistentState": True},
        "reasoning": {"supported": True, "streaming": True},
        "multiAgent": {"supported": True, "delegation": True},
        "humanInTheLoop": {"supported": True, "approvals": True, "interrupts": True, "approveWithEdits": True},
    })


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"]) or "the body"
    return f"{where}: {error['msg']}"


async def _turn(
    store: SessionStore, given: Any, frontend: tuple[FrontendTool, ...]
) -> tuple[Turn, list[dict[str, Any]] | None]:
    """The turn a `RunAgentInput` asks for, and the messages snapshot a resumed stream starts with."""
    documents = tuple(DocumentPart(title=c.description, text=c.value) for c in given.context or ())
    new = _new_messages(given.messages, await _known(store, given.thread_id, {m.id for m in given.messages}))
    users = [m for m in new if m.role == "user"]
    results = [m for m in new if m.role == "tool"]
    if given.resume or results:
        if users:
            raise ProtocolError("this input both answers the last run (resume entries, or a frontend tool's result) "
                                "and adds a user message: send the answers alone, then the new message")
        paused = await _paused_calls(store, given.thread_id)
        approvals = {**approvals_of(given.resume or [], paused), **_client_results(results, paused, frontend)}
        held = await store.events(given.thread_id, view="prompt")  # a resumed stream's snapshot holds them all
        return Turn(approvals=approvals, tools=frontend), to_ag_ui_messages(held)
    if not users:
        raise ProtocolError("no new user message to run: the thread holds every message sent (send a new user "
                            "message, or resume entries answering the last run's interrupts)")
    text = "\n\n".join(_text_of(m) for m in users)
    return Turn(prompt=Message.user(text), prompt_id=users[-1].id, documents=documents, tools=frontend), None


async def _known(store: SessionStore, thread_id: str, ids: set[str]) -> set[str]:
    """Those of `ids` the thread holds: read back from its end to the newest message that has one of them.

    A client sends the conversation in the order the thread holds it, so the messages before
    that one are known too; a page or two is read, not the whole thread.
    """
    async for page in pages_back(store, thread_id, "prompt"):
        known = {e.id for e in page if e.id in ids}
        if known:
            return known
    return set()


def _new_messages(messages: list[Any], held: set[str]) -> list[Any]:
    """The messages after the last one the session holds (those before it are known)."""
    last_known = max((i for i, m in enumerate(messages) if m.id in held), default=-1)
    return messages[last_known + 1:]


def _client_results(
    results: list[Any], paused: dict[str, Interruption], frontend: tuple[FrontendTool, ...]
) -> dict[str, Approval]:
    """The answers of tool messages to paused frontend tool calls (their results, as the client ran them).

    A tool message with an `error` says the client failed to run the call: its result is an error with that text.
    """
    answers: dict[str, Approval] = {}
    tools = {t.name: t for t in frontend}
    for message in results:
        call = paused.get(message.tool_call_id)
        if call is None:
            raise ProtocolError(f"tool message {message.id!r} answers no call the last run waits for "
                                f"({message.tool_call_id!r})")
        content = message.content if isinstance(message.content, str) else _text_of(message)
        if message.error and call.name in tools:
            tools[call.name].failed[call.call_id] = str(message.error)
        answers[message.tool_call_id] = {"response": content}
    return answers


def _text_of(message: Any) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    texts = [part.text for part in content if getattr(part, "type", None) == "text"]
    if len(texts) != len(content):
        raise ProtocolError("only text parts of user messages are taken over AG-UI; send images and files through "
                            "POST /v1/sessions/{id}/runs (attachments)")
    return "\n".join(texts)


async def _paused_calls(store: SessionStore, session_id: str) -> dict[str, Interruption]:
    """The calls the session's last run paused, by id, as its log records them (from the model's last message on)."""
    return {c.call_id: c for c in paused_calls(await log_since_last_answer(store, session_id))}


def approvals_of(resume: list[Any], paused: dict[str, Interruption]) -> dict[str, Approval]:
    """Hookline's approvals from AG-UI resume entries (`cancelled`: refused; a payload: its answer)."""
    approvals: dict[str, Approval] = {}
    for entry in resume:
        call_id = entry.interrupt_id.removeprefix(INTERRUPT_PREFIX)
        call = paused.get(call_id)
        if call is None:
            raise ProtocolError(f"resume entry {entry.interrupt_id!r} answers no interrupt of this thread's last run")
        approvals[call_id] = _answer(entry, call)
    return approvals


def _answer(entry: Any, call: Interruption) -> Approval:
    if entry.status == "cancelled":
        return {"cancel": True} if call.response_schema is not None else False
    payload = entry.payload
    if call.response_schema is not None:  # a tool's question (RunContext.ask): the payload is the answer
        return {"response": payload} if payload is not False else False
    if isinstance(payload, bool):
        return payload
    if not isinstance(payload, dict) or not isinstance(payload.get("approved"), bool):
        raise ProtocolError(f"resume entry {entry.interrupt_id!r}: the payload must be true, false or "
                            '{"approved": bool, "reason"?: str, "editedArgs"?: {...}}')
    if not payload["approved"]:
        return str(payload.get("reason") or False) if payload.get("reason") else False
    edited = payload.get("editedArgs", payload.get("args"))
    return {"args": edited} if isinstance(edited, dict) else True


# -- messages, as AG-UI has them ------------------------------------------------------------


def to_ag_ui_messages(events: list[Event]) -> list[dict[str, Any]]:
    """A session's prompt view as AG-UI messages (camelCase), each with its event's id."""
    messages: list[dict[str, Any]] = []
    for event in events:
        if event.role == "user":
            messages.append({"id": event.id, "role": "user", "content": event.text})
        elif event.role == "assistant":
            message: dict[str, Any] = {"id": event.id, "role": "assistant", "content": event.text or None}
            calls = event.to_message().tool_calls
            if calls:
                message["toolCalls"] = [_tool_call(c.id, c.name, c.arguments) for c in calls]
            messages.append({k: v for k, v in message.items() if v is not None})
        elif event.role == "tool":
            messages += [{"id": f"{event.id}:{r.call_id}" if len(event.parts) > 1 else event.id, "role": "tool",
                          "toolCallId": r.call_id, "content": r.content, **({"error": r.content} if r.is_error
                                                                              else {})}
                         for r in event.to_message().tool_results]
    return messages


def _tool_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    encoded = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": encoded}}


# -- the events -----------------------------------------------------------------------------


class AGUITranslator(Translator):
    """A run's events as AG-UI 1.0 events (camelCase dicts).

    Args:
        thread_id: The thread (the session).
        run_id: The client's run id.
        state: The session's state when the run starts.
        messages: A messages snapshot to start with (a resumed run), or None.
    """

    def __init__(self, thread_id: str, run_id: str, *, state: dict[str, Any],
                 messages: list[dict[str, Any]] | None, frontend: set[str] | None = None) -> None:
        self.thread_id, self.run_id = thread_id, run_id
        self.frontend = frontend or set()
        self.state = state
        self._snapshot = messages
        self._text: str | None = None  # the answer being streamed
        self._reasoning: str | None = None
        self._streamed: set[str] = set()  # answers whose text went out as deltas
        self._subagents: dict[str, str] = {}  # the call running a sub-agent -> its subagentRunId
        self._interrupts: list[Interruption] = []

    def opening(self) -> list[Any]:
        """`RUN_STARTED`, the state, and (resuming) the conversation so far."""
        out = [self._event("RUN_STARTED", threadId=self.thread_id, runId=self.run_id,
                           protocolVersion=PROTOCOL_VERSION),
               self._event("STATE_SNAPSHOT", snapshot=self.state)]
        if self._snapshot is not None:
            out.append(self._event("MESSAGES_SNAPSHOT", messages=self._snapshot))
        return out

    def event(self, event: Event) -> list[Any]:
        """The AG-UI events of one hookline event."""
        if event.kind == "delta":
            return self._delta(event)
        if event.kind == "message":
            return self._message(event)
        if event.kind == "status":
            return self._status(event)
        return []

    async def closing(self, result: RunResult | None, error: BaseException | None) -> list[Any]:
        """Whatever is open closes; then how the run ended."""
        out = self._close_streams() + self._close_subagents()
        if error is not None:
            _, body = error_body(error)
            return [*out, self._event("RUN_ERROR", message=body.message, code=body.error)]
        finished: dict[str, Any] = {"threadId": self.thread_id, "runId": self.run_id}
        asked = [c for c in self._interrupts if c.name not in self.frontend]
        pending = [c.call_id for c in self._interrupts if c.name in self.frontend]
        if result is not None and result.stop_reason == "interrupted" and asked:
            finished["outcome"] = {"type": "interrupt", "interrupts": [self._interrupt(c) for c in asked]}
        elif result is not None and result.stop_reason == "cancelled":
            finished["outcome"] = {"type": "cancelled"}
        else:  # done, or waiting for the client's own tools only
            finished["outcome"] = {"type": "success", **({"pendingToolCallIds": pending} if pending else {})}
            if result is not None and not pending:
                finished["result"] = _jsonable(result.output)
        return [*out, self._event("RUN_FINISHED", **finished)]

    # -- text and reasoning ------------------------------------------------------------------

    def _delta(self, event: Event) -> list[Any]:
        text = event.parts[0].text if event.parts and isinstance(event.parts[0], TextPart) else ""
        answer_id = event.id or f"{self.run_id}:answer"
        if event.metadata.get("reasoning"):
            return self._reasoning_delta(answer_id, getattr(event.parts[0], "text", "") if event.parts else "")
        if not text:
            return []
        out = self._close_reasoning()
        if self._text != answer_id:
            out += self._close_text()
            out.append(self._event("TEXT_MESSAGE_START", messageId=answer_id, role="assistant"))
            self._text = answer_id
            self._streamed.add(answer_id)
        out.append(self._event("TEXT_MESSAGE_CONTENT", messageId=answer_id, delta=text))
        return out

    def _reasoning_delta(self, answer_id: str, text: str) -> list[Any]:
        if not text:
            return []
        reasoning_id = f"{answer_id}:reasoning"
        out: list[Any] = []
        if self._reasoning != reasoning_id:
            out += self._close_text() + self._close_reasoning()
            out += [self._event("REASONING_START", messageId=reasoning_id),
                    self._event("REASONING_MESSAGE_START", messageId=reasoning_id, role="reasoning")]
            self._reasoning = reasoning_id
        out.append(self._event("REASONING_MESSAGE_CONTENT", messageId=reasoning_id, delta=text))
        return out

    def _close_text(self) -> list[Any]:
        if self._text is None:
            return []
        text_id, self._text = self._text, None
        return [self._event("TEXT_MESSAGE_END", messageId=text_id)]

    def _close_reasoning(self) -> list[Any]:
        if self._reasoning is None:
            return []
        reasoning_id, self._reasoning = self._reasoning, None
        return [self._event("REASONING_MESSAGE_END", messageId=reasoning_id),
                self._event("REASONING_END", messageId=reasoning_id)]

    def _close_streams(self) -> list[Any]:
        return self._close_reasoning() + self._close_text()

    # -- messages ------------------------------------------------------------------------------

    def _message(self, event: Event) -> list[Any]:
        if event.role == "assistant":
            return self._answer(event)
        if event.role == "tool":
            out = self._close_streams()
            for result in event.to_message().tool_results:
                message_id = f"{event.id}:{result.call_id}" if len(event.parts) > 1 else str(event.id)
                out.append(self._event("TOOL_CALL_RESULT", messageId=message_id, toolCallId=result.call_id,
                                       content=result.content, role="tool"))
                out += self._finish_subagent(result.call_id)
            return out
        return []  # the prompt (the client sent it), or a hook's message: not AG-UI events

    def _answer(self, event: Event) -> list[Any]:
        message_id = str(event.id)
        out = self._close_reasoning()
        if message_id in self._streamed:
            out += self._close_text()
        elif event.text:  # not streamed (a hook's answer, a cut-off one on a resumed stream): all at once
            out += self._close_text()
            out += [self._event("TEXT_MESSAGE_START", messageId=message_id, role="assistant"),
                    self._event("TEXT_MESSAGE_CONTENT", messageId=message_id, delta=event.text),
                    self._event("TEXT_MESSAGE_END", messageId=message_id)]
        for call in event.to_message().tool_calls:
            encoded = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
            out += [self._event("TOOL_CALL_START", toolCallId=call.id, toolCallName=call.name,
                                parentMessageId=message_id),
                    self._event("TOOL_CALL_ARGS", toolCallId=call.id, delta=encoded),
                    self._event("TOOL_CALL_END", toolCallId=call.id)]
        return out

    # -- status lines ---------------------------------------------------------------------------

    def _status(self, event: Event) -> list[Any]:
        paused = paused_call(event)
        if paused is not None:
            self._interrupts.append(paused)
            return []
        if "error" in event.metadata or "run_end" in event.metadata:
            return []  # how the run ended: RUN_FINISHED / RUN_ERROR say it
        metadata = event.metadata
        call_id = metadata.get("agent_call_id") or metadata.get("call_id")
        out = self._start_subagent(metadata) if "agent" in metadata else []
        content = {"text": event.text, "source": event.source, "author": event.author}
        content |= {k: metadata[k] for k in ("call_id", "agent", "partial_result") if k in metadata}
        attribution = {"subagentRunId": self._subagents[call_id]} if call_id in self._subagents else {}
        out.append(self._event("ACTIVITY_SNAPSHOT", messageId=f"status:{call_id or self.run_id}",
                               activityType=STATUS_ACTIVITY, content=content, replace=True, **attribution))
        return out

    def _interrupt(self, call: Interruption) -> dict[str, Any]:
        """A paused call as an interrupt; one inside a sub-agent (`<call>/<inner>`) names that sub-agent's run."""
        question = call.response_schema is not None
        interrupt = {"id": f"{INTERRUPT_PREFIX}{call.call_id}", "reason": "input_required" if question else "approval",
                     "message": call.reason or f"approve {call.name}?", "toolCallId": call.call_id,
                     "responseSchema": call.response_schema if question else _APPROVAL_SCHEMA}
        if call.agent is not None:
            interrupt["subagentRunId"] = self._subagent_run(call.call_id.split("/", 1)[0])
        return interrupt

    def _subagent_run(self, call_id: str) -> str:
        """The `subagentRunId` of the sub-agent that call `call_id` runs, in this stream."""
        return f"{self.run_id}:{call_id}"

    def _start_subagent(self, metadata: dict[str, Any]) -> list[Any]:
        call_id = metadata.get("agent_call_id")
        if call_id is None or call_id in self._subagents:
            return []
        run_id = self._subagents[call_id] = self._subagent_run(call_id)
        return [self._event("SUBAGENT_STARTED", subagentRunId=run_id, name=str(metadata["agent"]),
                            parentToolCallId=call_id)]

    def _finish_subagent(self, call_id: str) -> list[Any]:
        run_id = self._subagents.pop(call_id, None)
        return [] if run_id is None else [self._event("SUBAGENT_FINISHED", subagentRunId=run_id)]

    def _close_subagents(self) -> list[Any]:
        return [e for call_id in list(self._subagents) for e in self._finish_subagent(call_id)]

    @staticmethod
    def _event(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "timestamp": _now(), **fields}


class _StateAtEnd(Translator):
    """A translator whose closing also says how the run changed the session's state (a `STATE_DELTA`)."""

    def __init__(self, inner: AGUITranslator, store: SessionStore, session_id: str) -> None:
        self._inner, self._store, self._session_id = inner, store, session_id

    def opening(self) -> list[Any]:
        return self._inner.opening()

    def event(self, event: Event) -> list[Any]:
        return self._inner.event(event)

    async def closing(self, result: RunResult | None, error: BaseException | None) -> list[Any]:
        out = await self._inner.closing(result, error)
        try:
            after = (await self._store.get(self._session_id, with_events=False)).state
        except Exception:  # the run's own frames matter more than its state's
            return out
        patch = state_patch(self._inner.state, after)
        if not patch:
            return out
        return [*out[:-1], self._inner._event("STATE_DELTA", delta=patch), out[-1]]


def state_patch(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """An RFC 6902 patch from `before` to `after`, key by key at the top."""
    patch: list[dict[str, Any]] = []
    for key in before.keys() - after.keys():
        patch.append({"op": "remove", "path": f"/{_pointer(key)}"})
    for key, value in after.items():
        if key not in before:
            patch.append({"op": "add", "path": f"/{_pointer(key)}", "value": value})
        elif before[key] != value:
            patch.append({"op": "replace", "path": f"/{_pointer(key)}", "value": value})
    return patch


def _pointer(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")




def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value

