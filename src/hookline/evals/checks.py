"""Checks of a case's run: its tool trajectory, and its answer (a function's verdict, or a judge agent's).

A check is called with the case and what its run did (`CaseRun`) and returns a `CheckResult`;
any plain or async function of that shape is one. `checks_of(case)` gives the ones the case
asks for itself (`Trajectory` from `calls`, `Answer` from `answer`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from hookline.evals.case import Case, ExpectedCall
from hookline.messages import ToolCallPart

__all__ = ["Answer", "AnswerCheck", "Check", "CheckResult", "CaseRun", "Judge", "Trajectory", "checks_of"]


@dataclass(frozen=True)
class CaseRun:
    """What a case's run did."""

    output: Any
    """The last run's output."""
    calls: list[ToolCallPart]
    """Every tool call made, in order."""
    stop_reason: str
    """How the last run ended."""


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict."""

    name: str
    passed: bool
    detail: str = ""
    """Why it failed (or what it saw)."""


class Check(Protocol):
    """A check: the case and its run to a verdict (or an awaitable of one)."""

    def __call__(self, case: Case, run: CaseRun) -> CheckResult | Awaitable[CheckResult]:
        """The verdict on `run` of `case`."""


@dataclass(frozen=True)
class Trajectory:
    """The tool calls made: exactly `calls`, or `calls` in that order among others, or in any order among others."""

    calls: Sequence[ExpectedCall]
    match: Literal["exact", "in_order", "any_order"] = "in_order"

    def __call__(self, case: Case, run: CaseRun) -> CheckResult:
        """The verdict on `run`'s calls."""
        made = list(run.calls)
        missing = _missing(list(self.calls), made, self.match)
        name = f"trajectory ({self.match})"
        if missing is None:
            return CheckResult(name, True)
        return CheckResult(name, False, f"expected {_shown(self.calls)}; made {_shown(made)}{missing}")


def _missing(expected: list[ExpectedCall], made: list[ToolCallPart], match: str) -> str | None:
    if match == "exact":
        if len(expected) == len(made) and all(_fits(e, m) for e, m in zip(expected, made, strict=True)):
            return None
        return ""
    if match == "in_order":
        position = 0
        for want in expected:
            position = next((i + 1 for i in range(position, len(made)) if _fits(want, made[i])), -1)
            if position < 0:
                return f" (no {want.name} where expected)"
        return None
    left = list(made)
    for want in expected:
        found = next((m for m in left if _fits(want, m)), None)
        if found is None:
            return f" (no {want.name})"
        left.remove(found)
    return None


def _fits(want: ExpectedCall, made: ToolCallPart) -> bool:
    return want.name == made.name and (want.arguments is None or want.arguments == made.arguments)


def _shown(calls: Sequence[ExpectedCall | ToolCallPart]) -> str:
    return "[" + ", ".join(f"{c.name}({c.arguments if c.arguments is not None else '...'})" for c in calls) + "]"


@dataclass(frozen=True)
class Answer:
    """The last answer equals `expected`, or contains it (after trimming spaces)."""

    expected: str
    match: Literal["equals", "contains"] = "contains"

    def __call__(self, case: Case, run: CaseRun) -> CheckResult:
        """The verdict on `run`'s output."""
        got = str(run.output).strip()
        want = self.expected.strip()
        passed = got == want if self.match == "equals" else want in got
        return CheckResult(f"answer ({self.match})", passed, "" if passed else f"expected {want!r}; got {got!r}")


@dataclass(frozen=True)
class AnswerCheck:
    """Your function of the answer: True (or None) passes; False fails; a string fails, saying why."""

    function: Callable[[Any], bool | str | Awaitable[bool | str | None] | None]
    name: str = ""

    async def __call__(self, case: Case, run: CaseRun) -> CheckResult:
        """The function's verdict on `run`'s output."""
        said = self.function(run.output)
        if inspect.isawaitable(said):
            said = await said
        name = self.name or str(getattr(self.function, "__name__", "answer check"))
        if said is None or said is True:
            return CheckResult(name, True)
        return CheckResult(name, False, said if isinstance(said, str) else f"{name} said no to {run.output!r}")


class Verdict(BaseModel):
    """A judge agent's verdict (its `output_type`)."""

    passed: bool
    """Whether the answer meets the criteria."""
    reason: str = ""
    """Why."""


_JUDGING = """You judge an AI assistant's answer. Say whether it meets the criteria.

The user asked: {prompt}
{expected}The assistant answered: {answer}
Criteria: {criteria}

Answer with JSON: {{"passed": true or false, "reason": "..."}}."""


@dataclass(frozen=True)
class Judge:
    """Another agent judges the answer against `criteria` (and the case's expected answer, if any).

    The judge is run with `output_type=Verdict` semantics: its answer must be JSON
    `{"passed": bool, "reason": str}`; an answer that is not fails the check, saying so.
    """

    agent: Any
    """The judge: an `Agent` (its answer is read as a `Verdict`)."""
    criteria: str = "The answer is correct and answers the question."

    async def __call__(self, case: Case, run: CaseRun) -> CheckResult:
        """The judge's verdict on `run`'s output."""
        expected = f"The expected answer: {case.answer}\n" if case.answer else ""
        prompt = _JUDGING.format(prompt=case.prompts[-1], expected=expected, answer=run.output,
                                 criteria=self.criteria)
        result = await self.agent.prompt(prompt)
        try:
            if isinstance(result.output, str):
                verdict = Verdict.model_validate_json(result.output)
            else:  # a judge with an output type of its own
                verdict = Verdict.model_validate(result.output, from_attributes=True)
        except ValueError as exc:
            return CheckResult("judge", False, f"the judge's answer is no verdict: {exc}")
        return CheckResult("judge", verdict.passed, verdict.reason)


def checks_of(case: Case) -> list[Check]:
    """The checks `case` asks for: its trajectory (if it gives `calls`) and its answer (if it gives one)."""
    found: list[Check] = []
    if case.calls is not None:
        found.append(Trajectory(case.calls, case.match))
    if case.answer is not None:
        found.append(Answer(case.answer, case.answer_match))
    return found
