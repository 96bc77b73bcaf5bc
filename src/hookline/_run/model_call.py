"""`ModelCalls`: how a run asks its model, one call at a time.

A call is asked whole, or streamed when someone watches the run (the recorder has a queue):
then each text delta goes out as it comes, under the id the answer's event will keep, so a
reader can match the deltas to the stored answer. A guardrail may hold the deltas back
(`ModelGate`). Each call adds its usage to the run's, and reports itself on an `llm` status
line ("gpt-4o answered in 1.2 s") with its facts as data.
"""

from __future__ import annotations

import asyncio
import time
from functools import partial

from hookline._run.model_gate import ModelGate
from hookline._run.recorder import Recorder
from hookline._run.run_scope import RunScope
from hookline._run.status import describe_reasoning, model_line, request_record
from hookline.agent_spec import AgentSpec
from hookline.errors import ModelError
from hookline.events import Event
from hookline.messages import Message, TextPart
from hookline.models.base import (
    Model,
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    ResponseDone,
    TextDelta,
    whole_answer_deltas,
)
from hookline.tracing import RunTrace
from hookline.usage import Usage

__all__ = ["ModelCalls"]


class ModelCalls:
    """Asks a run's model; holds what the call under way has said so far.

    Args:
        agent: The run's agent (its model, name and status options).
        recorder: Where streamed deltas go.
        scope: The run's status lines.
        gate: What holds deltas while a guardrail judges the call.
        trace: The run's trace, when tracing is on: each call gets a span.
    """

    __slots__ = ("agent", "answer_id", "cut_off", "first_token", "gate", "recorder", "scope", "trace")

    def __init__(self, agent: AgentSpec, recorder: Recorder, scope: RunScope, gate: ModelGate,
                 trace: RunTrace | None) -> None:
        self.agent, self.recorder, self.scope, self.gate, self.trace = agent, recorder, scope, gate, trace
        self.cut_off = ""
        """What a streamed call said before a cancel stopped it, for the run to keep ("" when a
        check tripped and cancelled the call: `ModelGate.discarding`)."""
        self.answer_id: str | None = None
        """The id the streamed answer's event keeps (its deltas carry it); None when nothing is stored."""
        self.first_token: float | None = None
        """When the call streamed its first delta (`perf_counter`)."""

    async def ask(self, request: ModelRequest, usage: Usage) -> ModelResponse:
        """The model's answer to `request`; its usage is added to `usage`, and the call reported."""
        model, reports = self.agent.model, self.scope.on["llm"]
        started = time.perf_counter() if reports else 0.0
        self.first_token = None
        if self.trace is not None:
            streaming = self.recorder.queue is not None
            ask = partial(self._stream, model) if streaming else model.request
            response = await self.trace.chat(model, request, ask, stream=streaming)
        elif self.recorder.queue is None:
            response = await model.request(request)
        else:
            response = await self._stream(model, request)
        usage.add(response.usage)
        usage.model_calls += 1
        if reports:
            self._report(model, request, response, time.perf_counter() - started, started)
        return response

    def _report(self, model: Model, request: ModelRequest, response: ModelResponse, seconds: float,
                started: float) -> None:
        first = self.first_token
        first_token = first - started if first is not None else None
        line, facts = model_line(model.name, response, seconds, first_token, model.prices)
        self.scope.model_answered(line, facts, request_record(request) if self.agent.status.requests else None)
        for line in describe_reasoning(response) if self.agent.status.reasoning else ():
            self.scope.status("llm", line)

    async def _stream(self, model: Model, request: ModelRequest) -> ModelResponse:
        said: list[str] = []  # the answer's text so far, kept if a cancel cuts it off
        self.answer_id = self.recorder.new_id() if self.recorder.store is not None else None
        if self.gate.holds_answers:
            self.gate.hold()
        try:
            if type(model).stream is Model.stream:  # no stream of its own: its answer's deltas, without a generator
                response = await model.request(request)
                for delta in whole_answer_deltas(response):
                    self._delta(delta, said)
                return response
            done = None
            async for item in model.stream(request):  # to its end: a generator left open is closed in a task
                if isinstance(item, ResponseDone):
                    done = done or item.response
                elif done is None:
                    self._delta(item, said)
        except asyncio.CancelledError:
            if not self.gate.discarding:
                self.cut_off = "".join(said)
            raise
        if done is None:
            raise ModelError("the model's stream ended without a response", provider=model.provider)
        return done

    def _delta(self, delta: TextDelta | ReasoningDelta, said: list[str]) -> None:
        if self.first_token is None:
            self.first_token = time.perf_counter()
        if isinstance(delta, TextDelta):
            said.append(delta.text)
            send = self.recorder.delta
        elif self.agent.status.reasoning:
            send = self.recorder.reasoning_delta
        else:
            return
        held = self.gate.held
        if held is None:
            send(self.agent.name, delta.text, self.answer_id)
        else:  # a guardrail judges the call first
            held.append(partial(send, self.agent.name, delta.text, self.answer_id))

    def take_cut_off(self) -> Message | None:
        """The answer a cancel cut off, recorded as such (`metadata["cut_off"]`); None when there is none."""
        text, self.cut_off = self.cut_off, ""
        if not text:
            return None
        message = Message.from_valid_parts("assistant", [TextPart.from_valid(text)])
        if self.recorder.active:
            event = Event.from_valid(self.agent.name, "message", list(message.parts), role="assistant",
                                     metadata={"cut_off": True})
            event.id = self.answer_id
            self.recorder.add(event)
        return message
