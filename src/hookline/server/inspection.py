"""Reading a session's log back for the inspector: titles, runs over time, and model calls.

Everything here is derived from the log (the `all` view) as the loop writes it: a run's
model call is its "turn N: calling model" line (`metadata["model_turn"]`), the model's own
status line (`metadata["model_call"]`: its name, tokens, duration) and the answer message; a
tool call is its start (a status line or a marker holding `started` and `call_id`) and its
result message. Only logs recorded before those lines held their facts as data are read
from the lines' text.

The request of a model call is rebuilt: the messages logged before the call, after the
agent's instructions, with the agent's tools and its model's settings. `ModelCall.notes`
says where that may differ from what the provider got (a hook that edited the
conversation before the call, instructions or tools chosen by a function of the state).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from hookline.agent import Agent
from hookline.compaction import compacted_log
from hookline.conversation import user_actions_as_text
from hookline.events import Event, run_end, title_of
from hookline.messages import Message, ToolResultPart
from hookline.models import ToolSpec
from hookline.server.inspect_schemas import ModelCall, ModelCallRequest, PromptTrace, RunTimeline, Span, TraceSpan
from hookline.server.log_window import WINDOW

__all__ = ["CallEvents", "model_calls", "prompts_of", "rebuild_call", "runs_of", "status_of", "when"]

_LEGACY_CALLING = re.compile(r"turn (\d+): calling model")  # a log's lines without their facts as data
_LEGACY_ANSWERED = re.compile(r"(.+) answered: .+, (\d+) tokens, (\d+) ms")
_NOTE_MESSAGES = ("messages: rebuilt from the log (from its compaction in effect then, if any); a hook that "
                  "changed the conversation before this call otherwise (e.g. a sliding window) is not on record")
_NOTE_SETTINGS = "tools and settings: the agent's and its model's as this server defines them now"
_NOTE_WINDOW = ("messages: from event {first} on only (the log holds more before them, left out: the inspector "
                "reads at most {window} events before a call)")
_NOTE_RECORDED = ("the request as the provider got it, recorded by the run (StatusOptions(requests=True)); "
                  "images and files sent as bytes show as a note of their size")


def when(event: Event) -> datetime | None:
    """When `event` happened: its own time, or its original's for an event copied into a fork."""
    copied = event.metadata.get("copied_from")
    if isinstance(copied, dict) and isinstance(copied.get("created_at"), str):
        try:
            return datetime.fromisoformat(copied["created_at"])
        except ValueError:
            return event.created_at
    return event.created_at


@dataclass
class CallEvents:
    """The events of one model call (any may be missing: status lines can be switched off)."""

    start: Event | None = None
    answer: Event | None = None
    message: Event | None = None

    @property
    def seqs(self) -> list[int]:
        """The seqs of its events, in order."""
        return [e.seq for e in (self.start, self.answer, self.message) if e is not None and e.seq is not None]

    @property
    def turn(self) -> int | None:
        """Its turn, from the "calling model" line."""
        if self.start is None:
            return None
        turn = self.start.metadata.get("model_turn")
        if isinstance(turn, int):
            return turn
        found = _LEGACY_CALLING.fullmatch(self.start.text)
        return int(found.group(1)) if found else None

    @property
    def reported(self) -> tuple[str, int, float] | None:
        """(model name, tokens, milliseconds) from the model's status line.

        The name of a sub-agent's model is shown after the sub-agent's ("researcher: gpt-4o").
        """
        if self.answer is None:
            return None
        facts = self.facts
        if isinstance(facts.get("model"), str):
            agent = self.answer.metadata.get("agent")
            name = f"{agent}: {facts['model']}" if isinstance(agent, str) else facts["model"]
            return name, facts.get("input_tokens", 0) + facts.get("output_tokens", 0), facts.get("duration_ms", 0.0)
        found = _LEGACY_ANSWERED.fullmatch(self.answer.text)
        return (found.group(1), int(found.group(2)), float(found.group(3))) if found else None

    @property
    def facts(self) -> dict[str, Any]:
        """What the model's status line records as data (`metadata["model_call"]`): tokens, ttft, duration."""
        facts = self.answer.metadata.get("model_call") if self.answer is not None else None
        return facts if isinstance(facts, dict) else {}

    @property
    def record(self) -> dict[str, Any] | None:
        """The request as the provider got it, where the run recorded it (`metadata["request"]`)."""
        record = self.answer.metadata.get("request") if self.answer is not None else None
        return record if isinstance(record, dict) else None


def _is_start(event: Event) -> bool:
    if event.kind != "status" or event.source != "agent":
        return False
    return isinstance(event.metadata.get("model_turn"), int) or (
        not event.metadata and _LEGACY_CALLING.fullmatch(event.text) is not None)


def _is_answer(event: Event) -> bool:
    if event.kind != "status" or event.source != "llm":
        return False
    return isinstance(event.metadata.get("model_call"), dict) or (
        not event.metadata and _LEGACY_ANSWERED.fullmatch(event.text) is not None)


def model_calls(events: Sequence[Event]) -> list[CallEvents]:
    """The model calls of `events` (log order), each with the events that record it."""
    calls: list[CallEvents] = []
    current: CallEvents | None = None
    for event in events:
        if _is_start(event):
            current = CallEvents(start=event)
            calls.append(current)
        elif _is_answer(event):
            if current is None or current.answer is not None:
                current = CallEvents()
                calls.append(current)
            current.answer = event
        elif event.kind == "message" and event.role == "assistant" and not event.partial:
            if current is None or current.message is not None:
                current = CallEvents()
                calls.append(current)
            current.message = event
            current = None
        elif event.kind == "message" or run_end(event) is not None:
            current = None
    return calls


# -- timelines ---------------------------------------------------------------------------------


@dataclass
class _Run:
    events: list[Event] = field(default_factory=list)
    end: Event | None = None
    error: str | None = None


def _split_runs(events: Sequence[Event]) -> list[_Run]:
    runs: list[_Run] = []
    current = _Run()
    for event in events:
        if event.partial:
            continue
        if event.kind == "marker" and not current.events and runs:  # a note after a run (its webhook): that run's
            runs[-1].events.append(event)
            continue
        current.events.append(event)
        if run_end(event) is not None:
            current.end = event
            current.error = _failure(event)
            runs.append(current)
            current = _Run()
    if current.events:
        runs.append(current)
    return runs


def _failure(end: Event) -> str | None:
    """Why a run failed, from its last line ("run failed", with the error in its metadata)."""
    error = end.metadata.get("error")
    return str(error.get("message", end.text)) if isinstance(error, dict) else None


def runs_of(events: Sequence[Event]) -> list[RunTimeline]:
    """The runs of a session's log (the `all` view), each with its model and tool calls over time."""
    timelines = []
    for run in _split_runs(events):
        spans = sorted(_model_spans(run.events) + _tool_spans(run.events), key=lambda s: s.seq)
        first, last = run.events[0], run.events[-1]
        prompt = next((e for e in run.events if e.kind == "message" and e.role == "user"), None)
        timelines.append(RunTimeline(
            first_seq=first.seq or 0, last_seq=last.seq or 0,
            title=title_of([prompt]) if prompt is not None else "resumed",
            started_at=when(first), ended_at=when(run.end) if run.end else None,
            outcome=run_end(run.end) if run.end else None, error=run.error,
            tokens=sum(s.tokens or 0 for s in spans), spans=spans,
        ))
    return timelines


def _model_spans(events: Sequence[Event]) -> list[Span]:
    spans = []
    for call in model_calls(events):
        first = call.start or call.answer or call.message
        assert first is not None  # every call has one of its three events
        reported = call.reported
        started = when(first)
        end = call.answer or call.message
        duration: float | None = float(reported[2]) if reported else None
        if duration is None and end is not None and end is not first:
            duration = _ms_between(started, when(end))
        name = reported[0] if reported else (call.message.author if call.message else "model")
        ended = started + timedelta(milliseconds=duration) if started and duration is not None else None
        facts = call.facts
        spans.append(Span(kind="model", name=name, seq=first.seq or 0, end_seq=end.seq if end else None,
                          started_at=started, ended_at=ended, duration_ms=duration,
                          tokens=reported[1] if reported else None, input_tokens=facts.get("input_tokens"),
                          output_tokens=facts.get("output_tokens"), ttft_ms=facts.get("ttft_ms"), **_cost(facts)))
    return spans


def _cost(facts: dict[str, Any]) -> dict[str, Any]:
    """A model call's cost and currency, where its status line records them (a model with prices)."""
    cost, currency = facts.get("cost"), facts.get("currency")
    if not isinstance(cost, int | float) or not isinstance(currency, str):
        return {}
    return {"cost": float(cost), "currency": currency}


def _total_cost(calls: Sequence[TraceSpan]) -> dict[str, Any]:
    """What model calls cost together: where any has a cost, and all that have one share a currency."""
    priced = [c for c in calls if c.cost is not None]
    currencies = {c.currency for c in priced}
    if not priced or len(currencies) > 1:
        return {}
    return {"cost": round(sum(c.cost or 0 for c in priced), 8), "currency": currencies.pop()}


def _tool_spans(events: Sequence[Event]) -> list[Span]:
    spans: dict[str, Span] = {}
    for event in events:
        call_id = event.metadata.get("call_id")
        if event.kind != "message" and event.metadata.get("started") and isinstance(call_id, str):
            spans[call_id] = Span(kind="tool", name=event.author, seq=event.seq or 0, started_at=when(event),
                                  call_id=call_id)
        elif isinstance(child := event.metadata.get("child_session_id"), str) and event.kind != "message":
            span = spans.get(str(event.metadata.get("agent_call_id")))
            if span is not None:  # the call runs a sub-agent: the inspector opens its session under it
                span.child_session_id = child
        elif event.kind == "message" and event.role == "tool":
            for result in (p for p in event.parts if isinstance(p, ToolResultPart)):
                _close_tool_span(spans, result, event)
    return list(spans.values())


def _close_tool_span(spans: dict[str, Span], result: ToolResultPart, event: Event) -> None:
    span = spans.get(result.call_id)
    if span is None:  # answered without running: denied, skipped, or not run
        span = spans[result.call_id] = Span(kind="tool", name=result.name or event.author, seq=event.seq or 0,
                                            started_at=when(event), call_id=result.call_id, ran=False)
    span.end_seq, span.ended_at, span.is_error = event.seq, when(event), result.is_error
    span.duration_ms = _ms_between(span.started_at, span.ended_at)


def _ms_between(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return max(0.0, (end - start).total_seconds() * 1000)


# -- traces: one per prompt --------------------------------------------------------------------


def prompts_of(events: Sequence[Event]) -> list[PromptTrace]:
    """The prompts of a session's log (the `all` view), each with its runs (the resumes too) over time."""
    prompts: list[list[_Run]] = []
    for run in _split_runs(events):
        starts = any(e.kind == "message" and e.role == "user" for e in run.events)
        if starts or not prompts:
            prompts.append([])
        prompts[-1].append(run)
    return [_prompt_trace(runs) for runs in prompts]


def _prompt_trace(runs: list[_Run]) -> PromptTrace:
    spans: list[TraceSpan] = []
    waits = _approval_waits([e for run in runs for e in run.events])
    for index, run in enumerate(runs):
        spans.append(_run_span(run, "run" if index == 0 else "resume"))
        inner = [TraceSpan(depth=1, **span.model_dump()) for span in _model_spans(run.events) + _tool_spans(run.events)]
        spans.extend(sorted(inner + _hook_marks(run.events), key=lambda s: s.seq))
        within = range(run.events[0].seq or 0, (run.events[-1].seq or 0) + 1)
        spans.extend(w for w in waits if w.seq in within)
    first, last = runs[0], runs[-1]
    prompt = next((e for e in first.events if e.kind == "message" and e.role == "user"), None)
    return PromptTrace(
        title=title_of([prompt]) if prompt is not None else "resumed",
        first_seq=first.events[0].seq or 0, last_seq=last.events[-1].seq or 0, started_at=when(first.events[0]),
        ended_at=when(last.end) if last.end else None, outcome=run_end(last.end) if last.end else None,
        error=last.error, tokens=sum(s.tokens or 0 for s in spans if s.kind == "model"),
        input_tokens=sum(s.input_tokens or 0 for s in spans if s.kind == "model"),
        output_tokens=sum(s.output_tokens or 0 for s in spans if s.kind == "model"),
        **_total_cost([s for s in spans if s.kind == "model"]),
        waited_ms=sum(s.duration_ms or 0 for s in spans if s.kind == "approval"), spans=spans,
    )


def _run_span(run: _Run, name: str) -> TraceSpan:
    first = run.events[0]
    started, ended = when(first), when(run.end) if run.end else None
    outcome = run_end(run.end) if run.end else None
    return TraceSpan(kind="run", name=name, depth=0, seq=first.seq or 0, end_seq=run.end.seq if run.end else None,
                     started_at=started, ended_at=ended, duration_ms=_ms_between(started, ended), outcome=outcome,
                     is_error=outcome == "failed")


def _hook_marks(events: Sequence[Event]) -> list[TraceSpan]:
    """A hook's lines, as marks; its slow calls (`metadata["hook_call"]`), as spans with their time."""
    marks = []
    for event in events:
        call = event.metadata.get("hook_call") if event.kind == "marker" else None
        if isinstance(call, dict) and isinstance(call.get("hook"), str):
            started = _parsed(call.get("started_at"))
            took = call.get("duration_ms")
            took = float(took) if isinstance(took, int | float) else None
            ended = started + timedelta(milliseconds=took) if started and took is not None else None
            marks.append(TraceSpan(kind="hook", name=call["hook"], depth=1, seq=event.seq or 0, started_at=started,
                                   ended_at=ended, duration_ms=took, outcome=f"at {call.get('point', '')}"))
        elif event.kind == "status" and isinstance(event.metadata.get("hook"), str):
            marks.append(TraceSpan(kind="hook", name=str(event.metadata["hook"]), depth=1, seq=event.seq or 0,
                                   started_at=when(event), outcome=event.text))
    return marks


def _parsed(value: object) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _approval_waits(events: Sequence[Event]) -> list[TraceSpan]:
    """The human waits: from a call's pause to the line that recorded its decision (open while none did)."""
    waits: dict[str, TraceSpan] = {}
    for event in events:
        paused, decided = event.metadata.get("interrupted"), event.metadata.get("approval")
        if isinstance(paused, dict) and isinstance(paused.get("call_id"), str):
            waits[paused["call_id"]] = TraceSpan(kind="approval", name=str(paused.get("name", "")), depth=0,
                                                 seq=event.seq or 0, started_at=when(event), call_id=paused["call_id"])
        elif isinstance(decided, dict) and (wait := waits.get(str(decided.get("call_id")))) is not None:
            wait.end_seq, wait.ended_at = event.seq, when(event)
            wait.duration_ms = _ms_between(wait.started_at, wait.ended_at)
            wait.outcome = f"{decided.get('user', 'someone')} {decided.get('decision', 'decided')}"
            wait.is_error = decided.get("decision") != "approved"
    return list(waits.values())


# -- the list's facts -----------------------------------------------------------------------------


def status_of(tail: Sequence[Event]) -> tuple[int, str | None]:
    """(calls waiting for approval, how the last run ended) from the last events of a log (the `all` view)."""
    last_run: str | None = None
    paused: set[str] = set()
    for event in tail:
        if event.partial:
            continue
        ended = run_end(event)
        if ended is not None:
            last_run = ended
            continue
        item, decided = event.metadata.get("interrupted"), event.metadata.get("approval")
        if isinstance(item, dict) and isinstance(item.get("call_id"), str):
            paused.add(item["call_id"])
        if isinstance(decided, dict):
            paused.discard(str(decided.get("call_id")))
        if event.kind == "message" and event.role == "user":
            paused.clear()
        paused -= {p.call_id for p in event.parts if isinstance(p, ToolResultPart)}
    return (len(paused) if last_run == "interrupted" else 0), last_run


# -- one model call ----------------------------------------------------------------------------


def rebuild_call(agent: Agent, session_id: str, events: Sequence[Event], call: CallEvents, *,
                 from_start: bool = True) -> ModelCall:
    """Model call `call` of a session's log (the `all` view): what it was sent (recorded, else rebuilt), answered.

    `from_start`: `events` begin with the log's first; else the messages before them are left out, and a note says so.
    """
    model = agent.model
    record = call.record
    if record is not None:
        request, notes = _recorded(model.name, model.provider, record), [_NOTE_RECORDED]
    else:
        request, notes = _rebuilt(agent, events, call)
        if not from_start:
            notes.insert(1, _NOTE_WINDOW.format(first=events[0].seq if events else 0, window=f"{WINDOW:,}"))
    reported, facts = call.reported, call.facts
    start = call.start or call.answer or call.message
    return ModelCall(
        session_id=session_id, turn=call.turn, seqs=call.seqs, started_at=when(start) if start else None,
        duration_ms=float(reported[2]) if reported else None, tokens=reported[1] if reported else None,
        input_tokens=facts.get("input_tokens"), output_tokens=facts.get("output_tokens"), ttft_ms=facts.get("ttft_ms"),
        **_cost(facts), exact=record is not None, request=request,
        response=call.message.to_message() if call.message else None,
        error=_failure_after(events, call) if call.message is None else None, notes=notes,
    )


def _recorded(model: str, provider: str, record: dict[str, Any]) -> ModelCallRequest:
    settings = {**record.get("settings", {}), **record.get("model_settings", {})}
    return ModelCallRequest(model=model, provider=provider, messages=record.get("messages", []),
                            tools=record.get("tools", []), settings=settings, output_schema=record.get("output_schema"))


def _rebuilt(agent: Agent, events: Sequence[Event], call: CallEvents) -> tuple[ModelCallRequest, list[str]]:
    first = min(call.seqs)
    before = [e for e in events if e.seq is not None and e.seq < first]
    messages = [user_actions_as_text(e.to_message()) for e in compacted_log(before)]
    notes = [_NOTE_MESSAGES]
    system = _instructions(agent, notes)
    tools = _tools(agent, notes)
    notes.append(_NOTE_SETTINGS)
    model = agent.model
    settings = getattr(model, "settings", None)
    request = ModelCallRequest(
        model=model.name, provider=model.provider, messages=[*system, *messages], tools=tools,
        settings=dict(settings) if isinstance(settings, dict) else {},
        output_schema=agent.output_adapter.json_schema() if agent.output_adapter is not None else None,
    )
    return request, notes


def _instructions(agent: Agent, notes: list[str]) -> list[Message]:
    instructions = agent.instructions
    if isinstance(instructions, str):
        return [Message.system(instructions)]
    if instructions is not None:
        notes.append("instructions: made by a function of the state before each call, which the log does not "
                     "record; left out above")
    return []


def _tools(agent: Agent, notes: list[str]) -> list[ToolSpec]:
    catalog = agent.tool_catalog()
    if catalog.chosen_per_turn:
        notes.append("tools: chosen for each call by a function of the state, which the log does not record; "
                     "left out above")
    elif catalog.toolsets_offline:
        notes.append("tools: the toolsets (e.g. MCP servers) are not connected now; only the plain tools "
                     "are listed")
    return list(catalog.specs)


def _failure_after(events: Sequence[Event], call: CallEvents) -> str | None:
    last = max(call.seqs)
    for event in events:
        if (event.seq or 0) > last and event.kind == "status" and (why := _failure(event)) is not None:
            return why
        if (event.seq or 0) > last and event.kind == "message":
            return None
    return None
