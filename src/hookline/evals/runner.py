"""Running cases: each in a session of its own, checked, its verdict recorded in that session's log.

`run_case(agent, case)` sends the case's prompts to the agent in a fresh session (of `store`,
or of a store in memory), resuming each run that pauses with every paused call approved, then
applies the checks. With `replay=True`, the agent's model is replaced by the case's recorded
answers (`hookline.replay`): no model is called, which makes a suite fast and deterministic;
its tools run for real unless `tools="replay"`. The verdict is recorded in the case's session
as a status line whose `metadata["eval"]` holds the case's name, whether it passed, and each
check's `name`, `passed` and `detail`, so a page can show it on the session.
"""

from __future__ import annotations

import inspect
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hookline._redact import redact
from hookline.agent import Agent
from hookline.errors import HooklineError
from hookline.evals.case import Case
from hookline.evals.checks import CaseRun, Check, CheckResult, checks_of
from hookline.events import Event
from hookline.messages import Message, ToolCallPart
from hookline.replay import Recording, ToolMode, replay_agent
from hookline.result import RunResult
from hookline.sessions import InMemorySessionStore, SessionStore

__all__ = ["EVAL_KEY", "CaseResult", "SuiteResult", "run_case", "run_cases"]

EVAL_KEY = "eval"
"""The metadata key of the line that records a case's verdict in its session."""

_MAX_RESUMES = 20
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:-]+")


@dataclass
class CaseResult:
    """What a case's run did, and each check's verdict."""

    case: Case
    checks: list[CheckResult]
    run: CaseRun | None
    """None when the run failed (`error`)."""
    session_id: str
    seconds: float
    error: str = ""
    """Why the run failed, if it did."""

    @property
    def passed(self) -> bool:
        """Whether the run ended and every check passed."""
        return not self.error and all(check.passed for check in self.checks)

    def report(self) -> str:
        """What failed, one line each (for an assertion's message)."""
        lines = [f"case {self.case.name!r}: {'passed' if self.passed else 'FAILED'} (session {self.session_id})"]
        if self.error:
            lines.append(f"  the run failed: {self.error}")
        lines.extend(f"  {'ok  ' if c.passed else 'FAIL'} {c.name}" + (f": {c.detail}" if c.detail else "")
                     for c in self.checks)
        return "\n".join(lines)


@dataclass
class SuiteResult:
    """The results of several cases."""

    results: list[CaseResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether every case passed."""
        return all(result.passed for result in self.results)

    def table(self) -> str:
        """A summary table: each case, its verdict, its checks, its time; then the totals."""
        rows = [("case", "result", "checks", "seconds")]
        for result in self.results:
            failed = [c for c in result.checks if not c.passed]
            what = (result.error or "; ".join(f"{c.name}: {c.detail}" for c in failed)
                    or ", ".join(c.name for c in result.checks) or "no checks")
            rows.append((result.case.name, "pass" if result.passed else "FAIL", _cut(what, 100),
                         f"{result.seconds:.2f}"))
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
                 for row in rows]
        lines.insert(1, "  ".join("-" * width for width in widths))
        failures = sum(1 for r in self.results if not r.passed)
        lines.append(f"{len(self.results)} cases: {len(self.results) - failures} passed, {failures} failed")
        return "\n".join(lines)


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def run_case(
    agent: Agent, case: Case, checks: Sequence[Check] = (), *, replay: bool = False, tools: ToolMode = "real",
    store: SessionStore | None = None, deps: Any = None,
) -> CaseResult:
    """Run `case` on `agent` and check it (its own checks, then `checks`); never raises for a failed run.

    Args:
        agent: The agent under test.
        case: The case.
        checks: More checks (e.g. `Judge`, `AnswerCheck`).
        replay: Answer with the case's recorded model answers instead of calling the model.
        tools: With `replay`: "real" runs the tools, "replay" answers them from the recording.
        store: Where the case's session goes (default: a store in memory).
        deps: The deps of the agent's runs, if it takes any.
    """
    runner = agent
    if replay:
        recording = Recording.of_conversation(case.recorded, [Message.user(p) for p in case.prompts], frozenset())
        runner, _ = await replay_agent(agent, recording, tools)
    store = store or InMemorySessionStore()
    session_id = f"eval-{_UNSAFE.sub('-', case.name)[:60]}-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    run, error = None, ""
    try:
        run = await _play(runner, case, store, session_id, deps)
    except HooklineError as exc:
        error = redact(f"{type(exc).__name__}: {exc}")
    verdicts = [await _verdict(check, case, run) for check in (*checks_of(case), *checks)] if run else []
    result = CaseResult(case, verdicts, run, session_id, time.perf_counter() - started, error)
    await _record(store, session_id, result)
    return result


async def run_cases(agent: Agent, cases: Sequence[Case], checks: Sequence[Check] = (), **options: Any) -> SuiteResult:
    """`run_case` for each case, one after another (options as `run_case` takes them)."""
    return SuiteResult([await run_case(agent, case, checks, **options) for case in cases])


async def _play(agent: Agent, case: Case, store: SessionStore, session_id: str, deps: Any) -> CaseRun:
    calls: list[ToolCallPart] = []
    result: RunResult | None = None
    for prompt in case.prompts:
        result = await _with(agent.prompt(prompt).session(session_id, store=store), deps)
        calls += _calls(result)
        for _ in range(_MAX_RESUMES):
            if result.stop_reason != "interrupted":
                break
            approvals = {item.call_id: True for item in result.interruptions}
            result = await _with(agent.resume(session_id, approvals, store=store), deps)
            calls += _calls(result)
    assert result is not None  # a case has a prompt
    return CaseRun(result.output, calls, result.stop_reason)


async def _with(request: Any, deps: Any) -> RunResult:
    outcome: RunResult = await (request.deps(deps) if deps is not None else request)
    return outcome


def _calls(result: RunResult) -> list[ToolCallPart]:
    return [call for message in result.messages for call in message.tool_calls]


async def _verdict(check: Check, case: Case, run: CaseRun) -> CheckResult:
    said = check(case, run)
    if inspect.isawaitable(said):
        said = await said
    return said


async def _record(store: SessionStore, session_id: str, result: CaseResult) -> None:
    """The verdict, as a status line of the case's session (made here if the run never made it)."""
    verdict = {"case": result.case.name, "passed": result.passed, "error": result.error,
               "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail} for c in result.checks]}
    text = f"eval {result.case.name}: {'passed' if result.passed else 'failed'}"
    await store.open_for_run(session_id, user=None)
    async with store.run_lock(session_id, timeout=5.0):
        await store.append_event(session_id, Event.status("hookline", "agent", text, **{EVAL_KEY: verdict}))
