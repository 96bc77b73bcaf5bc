"""The run loop, top to bottom.

`Run.execute()` is the table of contents: begin (load the session, record the prompt,
`before_run`), then one step per model turn until something stops the run, then end
(`after_run`, save). Each step is a short method below it, in the order it happens.
What hooks decide through `State` waits in the run's `TurnBuffer` and is applied right after
their point's hooks have run. The loop sees its agent through `AgentSpec`, since `Agent`
imports this module. Its parts live beside it: a model call (`model_call`), the calls of a
tool turn (`tool_turn`), the prompt's record (`prompt_record`) and the calls a session's last
run left open (`paused_turn`).

Whatever ends a run (an answer, a hook, an error, a cancellation), `_end` leaves the log
valid: every tool call it recorded is answered, and the last status says how the run ended.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
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
from hookline._run.cancel_switch import CancelSwitch
from hookline._run.model_call import ModelCalls
from hookline._run.model_gate import ModelGate, ask_beside
from hookline._run.paused_turn import PausedTurn
from hookline._run.prompt_record import PromptRecord, SessionTarget
from hookline._run.prompt_view import PromptView, load_media
from hookline._run.recorder import Recorder, StreamQueue
from hookline._run.resume import Answer, AuditLines
from hookline._run.run_scope import RunScope
from hookline._run.state_record import StateRecord
from hookline._run.status import SLOW_HOOK_S, slow_hook
from hookline._run.tool_runner import ToolRunner
from hookline._run.tool_turn import ToolTurn, closing_results, pause_line, pauses, unrun_results
from hookline._run.turn_buffer import TurnBuffer
from hookline.agent_spec import AgentSpec
from hookline.compaction import compacted
from hookline.conversation import HookWatch, open_calls, user_actions_as_text
from hookline.decision import Decision
from hookline.errors import ConfigError, HookError, MaxTurnsExceeded, ModelError, error_summary
from hookline.events import Event
from hookline.hook_points import HookPoint
from hookline.messages import DocumentPart, Message, ToolCallPart, ToolResultPart, without_validation
from hookline.models.base import ModelRequest, ModelResponse, ModelSettings
from hookline.result import Interruption, RunResult
from hookline.sessions._codec import encode_state
from hookline.sessions.base import RunHold
from hookline.state import State
from hookline.tools import Tool, error_result
from hookline.types import StopReason

__all__ = ["Run"]

_NOT_RUN = "not run: the run stopped before this call"
_FAILED = "not run: the run failed"
_CANCELLED = "not run: the run was cancelled"
_message_event = Event.from_message  # bound once: a class attribute of a pydantic model costs a look-up per call


class Run:
    """One run of an agent: owns the live `State` and its `TurnBuffer`, writes events through a `Recorder`."""

    __slots__ = (  # more than 30 attributes would make each instance a dict of its own, slower to read
        "_calls", "_hooked", "_paused", "_prompt_record", "_status", "_status_on", "_stop", "_trace", "_turn",
        "_unanswered", "_watch", "agent", "approvals", "audit", "buffer", "history",
        "interruptions", "max_turns", "new_messages", "output", "prompt", "recorder", "retried_output", "run_tools",
        "runner", "scope", "session", "state", "state_record", "stop_reason", "tools", "view",
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
        tracing = _tracing.active
        self._trace = None if tracing is None else tracing.for_run(agent, self.state.session_id, prompt)
        self.runner = ToolRunner(agent.tool_concurrency, self.scope.tool_log if self.scope.tool_logs else None,
                                 exit_tools=agent.exit_conditions, trace=self._trace)
        self._paused: PausedTurn | None = None  # the calls the session's last run left open, read back
        self.view = PromptView(agent, documents)
        self._turn: ToolTurn | None = None  # the tool turn under way, until its results are appended
        self._unanswered = {c.id: c for c in open_calls(self.state.messages)}  # as recorded, whatever hooks edit
        self._watch = HookWatch()
        self._hooked = frozenset(point for point, hooks in agent.hooks.items() if hooks)
        self._stop = CancelSwitch()
        gate = ModelGate(any(getattr(b.hook, "holds_stream", False) for b in agent.hooks.get(_AFTER_LLM, ())))
        self._calls = ModelCalls(agent, self.recorder, self.scope, gate, self._trace)
        self._prompt_record = PromptRecord(self.recorder, session)
        recording_state = session is not None and agent.status.state
        self.state_record = StateRecord(self.recorder, agent.name) if recording_state else None
        """`state.data` on record where it changed (`StatusOptions(state=True)`), at each flush; None: off."""

    # -- the table of contents -------------------------------------------------------------

    async def execute(self) -> RunResult:
        """Run to the end and return the result (or raise `MaxTurnsExceeded`, `HookError`, ...)."""
        if self._trace is not None:
            return await self._trace.run(self._execute_in_session)
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
        self._stop.pull()

    async def _execute(self, hold: RunHold | None = None) -> RunResult:
        await self.agent.warm_up()
        self.scope.bind()
        self._stop.bind()
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
            error = None if self._stop.stopped_the_run() else exc
        except BaseException as exc:
            error = exc
        error = await self._end(error)
        if error is not None:
            raise error
        result = self._result()
        if self.stop_reason == "max_turns" and self.agent.on_max_turns == "raise":
            raise MaxTurnsExceeded(f"the run made {self.max_turns} model calls without finishing", result=result)
        return result

    async def _begin(self) -> None:
        self._note_state()  # the state the run starts from, before its prompt
        if self.prompt is not None:
            if self._unanswered:  # the session's last run left calls open: a new prompt closes them
                self._append_results((self._paused or PausedTurn([])).closed(list(self._unanswered.values())))
            await self._record_prompt(self.prompt)
        if _BEFORE_RUN in self._hooked:  # a call that returns at once costs a coroutine
            await self._hooks(_BEFORE_RUN)
        if self.approvals is not None and self.stop_reason is None:
            await self._resume_calls()

    async def _step(self) -> None:
        if self._stop.pulled:  # a run that never waits would not see the task's cancellation
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
        unsaveable = self._unsaveable_state() if self.session is not None else None
        error = error or unsaveable
        ended = self.stop_reason if error is None or self.stop_reason == "cancelled" else "failed"
        if ended == "failed" and error is not None:  # the reason stays on record, status on or off
            self._status("agent", "run failed", force=True, run_end="failed", error=error_summary(error))
        else:  # how it ended stays on record as data (a marker with agent status off)
            self._status("agent", f"run {ended}", force=True, run_end=ended)
        try:  # the last events and the state, in one write where the store can
            if self.session is not None:
                if unsaveable is None:
                    self._note_state()
                await self.recorder.flush(state=self.state.data if unsaveable is None else None)
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
        self._paused = await PausedTurn.read(store, sid, prompt) if self._unanswered else PausedTurn([])
        if self.approvals is not None and self.prompt is None:  # before anything is recorded
            state = self.state
            state.turn = self._paused.check(state.messages, self._unanswered, self.approvals, state.session_id,
                                            self._offered_tools)

    def _nothing_to_resume(self) -> bool:
        """A resumption of a run that completed: its answer, and nothing recorded."""
        messages = self.state.messages
        if self.prompt is not None or self.approvals is None or self._unanswered or messages[-1].role != "assistant":
            return False
        self.output, self.stop_reason = messages[-1].text, "completed"
        return True

    def _note_state(self) -> None:
        if self.state_record is not None:
            self.state_record.note(self.state.data)

    def _unsaveable_state(self) -> ConfigError | None:
        """Why `state.data` cannot be saved, if it cannot: checked before the last status says how the run ended."""
        try:
            encode_state(self.state.data)
        except ConfigError as exc:
            return exc
        return None

    def _close_open_calls(self, reason: str) -> None:
        """After a failure or a cancellation: answer the recorded calls left open (with results where they ran)."""
        self._append_results(closing_results(self._turn, self._unanswered.values(), reason,
                                             cancelled=reason == _CANCELLED))
        self._turn = None
        self._release_injections()

    async def _record_prompt(self, prompt: Message) -> None:
        # it may wait for the first model call's flush when nothing reads the conversation before it
        may_wait = self.approvals is None and _BEFORE_RUN not in self._hooked and _BEFORE_LLM not in self._hooked
        self._append(await self._prompt_record.record(prompt, may_wait=may_wait), author=None)

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
        self._note_state()
        # what the turn recorded, on record before the model answers (the prompt, if it waited for this flush)
        if self.recorder.store is not None and await self._prompt_record.flush(state.messages, self.new_messages):
            request.messages = self.view.messages(state)  # the stored prompt took the user's prepared parts
        try:
            response = await self._asking(request)
        except asyncio.CancelledError:  # what the model said before the cancel stays: an answer marked `cut_off`
            message = self._calls.take_cut_off()
            if message is not None:
                self._append(message, author=None)
                if self.agent.output_adapter is None:
                    self.output = message.text
            raise
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
        if self._status_on["agent"]:  # on only when something records or streams it
            self.scope.calling_model(state.turn)
        return request

    def _asking(self, request: ModelRequest) -> Awaitable[ModelResponse | None]:
        """The model's answer to `request`, to await: None when a check beside it tripped a guardrail."""
        asking = self._calls.ask(request, self.state.usage)
        if self.scope.model_logs:
            asking = self.scope.capturing(self.scope.model_log, asking)
        if not self.buffer.beside:
            return asking
        return ask_beside(asking, self.buffer.take_beside(), self._calls.gate, self._tripped)

    def _settle(self, message: Message) -> Message | None:
        """The model's message once `after_llm` ran: held back (a guardrail), dropped (a rerun) or recorded."""
        calls = self._calls
        if self.stop_reason == "guardrail":  # an output guardrail holds the answer back: nobody sees it
            calls.gate.drop()
            calls.answer_id = None
            self._release_injections()
            return None
        if calls.gate.held is not None:
            calls.gate.release()
        if self.state.control.rerun_requested and self.stop_reason is None:
            self._release_injections()
            return None
        self._append(message, author=self.agent.name, event_id=calls.answer_id)
        calls.answer_id = None
        tool_calls = message.tool_calls
        if not tool_calls:
            self._release_injections()
        else:
            self._unanswered = {c.id: c for c in tool_calls}
            if self.stop_reason is not None:
                self._append_results([error_result(c, _NOT_RUN) for c in tool_calls])
                self._release_injections()
        return None if self.stop_reason is not None else message

    # -- one tool turn ---------------------------------------------------------------------

    async def _tool_turn(self, calls: list[ToolCallPart]) -> None:
        """The model's calls: `before_tool` decides on them, the rest run, `after_tool` reads each result."""
        self.buffer.decisions = {}
        self.buffer.hold()
        self._turn = turn = ToolTurn(calls)
        if _BEFORE_TOOL in self._hooked:
            state = self.state
            state.tool_calls = list(calls)
            await self._hooks(_BEFORE_TOOL)
            state.tool_calls = []
        await self._run_calls(turn)

    async def _resume_turn(self, calls: list[ToolCallPart], planned: dict[str, Decision]) -> None:
        """A paused turn's calls, resumed: `planned` answers those the user refused or answered.

        `before_tool` does not run again: these calls passed it before they paused, and the
        user's answers stand for its decisions (docs/hooks.md, "resume").
        """
        self.buffer.decisions = dict(planned)
        self.buffer.hold()
        self._turn = turn = ToolTurn(calls)
        await self._run_calls(turn)

    async def _run_calls(self, turn: ToolTurn) -> None:
        """Run the turn's calls that nothing decided, then answer every call of the turn in order."""
        calls, decisions = turn.calls, self.buffer.decisions
        if self.stop_reason is not None:
            self._append_results(unrun_results(calls, decisions, _NOT_RUN))
            self._turn = None
            self._release_injections()
            return
        to_run = [c for c in calls if c.id not in decisions] if decisions else calls
        if self.recorder.active:  # "running add(a=1, b=2)": on record before the call runs, at most once after a kill
            for call in to_run:
                self.scope.call_started(call)
            if self.recorder.store is not None:
                self._note_state()
                await self.recorder.flush()
        turn.started = to_run
        rest = self.runner.start(self.tools, to_run, turn.ran)
        if rest is not None:  # some calls wait (I/O): those that could be answered at once were
            await rest
        asked = self.scope.take_questions()
        if asked:  # a tool asked the user a question (`RunContext.ask`): its call pauses like an interrupted one
            decisions = {**decisions, **asked}
        if decisions or _AFTER_TOOL in self._hooked:
            results = await self._after_tools(calls, decisions, turn.ran)
        else:  # what `_after_tools` gives when there is nothing to apply
            results = [turn.ran[c.id] for c in calls]
        self._append_results(results)
        self._turn = None
        if decisions and any(d.action == "interrupt" for d in decisions.values()):
            self._record_interruptions(calls, decisions)
        else:
            self._release_injections()
        if self.runner.exit_tools and self.stop_reason is None:
            self._exit_if_done(results, turn.ran)

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
        for item, where in pauses(calls, decisions):
            self.interruptions.append(item)
            self._status("agent", pause_line(item), force=True, **where, interrupted=item.model_dump(exclude_none=True))
        for message in self.buffer.take():  # they join the conversation once the paused calls are answered
            self._status("agent", "a hook's message waits for the paused calls", force=True,
                         held_message=message.model_dump(mode="json"))
        self.stop_reason = "interrupted"

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
        if not self._unanswered:  # the model's answer was never recorded (its process died as it answered)
            return
        taken = (self._paused or PausedTurn([])).take_up(self._unanswered, self.approvals or {}, self.audit,
                                                          self.scope.user)
        self.scope.replies, self.scope.answers = taken.replies, taken.answers
        self.tools = self._offered_tools()
        self.buffer.messages.extend(taken.held)
        for event in taken.events:  # e.g. who decided each call, and the user's edits, before the calls run
            self.recorder.add(event)
        await self._resume_turn(list(self._unanswered.values()), taken.planned)

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
        timed = self.recorder.store is not None  # a slow hook's time goes on record
        for bound in hooks:
            response = state.response
            began = time.perf_counter() if timed else 0.0
            try:
                if bound.plan is None and not self.scope.hook_logs:
                    await bound(state)
                else:
                    await self.scope.call_hook(bound, point, capture_logs=self.scope.hook_logs)
            except Exception as exc:
                raise HookError(f"hook {bound.name!r} failed at {point.value}: {type(exc).__name__}: {exc}",
                                hook=bound.name, point=point.value) from exc
            if timed and (took := time.perf_counter() - began) >= SLOW_HOOK_S:
                self.recorder.add(slow_hook(self.agent.name, bound.name, point, took))
            self._watch.after_hook(bound.name, point, state, response, self._turn.calls if self._turn else ())
        self._after_hooks(stop_on_exit)

    def _after_hooks(self, stop_on_exit: bool) -> None:
        """What a point's hooks decided, applied once they all ran: trips, records, an exit, injected messages."""
        state = self.state
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
            event = _message_event(message, author)
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

