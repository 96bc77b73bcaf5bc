"""The Vercel AI SDK's UI message stream (v1) at `POST /v1/ai-sdk/chat`: what `useChat` speaks.

- The body is what `DefaultChatTransport` (AI SDK v6) sends: `{id, messages, trigger,
  messageId?}`, and `tools` (the client's own tools, `ai_sdk_tools`) when its `body` option
  adds them. The chat id is the session's id (created for the caller on first use). Only the
  last message matters, since the session holds the rest: a user message is the new prompt
  (its event keeps the message's id); an assistant message answers the paused calls by its
  tool parts: `approval-responded` (`approved: false` refuses, with `reason`), and
  `output-available` / `output-error` for a call to a client tool (its output is the result).
- The answer is one UI message: `start` (its id: `<the prompt's id>:reply`, the same for every
  stream of that answer, so the client merges a resumed stream into it), then per model call
  `start-step` ... `finish-step` around `reasoning-*`, `text-*`, `tool-input-start` /
  `tool-input-available` (and `tool-approval-request` for a call paused for approval, or
  on the part of the call running a sub-agent whose calls paused, its `approvalDescriptor`
  naming them; a client tool's call has none: the client runs it), `tool-output-available` / `-error` /
  `-denied` (none for an output the client sent: it holds it); status lines as `data-status`
  parts (one per tool call, updated in place); then `finish` and `data: [DONE]`. Header
  `x-vercel-ai-ui-message-stream: v1`.
- `GET /v1/ai-sdk/chat/{id}/stream` (`useChat({resume: true})`) replays the answer going on,
  here or in another process, from its `start` (the client rebuilds it), then goes on live;
  204 when no run goes on.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, Response
from fastapi.responses import StreamingResponse

from hookline.agent import RunResult
from hookline.events import Event, run_end
from hookline.messages import Message
from hookline.result import Interruption
from hookline.server.errors import ProtocolError, error_body
from hookline.server.protocols.ai_sdk_tools import Answers, answers_of, approval_id, client_tools, is_client_call
from hookline.server.protocols.base import (
    RunEvents,
    Translator,
    Turn,
    denied_call,
    frames,
    join,
    open_session,
    paused_call,
    start,
)
from hookline.server.routes import Ctx, User
from hookline.sessions import SessionStore, pages_back

__all__ = ["AISDKTranslator", "ai_sdk_api", "reply_id"]

ai_sdk_api = APIRouter(prefix="/v1/ai-sdk", tags=["protocols"])

STATUS_PART = "data-status"
"""The type of the data parts that carry status lines."""
_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "x-vercel-ai-ui-message-stream": "v1"}
_DONE = b"data: [DONE]\n\n"
_FINISH_REASONS = {"interrupted": "tool-calls", "max_turns": "length", "guardrail": "content-filter"}
"""The AI SDK's finish reason for how a run ended; any other end is "stop"."""


def reply_id(prompt_id: str) -> str:
    """The id of the UI message answering the user message `prompt_id` (every stream of it uses it)."""
    return f"{prompt_id}:reply"


def _chunk(chunk: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"


async def _with_done(chunks: Any) -> Any:
    async for chunk in chunks:
        yield chunk
    yield _DONE


def _stream(run: RunEvents, translator: AISDKTranslator) -> StreamingResponse:
    return StreamingResponse(_with_done(frames(run, translator, _chunk)), media_type="text/event-stream",
                             headers=_HEADERS)


@ai_sdk_api.post("/chat", response_class=StreamingResponse, responses={
    200: {"description": "The UI message stream (v1)", "content": {"text/event-stream": {}}},
    404: {"description": "Another user's chat"}, 409: {"description": "A run is going on in the chat"},
    422: {"description": "Not a chat request this server can take"}})
async def chat(context: Ctx, user: User, request: Request, body: Annotated[dict[str, Any], Body()]) -> Response:
    """Run the agent on the chat's last message (a prompt, or answers to paused calls); answer the UI message stream."""
    chat_id, last = _parse(body)
    tools = client_tools(body.get("tools"), (s.name for s in context.agent.tool_catalog().specs))
    session = await open_session(context, chat_id, user)
    if last.get("role") == "user":
        text, prompt_id = _prompt_text(last), str(last["id"])
        turn = Turn(prompt=Message.user(text), prompt_id=prompt_id, tools=tuple(tools.values()))
        message_id, answers = reply_id(prompt_id), Answers()
    elif last.get("role") == "assistant":
        answers = answers_of(last, await _since_last_prompt(context.store, session.id), tools)
        turn, message_id = Turn(approvals=answers.approvals, tools=tuple(tools.values())), str(last.get("id") or "")
    else:
        raise ProtocolError("the last message must be the user's (a prompt) or the assistant's (answers to its "
                            "paused tool calls)")
    run = await start(context, request, user, session.id, turn)
    await run.check_started()
    return _stream(run, AISDKTranslator(message_id or None, new_prompt=turn.prompt is not None,
                                        client_outputs=answers.outputs))


@ai_sdk_api.get("/chat/{chat_id}/stream", response_class=StreamingResponse, responses={
    200: {"description": "The answer going on, from its start", "content": {"text/event-stream": {}}},
    204: {"description": "No answer is going on"}})
async def resume_chat(context: Ctx, user: User, chat_id: str) -> Response:
    """Resume the answer going on in the chat (`useChat({resume: true})`), from its start; 204 when none is."""
    session = await open_session(context, chat_id, user)
    prompt = await _last_prompt(context.store, session.id)
    if prompt is None:
        return Response(status_code=204)
    _, run = await join(context, session.id, (prompt.seq or 1) - 1, replay=True)
    if not run.going_on:
        run.close()
        return Response(status_code=204)
    return _stream(run, AISDKTranslator(reply_id(str(prompt.id)), new_prompt=True))


def _parse(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    chat_id, messages, trigger = body.get("id"), body.get("messages"), body.get("trigger", "submit-message")
    if not isinstance(chat_id, str) or not isinstance(messages, list) or not messages:
        raise ProtocolError('a chat request is {"id": chat id, "messages": [...UIMessage], "trigger": ...}, as '
                            "useChat's DefaultChatTransport sends it")
    if trigger != "submit-message":
        raise ProtocolError(f"trigger {trigger!r} is not taken: send the next user message (submit-message); "
                            "to answer again, fork the session (POST /v1/sessions/{id}/fork)")
    last = messages[-1]
    if not isinstance(last, dict) or not isinstance(last.get("parts"), list):
        raise ProtocolError("the last message must be a UIMessage: {id, role, parts: [...]}")
    return chat_id, last


def _prompt_text(message: dict[str, Any]) -> str:
    parts = message["parts"]
    texts = [p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
    if not texts or len(texts) != len([p for p in parts if not str(p.get("type", "")).startswith("data-")]):
        raise ProtocolError("a user message takes text parts only here; send images and files through "
                            "POST /v1/sessions/{id}/runs (attachments)")
    if not isinstance(message.get("id"), str) or not message["id"]:
        raise ProtocolError("the user message needs its id")
    return "\n".join(texts)


async def _since_last_prompt(store: SessionStore, session_id: str) -> list[Event]:
    """The log (`all` view) from the last user message on: the runs of the assistant message that answers it."""
    prompt = await _last_prompt(store, session_id)
    return await store.events(session_id, view="all", after_seq=(prompt.seq or 1) - 1 if prompt is not None else 0)


async def _last_prompt(store: SessionStore, session_id: str) -> Event | None:
    """The last user message of the session's log: where the answer going on began (read backward a page at a time)."""
    async for page in pages_back(store, session_id, "prompt"):
        prompt = next((e for e in reversed(page) if e.role == "user"), None)
        if prompt is not None:
            return prompt
    return None


class AISDKTranslator(Translator):
    """A run's events as UI message stream chunks.

    Args:
        message_id: The UI message's id (`start.messageId`); None leaves it to the client.
        new_prompt: The message answers a prompt among the events (the client's: not a chunk). The results
            before it close the calls the last message left open: they are that message's, not chunks.
        client_outputs: The calls whose outputs the client sent (it holds them as it gave them): no chunk.
    """

    def __init__(self, message_id: str | None, *, new_prompt: bool = False,
                 client_outputs: Collection[str] = ()) -> None:
        self.message_id = message_id
        self._before_prompt = new_prompt
        self._client_outputs = set(client_outputs)
        self._text: str | None = None
        self._reasoning: str | None = None
        self._step = False
        self._answered = False  # this step's answer came: what comes next is the next step
        self._streamed: set[str] = set()
        self._denied: set[str] = set()
        self._inner: dict[str, list[dict[str, Any]]] = {}  # the calls paused inside each sub-agent's call
        self._ended: str | None = None
        self._failure: str | None = None

    def opening(self) -> list[Any]:
        """`start`, with the UI message's id."""
        return [{"type": "start", **({"messageId": self.message_id} if self.message_id else {})}]

    def event(self, event: Event) -> list[Any]:
        """The chunks of one hookline event."""
        if event.kind == "delta":
            return self._delta(event)
        if event.kind == "message":
            return self._message(event)
        if event.kind == "status":
            return self._status(event)
        return []

    async def closing(self, result: RunResult | None, error: BaseException | None) -> list[Any]:
        """The open parts close, the step finishes, then `finish` (or `error`, or `abort`)."""
        out = self._close() + self._finish_step()
        ended = result.stop_reason if result is not None else self._ended
        if error is not None or self._failure is not None or ended == "failed":
            text = error_body(error)[1].message if error is not None else self._failure or "the run failed"
            return [*out, {"type": "error", "errorText": text}, {"type": "finish", "finishReason": "error"}]
        if ended == "cancelled":
            return [*out, {"type": "abort", "reason": "cancelled"}]
        return [*out, {"type": "finish", "finishReason": _FINISH_REASONS.get(ended or "", "stop")}]

    # -- steps, text and reasoning ---------------------------------------------------------------

    def _step_for_answer(self) -> list[Any]:
        """`start-step` before a model call's first chunk (and `finish-step` of the one before)."""
        if self._step and not self._answered:
            return []
        out = self._finish_step()
        self._step, self._answered = True, False
        return [*out, {"type": "start-step"}]

    def _finish_step(self) -> list[Any]:
        if not self._step:
            return []
        out = self._close()
        self._step = False
        return [*out, {"type": "finish-step"}]

    def _delta(self, event: Event) -> list[Any]:
        text = getattr(event.parts[0], "text", "") if event.parts else ""
        if not text:
            return []
        answer_id = event.id or "answer"
        out = self._step_for_answer()
        if event.metadata.get("reasoning"):
            part_id = f"{answer_id}:reasoning"
            if self._reasoning != part_id:
                out += self._close()
                out.append({"type": "reasoning-start", "id": part_id})
                self._reasoning = part_id
            return [*out, {"type": "reasoning-delta", "id": part_id, "delta": text}]
        if self._text != answer_id:
            out += self._close()
            out.append({"type": "text-start", "id": answer_id})
            self._text = answer_id
            self._streamed.add(answer_id)
        return [*out, {"type": "text-delta", "id": answer_id, "delta": text}]

    def _close(self) -> list[Any]:
        out = []
        if self._reasoning is not None:
            out.append({"type": "reasoning-end", "id": self._reasoning})
            self._reasoning = None
        if self._text is not None:
            out.append({"type": "text-end", "id": self._text})
            self._text = None
        return out

    # -- messages and status -------------------------------------------------------------------

    def _message(self, event: Event) -> list[Any]:
        if event.role == "user":
            self._before_prompt = False
            return []
        if event.role == "assistant":
            return self._answer(event)
        if event.role == "tool" and not self._before_prompt:
            results = event.to_message().tool_results
            return [self._result(r) for r in results if r.call_id not in self._client_outputs]
        return []

    def _answer(self, event: Event) -> list[Any]:
        answer_id = str(event.id)
        out = self._step_for_answer()
        if answer_id not in self._streamed and event.text:  # not streamed: all at once
            out += [{"type": "text-start", "id": answer_id}, {"type": "text-delta", "id": answer_id,
                                                                "delta": event.text}]
            self._text = answer_id
        out += self._close()
        self._answered = True
        for call in event.to_message().tool_calls:
            arguments = call.arguments if isinstance(call.arguments, dict) else _decoded(call.arguments)
            out += [{"type": "tool-input-start", "toolCallId": call.id, "toolName": call.name},
                    {"type": "tool-input-available", "toolCallId": call.id, "toolName": call.name,
                     "input": arguments}]
        return out

    def _approval_request(self, paused: Interruption) -> dict[str, Any]:
        """The request for a paused call's approval; inside a sub-agent, on the part of the call that runs it.

        The chat holds a part for each of this run's calls only: a call paused inside a
        sub-agent (`<call>/<inner>`) asks on `<call>`'s part, its `approvalDescriptor`
        naming every inner call paused under it, which the answer then answers together.
        """
        outer, inner = paused.call_id.split("/", 1)[0], paused.agent is not None
        if not inner:
            return {"type": "tool-approval-request", "approvalId": approval_id(outer), "toolCallId": outer}
        calls = self._inner.setdefault(outer, [])
        calls.append({"toolCallId": paused.call_id, "toolName": paused.name, "input": paused.arguments,
                      "agent": paused.agent, "reason": paused.reason})
        return {"type": "tool-approval-request", "approvalId": approval_id(outer), "toolCallId": outer,
                "approvalDescriptor": {"calls": calls}}

    def _result(self, result: Any) -> dict[str, Any]:
        if result.call_id in self._denied:
            return {"type": "tool-output-denied", "toolCallId": result.call_id}
        if result.is_error:
            return {"type": "tool-output-error", "toolCallId": result.call_id, "errorText": result.content}
        return {"type": "tool-output-available", "toolCallId": result.call_id, "output": result.content}

    def _status(self, event: Event) -> list[Any]:
        paused = paused_call(event)
        if paused is not None and is_client_call(paused):
            return []  # the client runs it: its tool-input-available was the request
        if paused is not None:
            return [self._approval_request(paused)]
        denied = denied_call(event)
        if denied is not None:
            self._denied.add(denied)
        ended = run_end(event)
        if ended is not None:
            self._ended = ended
        if "error" in event.metadata:  # how a run failed: `error` says it at the end
            self._failure = event.text
        if ended is not None or "error" in event.metadata or self._before_prompt:
            return []
        metadata = event.metadata
        call_id = metadata.get("agent_call_id") or metadata.get("call_id") or "run"
        data = {"text": event.text, "source": event.source, "author": event.author}
        data |= {k: metadata[k] for k in ("call_id", "agent", "partial_result") if k in metadata}
        return [{"type": STATUS_PART, "id": f"status:{call_id}", "data": data}]


def _decoded(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments
