"""The run loop, top to bottom.

`Run.execute()` is the table of contents: begin (load the session, record the prompt,
`before_run`), then one step per model turn until something stops the run, then end
(`after_run`, save). Each step is a short method below it, in the order it happens.
What hooks decide through `State` waits in the run's `TurnBuffer` and is applied right after
their point's hooks have run. The loop sees its agent through `AgentSpec`, since `Agent`
imports this module.

Whatever ends a run (an answer, a hook, an error, a cancellation), `_end` leaves the log
valid: every tool call it recorded is answered, and the last status says how the run ended.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from functools import partial
from typing import Any

from pydantic import ValidationError

from hookline import tracing as _tracing
from hookline._context_var import current_contexts
from hookline._hot_path import AFTER_LLM as _AFTER_LLM
from hookline._hot_path import AFTER_RUN as _AFTER_RUN
from hookline._hot_path import AFTER_TOOL as _AFTER_TOOL
from hookline._hot_path import BEFORE_LLM as _BEFORE_LLM
from hookline._hot_path import BEFORE_RUN as _BEFORE_RUN
from hookline._hot_path import BEFORE_TOOL as _BEFORE_TOOL
from hookline._hot_path import ON_EXIT as _ON_EXIT
from hookline.agent_spec import AgentSpec
from hookline.compaction import compacted
from hookline.conversation import HookWatch, open_calls, user_actions_as_text
from hookline.decision import Decision
from hookline.errors import ConfigError, HookError, MaxTurnsExceeded, ModelError, error_summary
from hookline.events import Event
from hookline.hook_points import HookPoint
from hookline.messages import DocumentPart, Message, TextPart, ToolCallPart, ToolResultPart, without_validation
from hookline.model_gate import ModelGate, ask_beside
from hookline.models.base import (
    Model,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ReasoningDelta,
    ResponseDone,
    TextDelta,
    whole_answer_deltas,
)
from hookline.prompt_view import PromptView, load_media
from hookline.recorder import Recorder, StreamQueue
from hookline.result import Interruption, RunResult
from hookline.resume import (
    DIED_REASON,
    Answer,
    AuditLines,
    check_resumption,
    edit_event,
    held_messages,
    inner_calls,
    nested_answers,
    plan_resume,
    replies,
    started_calls,
)
from hookline.run_scope import RunScope
from hookline.sessions._codec import encode_state
from hookline.sessions.base import RunHold, SessionStore
from hookline.state import State
from hookline.status import answer_facts, describe_answer, describe_reasoning, request_record
from hookline.tool_runner import ToolRunner
from hookline.tools import Tool, error_result
from hookline.turn_buffer import TurnBuffer
from hookline.types import StopReason

__all__ = ["Run", "SessionTarget"]

_NOT_RUN = "not run: the run stopped before this call"
_FAILED = "not run: the run failed"
_CANCELLED = "not run: the run was cancelled"
_CANCELLED_WHILE_RUNNING = "the run was cancelled while this call ran; it may or may not have taken effect"


@dataclass(frozen=True, slots=True)
class SessionTarget:
    """The session a run reads and appends to."""

    store: SessionStore
    session_id: str
    user: str | None = "default"
    create: bool = True
    wait: float = 5.0
    prompt_id: str | None = None
    """The id the prompt's event keeps (a front end's own message id); None: a fresh one."""
    opening: tuple[Event, ...] = ()
    """Events recorded right before the prompt, in its transaction (a sub-agent's link to its caller)."""


class Run:
    """One run of an agent: owns the live `State` and its `TurnBuffer`, writes events through a `Recorder`."""

    __slots__ = (  # more than 30 attributes would make each instance a dict of its own, slower to read
        "_answer_id", "_cancel_requested", "_edits", "_first_token", "_gate", "_hooked", "_log_tail", "_loop", "_ran",
        "_started", "_state_error", "_status", "_status_on", "_task", "_trace", "_turn_calls", "_unanswered",
        "_unstored_prompt", "_watch", "agent",
        "approvals", "audit", "buffer", "history", "interruptions", "max_turns", "new_messages", "output", "prompt",
        "recorder", "retried_output", "run_tools", "runner", "scope", "session", "state", "stop_reason", "tools",
        "view",
    )

    def __init__(
        self,
        agent: AgentSpec,
        prompt: Message | None,
        *,
        history: list[Message] | None = None,
        max_turns: int | None = None,
        session: SessionTarget | None = None,
        queue: StreamQueue | None = None,
        approvals: dict[str, Answer] | None = None,
        model_settings: ModelSettings | None = None,
        deps: Any = None,
        documents: tuple[DocumentPart, ...] = (),
        audit: AuditLines | None = None,
        tools: dict[str, Tool] | None = None,
    ) -> None:
        self.agent = agent
        self.prompt = prompt
        self.history = history
        self.max_turns = max_turns or agent.max_turns
        self.session = session
        self.approvals, self.audit = approvals, audit
        store = session.store if session else None
        self.recorder = Recorder(store, session.session_id if session else None, queue)
        self.buffer = TurnBuffer()
        self.state = State(agent, list(history or ()), session_id=session.session_id if session else None,
                           buffer=self.buffer, model_settings=model_settings)
        self.new_messages: list[Message] = []
        self.tools: dict[str, Tool] = {}
        self.run_tools = tools or {}  # offered this run only, beside the agent's (`PromptRequest.tools`)
        self.stop_reason: StopReason | None = None
        self.output: Any = ""
        self.interruptions: list[Interruption] = []
        self.retried_output = False
        self.scope = RunScope(self.recorder, self.state, agent.name, agent.status, deps)
        self._status_on, self._status = self.scope.on, self.scope.status
        self.runner = ToolRunner(agent.tool_concurrency, self.scope.tool_log if self.scope.tool_logs else None)
        self.runner.keep = agent.exit_conditions
        self._loop: asyncio.AbstractEventLoop | None = None
        self._edits: dict[str, ToolCallPart] = {}  # approved calls whose arguments the user changed
        self._log_tail: list[Event] = []
        self.view = PromptView(agent, documents)
        self._turn_calls: list[ToolCallPart] = []
        self._ran: dict[str, ToolResultPart] = {}
        self._started: list[ToolCallPart] = []
        self._unanswered = {c.id: c for c in open_calls(self.state.messages)}  # as recorded, whatever hooks edit
        self._watch = HookWatch()
        self._hooked = frozenset(point for point, hooks in agent.hooks.items() if hooks)
        self._task: asyncio.Task[Any] | None = None
        self._cancel_requested = False
        self._state_error: ConfigError | None = None
        self._trace: _tracing.RunTrace | None = None
        self._answer_id: str | None = None  # the id the streamed answer's message keeps (its deltas carry it)
        self._gate = ModelGate(any(getattr(b.hook, "holds_stream", False) for b in agent.hooks.get(_AFTER_LLM, ())))
        self._unstored_prompt: Message | None = None  # the prompt, until the first model call's flush stores it
        self._first_token: float | None = None  # when the model call streamed its first delta (perf_counter)

    # -- the table of contents -------------------------------------------------------------

    async def execute(self) -> RunResult:
        """Run to the end and return the result (or raise `MaxTurnsExceeded`, `HookError`, ...)."""
        tracing = _tracing.active
        trace = None if tracing is None else tracing.for_run(self.agent, self.state.session_id, self.prompt)
        if trace is not None:
            self._trace = self.runner.trace = trace
            return await trace.run(self._execute_in_session)
        return await self._execute_in_session()

    async def _execute_in_session(self) -> RunResult:
        contexts = current_contexts.set(self.scope.tool_context)  # where this run's tool calls find their context
        try:
            target = self.session
            if target is None:
                return await self._execute()
            async with target.store.hold_for_run(target.session_id, user=target.user, create=target.create,
                                                 app=self.agent.app, timeout=target.wait) as hold:
                return await self._execute(hold)
        finally:
            current_contexts.reset(contexts)

    def cancel(self) -> None:
        """Stop the run, from any thread: it ends soon with `stop_reason == "cancelled"`."""
        if self._cancel_requested:
            return  # once: a second task.cancel() would land in the run's own ending (`_end`)
        self._cancel_requested = True
        if self._task is not None and self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._task.cancel)

    async def _execute(self, hold: RunHold | None = None) -> RunResult:
        await self.agent.warm_up()
        self._loop = asyncio.get_running_loop()
        self.scope.bind()
        self._task = asyncio.current_task()
        if hold is not None:  # nothing is recorded until the session loads and the approvals fit it
            self.recorder.last_write = hold.finish  # the last flush lets the session go where the store can
            await self._load_session(hold)
            if self._nothing_to_resume():
                return self._result()
        error: BaseException | None = None
        try:
            await self._begin()
            while self.stop_reason is None:
                await self._step()
        except asyncio.CancelledError as exc:
            self.stop_reason = "cancelled"
            error = None if self._cancel_was_ours() else exc
        except BaseException as exc:
            error = exc
        error = await self._end(error)
        if error is not None:
            raise error
        result = self._result()
        if self.stop_reason == "max_turns" and self.agent.on_max_turns == "raise":
            raise MaxTurnsExceeded(f"the run made {self.max_turns} model calls without finishing", result=result)
        return result

    def _cancel_was_ours(self) -> bool:
        """Whether `cancel()` stopped the run (then it returns a result; else the cancellation goes on)."""
        if not self._cancel_requested:
            return False
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            task.uncancel()
        return True

    async def _begin(self) -> None:
        if self.prompt is not None:
            if self._unanswered:
                self._close_dangling_calls()
            await self._record_prompt(self.prompt)
        if _BEFORE_RUN in self._hooked:  # a call that returns at once costs a coroutine
            await self._hooks(_BEFORE_RUN)
        if self.approvals is not None and self.stop_reason is None:
            await self._resume_calls()

    async def _step(self) -> None:
        if self._cancel_requested:  # a run that never waits would not see the task's cancellation
            raise asyncio.CancelledError
        if self.state.usage.model_calls >= self.max_turns:
            await self._out_of_turns()
            return
        message = await self._model_turn(offer_tools=True)
        if message is None:
            return
        calls = message.tool_calls
        if calls:
            await self._tool_turn(calls)
        else:
            await self._answered(message)

    async def _end(self, error: BaseException | None) -> BaseException | None:
        """Close the run whatever stopped it; return the error to raise (the first one), or None."""
        if error is not None or self.stop_reason == "cancelled":
            self._close_open_calls(_FAILED if error is not None and self.stop_reason != "cancelled" else _CANCELLED)
        self.state.point = _AFTER_RUN
        try:
            if _AFTER_RUN in self._hooked:
                await self._hooks(_AFTER_RUN, stop_on_exit=False)
        except Exception as exc:
            error = error or exc
        saving = self.session is not None and self._state_saveable()
        error = error or self._state_error
        ended = self.stop_reason if error is None or self.stop_reason == "cancelled" else "failed"
        if ended == "failed" and error is not None:  # the reason stays on record, status on or off
            self._status("agent", "run failed", force=True, run_end="failed", error=error_summary(error))
        else:  # how it ended stays on record as data (a marker with agent status off)
            self._status("agent", f"run {ended}", force=True, run_end=ended)
        try:  # the last events and the state, in one write where the store can
            if self.session is not None:
                await self.recorder.flush(state=self.state.data if saving else None)
        except Exception as exc:
            error = error or exc
        if self.history is not None:
            self.history.extend(self.new_messages)
        return error

    # -- beginning: session and prompt -----------------------------------------------------

    async def _load_session(self, hold: RunHold) -> None:
        assert self.session is not None
        store, sid = self.session.store, self.session.session_id
        session, prompt = hold.session, hold.prompt
        self.state.data, self.scope.user = dict(session.state), session.user
        prompt = await load_media(store, sid, prompt)  # the bytes of images and files the log names
        prompt = await compacted(store, sid, prompt)  # from the latest compaction's summary, if any
        list.extend(self.state.messages, (user_actions_as_text(e.to_message()) for e in prompt))
        self._unanswered = {c.id: c for c in open_calls(self.state.messages)}
        if self._unanswered:  # a paused or crashed turn: read what happened after its calls
            last_calls = next(e.seq for e in reversed(prompt) if e.role == "assistant")
            self._log_tail = await store.events(sid, view="all", after_seq=(last_calls or 1) - 1)
        if self.approvals is not None and self.prompt is None:
            self._check_resumption()

    def _nothing_to_resume(self) -> bool:
        """A resumption of a run that completed: its answer, and nothing recorded."""
        messages = self.state.messages
        if self.prompt is not None or self.approvals is None or self._unanswered or messages[-1].role != "assistant":
            return False
        self.output, self.stop_reason = messages[-1].text, "completed"
        return True

    def _state_saveable(self) -> bool:
        """Whether `state.data` can be saved; it is checked before the last status says how the run ended."""
        try:
            encode_state(self.state.data)
        except ConfigError as exc:
            self._state_error = exc
            return False
        return True

    def _check_resumption(self) -> None:
        """Before anything is recorded: the approvals fit the paused calls (see `check_resumption`)."""
        state = self.state
        state.turn, self._edits = check_resumption(state.messages, self._unanswered, self.approvals or {},
                                                   state.session_id, self._offered_tools, self._log_tail)

    def _close_open_calls(self, reason: str) -> None:
        """After a failure or a cancellation: answer the recorded calls left open (with results where they ran)."""
        results = []
        for call in self._unanswered.values():
            if call.id in self._ran:
                results.append(self._ran[call.id])
            elif reason == _CANCELLED and call in self._started:
                results.append(error_result(call, _CANCELLED_WHILE_RUNNING))
            else:
                results.append(error_result(call, reason))
        self._append_results(results)
        self._turn_calls = []
        self._release_injections()

    def _close_dangling_calls(self) -> None:
        """A new prompt on a log whose last calls never got results: answer them as not run."""
        started = started_calls(self._log_tail)
        results = [
            error_result(c, DIED_REASON if c.id in started else "never run: the run was interrupted before this call")
            for c in self._unanswered.values()
        ]
        self._append_results(results)

    async def _record_prompt(self, prompt: Message) -> None:
        if self.recorder.active:
            event = Event.from_message(prompt, "user")
            if self.session is not None:
                for opening in self.session.opening:
                    self.recorder.add(opening)
                if self.session.prompt_id is not None:
                    event.id = self.session.prompt_id
            self.recorder.add(event)
        if self.session is not None and self._prompt_waits():  # stored with the first model call's flush
            self._unstored_prompt = prompt
        elif self.session is not None:  # the stored prompt carries the user's prepared parts
            prompt = await self._stored_prompt(await self.recorder.flush(), prompt)
        self._append(prompt, author=None)

    def _prompt_waits(self) -> bool:
        """Whether the prompt may wait for the first model call's flush: nothing reads the conversation before it.

        No hook runs before that model call, and a resume's approved calls do not run first.
        """
        return self.approvals is None and _BEFORE_RUN not in self._hooked and _BEFORE_LLM not in self._hooked

    async def _stored_prompt(self, flushed: list[Event], prompt: Message) -> Message:
        """The prompt as `flushed` stored it: with the user's prepared parts, if any, merged in first."""
        assert self.session is not None
        stored = [e for e in flushed if e.author == "user" and e.kind == "message"]
        stored = await load_media(self.session.store, self.session.session_id, stored, known=prompt.parts)
        return user_actions_as_text(stored[-1].to_message()) if stored else prompt

    async def _prompt_stored(self, flushed: list[Event]) -> bool:
        """The prompt that waited is stored: it takes its place in the conversation; whether that changed it.

        The stored prompt holds the user's prepared parts, if any, and names its images and
        files by digest (`blob`), as every later read of the session gives them.
        """
        prompt, self._unstored_prompt = self._unstored_prompt, None
        assert prompt is not None
        stored = await self._stored_prompt(flushed, prompt)
        for messages in (self.state.messages, self.new_messages):  # it is the last one: nothing ran since
            index = next(i for i in range(len(messages) - 1, -1, -1) if messages[i] is prompt)
            list.__setitem__(messages, index, stored)
        return stored != prompt

    # -- one model turn --------------------------------------------------------------------

    async def _model_turn(self, *, offer_tools: bool) -> Message | None:
        state = self.state
        state.turn += 1
        if _BEFORE_LLM in self._hooked:  # a call that returns at once costs a coroutine
            await self._hooks(_BEFORE_LLM)
        if self.stop_reason is not None:
            return None
        if self._hooked:
            self._watch.before_model(state)
        request = self._request(offer_tools)
        self._note_model_call()
        if self.recorder.store is not None and await self._flush_before_model():  # the prompt took prepared parts
            request.messages = self.view.messages(state)
        response = await self._asking(request)
        if response is None:  # a check beside the call tripped a guardrail: the call was cancelled
            return None
        state.response = response.to_message()
        self.buffer.hold()
        state.control.rerun_requested = False
        if _AFTER_LLM in self._hooked:
            await self._hooks(_AFTER_LLM)
        message, state.response = state.response, None
        return self._settle(message)

    def _request(self, offer_tools: bool) -> ModelRequest:
        state = self.state
        self.tools = self._offered_tools() if offer_tools else {}
        request = ModelRequest(messages=self.view.messages(state), tools=self.agent.specs_for(self.tools),
                               model_settings=state.model_settings)
        self.buffer.model_settings = None  # a hook's settings hold for this call only
        if self.agent.output_adapter is not None:
            request.output_schema = self.agent.output_adapter.json_schema()
        return request

    def _asking(self, request: ModelRequest) -> Awaitable[ModelResponse | None]:
        """The model's answer to `request`, to await: None when a check beside it tripped a guardrail."""
        asking = self._ask(request)
        if self.scope.model_logs:
            asking = self.scope.capturing(self.scope.model_log, asking)
        if not self.buffer.beside:
            return asking
        return ask_beside(asking, self.buffer.take_beside(), self._gate, self._tripped)

    def _settle(self, message: Message) -> Message | None:
        """The model's message once `after_llm` ran: held back (a guardrail), dropped (a rerun) or recorded."""
        if self.stop_reason == "guardrail":  # an output guardrail holds the answer back: nobody sees it
            self._gate.drop()
            self._answer_id = None
            self._release_injections()
            return None
        if self._gate.held is not None:
            self._gate.release()
        if self.state.control.rerun_requested and self.stop_reason is None:
            self._release_injections()
            return None
        self._append(message, author=self.agent.name, event_id=self._answer_id)
        self._answer_id = None
        calls = message.tool_calls
        if not calls:
            self._release_injections()
        else:
            self._unanswered = {c.id: c for c in calls}
            if self.stop_reason is not None:
                self._append_results([error_result(c, _NOT_RUN) for c in calls])
                self._release_injections()
        return None if self.stop_reason is not None else message

    def _note_model_call(self) -> None:
        """"turn 2: calling model" (the status is on only when something records or streams it)."""
        if self._status_on["agent"]:
            self._status("agent", f"turn {self.state.turn}: calling model")

    async def _flush_before_model(self) -> bool:
        """What the turn recorded so far, on record before the model answers; whether the conversation changed.

        A prompt that waited for this flush is stored with it, and takes the user's prepared parts.
        """
        flushed = await self.recorder.flush()
        return self._unstored_prompt is not None and await self._prompt_stored(flushed)

    async def _ask(self, request: ModelRequest) -> ModelResponse:
        model = self.agent.model
        started = time.perf_counter() if self._status_on["llm"] else 0.0
        self._first_token = None
        if self._trace is not None:
            streaming = self.recorder.queue is not None
            ask = self._ask_streaming if streaming else model.request
            response = await self._trace.chat(model, request, ask, stream=streaming)
        elif self.recorder.queue is None:
            response = await model.request(request)
        else:
            response = await self._ask_streaming(request)
        usage = self.state.usage
        usage.add(response.usage)
        usage.model_calls += 1
        if self._status_on["llm"]:
            seconds, first = time.perf_counter() - started, self._first_token
            facts = answer_facts(response, seconds, first - started if first is not None else None)
            if self.agent.status.requests:
                facts["request"] = request_record(request)
            self._status("llm", describe_answer(model.name, response, seconds), **facts)
            for line in describe_reasoning(response) if self.agent.status.reasoning else ():
                self._status("llm", line)
        return response

    async def _ask_streaming(self, request: ModelRequest) -> ModelResponse:
        model = self.agent.model
        said: list[str] = []  # the answer's text so far, kept if a cancel cuts it off
        self._answer_id = self.recorder.new_id() if self.recorder.store is not None else None
        if self._gate.holds_answers:
            self._gate.hold()
        try:
            if type(model).stream is Model.stream:  # no stream of its own: its answer's deltas, without a generator
                response = await model.request(request)
                for delta in whole_answer_deltas(response):
                    self._stream_delta(delta, said)
                return response
            done = None
            async for item in model.stream(request):  # to its end: a generator left open is closed in a task
                if isinstance(item, ResponseDone):
                    done = done or item.response
                elif done is None:
                    self._stream_delta(item, said)
        except asyncio.CancelledError:
            if not self._gate.discarding:
                self._keep_cut_off("".join(said))
            raise
        if done is None:
            raise ModelError("the model's stream ended without a response", provider=model.provider)
        return done

    def _stream_delta(self, delta: TextDelta | ReasoningDelta, said: list[str]) -> None:
        if self._first_token is None:
            self._first_token = time.perf_counter()
        if isinstance(delta, TextDelta):
            said.append(delta.text)
            send = self.recorder.delta
        elif self.agent.status.reasoning:
            send = self.recorder.reasoning_delta
        else:
            return
        held = self._gate.held
        if held is None:
            send(self.agent.name, delta.text, self._answer_id)
        else:  # a guardrail judges the call first
            held.append(partial(send, self.agent.name, delta.text, self._answer_id))

    def _keep_cut_off(self, text: str) -> None:
        """A cancel while the model streamed: what it said so far stays, an answer marked `cut_off`."""
        if not text:
            return
        message = Message.from_valid_parts("assistant", [TextPart.from_valid(text)])
        list.append(self.state.messages, message)
        self.new_messages.append(message)
        if self.agent.output_adapter is None:
            self.output = text
        if self.recorder.active:
            event = Event.from_valid(self.agent.name, "message", list(message.parts), role="assistant",
                                     metadata={"cut_off": True})
            event.id = self._answer_id
            self.recorder.add(event)

    # -- one tool turn ---------------------------------------------------------------------

    async def _tool_turn(self, calls: list[ToolCallPart], preset: dict[str, Decision] | None = None) -> None:
        state, buffer = self.state, self.buffer
        buffer.decisions = dict(preset) if preset else {}
        buffer.hold()
        self._turn_calls, self._ran = calls, {}
        if preset is None and _BEFORE_TOOL in self._hooked:
            state.tool_calls = list(calls)
            await self._hooks(_BEFORE_TOOL)
            state.tool_calls = []
        decisions = buffer.decisions
        if self.stop_reason is not None:
            self._append_results([d.result if d and d.result else error_result(c, _NOT_RUN)
                                  for c, d in ((c, decisions.get(c.id)) for c in calls)])
            self._turn_calls = []
            self._release_injections()
            return
        to_run = [c for c in calls if c.id not in decisions] if decisions else calls
        if self.recorder.active:
            await self._record_starts(to_run)
        self._started, ran = to_run, self._ran
        rest = self.runner.start(self.tools, to_run, ran)
        if rest is not None:  # some calls wait (I/O): those that could be answered at once were
            await rest
        asked = self.scope.take_questions()
        if asked:  # a tool asked the user a question (`RunContext.ask`): its call pauses like an interrupted one
            decisions = {**decisions, **asked}
        if decisions or _AFTER_TOOL in self._hooked:
            results = await self._after_tools(calls, decisions, ran)
        else:  # what `_after_tools` gives when there is nothing to apply
            results = [ran[c.id] for c in calls]
        self._append_results(results)
        self._turn_calls = []
        if decisions and any(d.action == "interrupt" for d in decisions.values()):
            self._record_interruptions(calls, decisions)
        else:
            self._release_injections()
        if self.runner.keep and self.stop_reason is None:
            self._exit_if_done(results, ran)

    async def _record_starts(self, calls: list[ToolCallPart]) -> None:
        """"running add(a=1, b=2)" for each call, on record before it runs: at most once, even after a kill."""
        for call in calls:
            self.scope.call_started(call)
        if self.recorder.store is not None:
            await self.recorder.flush()

    def _exit_if_done(self, results: list[ToolResultPart], ran: dict[str, ToolResultPart]) -> None:
        """An exit condition: a tool it names ran and succeeded, so the run ends, its value the output."""
        done = self.runner.exit_value(results, ran)
        if done is not None:
            name, self.output = done
            self.stop_reason = "completed"
            self._status("agent", f"{name} ran: exit condition met", exit_condition=name)

    async def _after_tools(
        self, calls: list[ToolCallPart], decisions: dict[str, Decision], ran: dict[str, ToolResultPart]
    ) -> list[ToolResultPart]:
        state, buffer, results = self.state, self.buffer, []
        for call in calls:
            decision = decisions.get(call.id)
            if decision is not None:
                if decision.result is not None:
                    results.append(decision.result)
                continue
            state.tool_call, buffer.tool_result = call, ran[call.id]
            if _AFTER_TOOL in self._hooked:
                await self._hooks(_AFTER_TOOL, stop_on_exit=True)
            results.append(buffer.tool_result)
            state.tool_call = buffer.tool_result = None
        return results

    def _record_interruptions(self, calls: list[ToolCallPart], decisions: dict[str, Decision]) -> None:
        for call in calls:
            decision = decisions.get(call.id)
            if decision is None or decision.action != "interrupt":
                continue
            for inner in decision.inner:  # its sub-agent paused: the sub-agent's calls are what awaits the user
                self._record_pause(inner, agent=inner.agent, agent_call_id=call.id)
            if not decision.inner:
                self._record_pause(Interruption(call_id=call.id, name=call.name, arguments=call.arguments,
                                                reason=decision.reason, response_schema=decision.response_schema))
        for message in self.buffer.take():  # they join the conversation once the paused calls are answered
            self._status("agent", "a hook's message waits for the paused calls", force=True,
                         held_message=message.model_dump(mode="json"))
        self.stop_reason = "interrupted"

    def _record_pause(self, item: Interruption, **where: Any) -> None:
        self.interruptions.append(item)
        name = f"{item.agent}'s {item.name}" if item.agent else item.name
        if item.response_schema is not None:
            text = f"paused {name}: it asks {item.reason}"
        else:
            text = f"paused {name} for approval" + (f": {item.reason}" if item.reason else "")
        self._status("agent", text, force=True, interrupted=item.model_dump(exclude_none=True), **where)

    # -- ending: answers, turn limits, resume ----------------------------------------------

    async def _answered(self, message: Message) -> None:
        if not self._accept_output(message):
            return
        self.state.control.reset()
        if _ON_EXIT in self._hooked:
            await self._hooks(_ON_EXIT)
        if self.stop_reason is None and not self.state.control.continue_requested:
            self.stop_reason = "completed"

    def _accept_output(self, message: Message) -> bool:
        adapter = self.agent.output_adapter
        if adapter is None:
            self.output = message.text
            return True
        try:
            self.output = adapter.validate_json(message.text)
            return True
        except ValidationError as exc:
            if self.retried_output:
                raise ModelError(f"the model's answer does not match the output type: {exc}",
                                 provider=self.agent.model.provider) from exc
            self.retried_output = True
            self._append(Message.user(f"Your answer did not match the required JSON schema: {exc}. "
                                      "Answer again with JSON that matches it."), author="hookline")
            return False

    async def _out_of_turns(self) -> None:
        if self.agent.on_max_turns == "final_answer":
            message = await self._model_turn(offer_tools=False)
            if message is not None and message.tool_calls:
                self._append_results([error_result(c, "no turns left: answer without tools")
                                      for c in message.tool_calls])
            if message is not None:
                self.output = message.text
        if self.stop_reason is None:
            self.stop_reason = "max_turns"

    async def _resume_calls(self) -> None:
        pending = list(self._unanswered.values())
        if not pending:  # the model's answer was never recorded (its process died while it answered): ask again
            return
        approvals = self.approvals or {}
        preset = plan_resume(pending, approvals, self._log_tail)
        self.scope.replies = replies(pending, approvals, self._log_tail)
        self.scope.answers = nested_answers(pending, approvals)
        self.tools = self._offered_tools()
        self.buffer.messages.extend(held_messages(self._log_tail))
        if self.audit:  # e.g. who decided each call (and each call paused inside a sub-agent)
            for event in self.audit([*pending, *inner_calls(self._log_tail)], approvals):
                self.recorder.add(event)
        for call_id, edited in self._edits.items():  # the user's edit is on record before the call runs
            self.recorder.add(edit_event(self._unanswered[call_id], edited, self.scope.user))
            self._unanswered[call_id] = edited
        await self._tool_turn(list(self._unanswered.values()), preset)

    # -- small shared steps ----------------------------------------------------------------

    def _offered_tools(self) -> dict[str, Tool]:
        """The tools offered now: the agent's for this state, and this run's own."""
        tools = self.agent.tools_for(self.state)
        return {**tools, **self.run_tools} if self.run_tools else tools

    async def _hooks(self, point: HookPoint, *, stop_on_exit: bool = True) -> None:
        hooks = self.agent.hooks.get(point)
        if not hooks:
            return
        state = self.state
        state.point = point
        for bound in hooks:
            response = state.response
            try:
                if bound.plan is None and not self.scope.hook_logs:
                    await bound(state)
                else:
                    await self.scope.call_hook(bound, point, capture_logs=self.scope.hook_logs)
            except Exception as exc:
                raise HookError(f"hook {bound.name!r} failed at {point.value}: {type(exc).__name__}: {exc}",
                                hook=bound.name, point=point.value) from exc
            self._watch.after_hook(bound.name, point, state, response, self._turn_calls)
        if self.buffer.trips:
            self._tripped()
        if self.buffer.records:  # before injected messages: a compaction's summary stands for what came before
            for record in self.buffer.take_records():
                self.recorder.add(record)
        if stop_on_exit and state.control.exit_requested and self.stop_reason is None:
            self.stop_reason = "hook_exit"
        if not self.buffer.holding:
            self._release_injections()

    def _tripped(self) -> bool:
        """Record the guardrails that tripped; whether the run stops for one (now or before)."""
        for name, reason, stop, details in self.buffer.take_trips():
            action = "stop" if stop else "reject"
            self._status("agent", f"guardrail {name} tripped: {reason}", force=True,
                         guardrail={"name": name, "reason": reason, "action": action, **details})
            if stop and self.stop_reason is None:
                self.stop_reason = "guardrail"
        return self.stop_reason == "guardrail"

    def _append(self, message: Message, *, author: str | None, event_id: str | None = None) -> None:
        list.append(self.state.messages, message)  # the loop's own appends need no check
        self.new_messages.append(message)
        if author is not None and self.recorder.active:
            event = Event.from_message(message, author)
            if event_id is not None:
                event.id = event_id
            self.recorder.add(event)

    def _append_results(self, results: list[ToolResultPart]) -> None:
        self.state.usage.tool_calls += len(results)
        status = self._status_on["tool"]
        for result in results:
            self._unanswered.pop(result.call_id, None)
            self._append(Message.from_valid_parts("tool", [result]), author=result.name or "tool")
            if status:
                self.scope.call_answered(result)

    def _release_injections(self) -> None:
        if not self.buffer.messages:  # nearly always: no hook injected anything
            self.buffer.holding = False
            return
        for message in self.buffer.release():
            self._append(message, author="hook")

    def _result(self) -> RunResult:
        return without_validation(RunResult, {
            "output": self.output, "messages": self.new_messages, "stop_reason": self.stop_reason or "completed",
            "usage": self.state.usage, "interruptions": self.interruptions,
            "session_id": self.state.session_id, "exit_reason": self.state.control.exit_reason,
        })

