"""Evals (issue 27, part 4): cases, their checks (trajectory exact / in order / any order, the answer by
equality, a part, a function or a judge agent), the runner, the summary table, and the verdict stored
as an event of the case's session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookline import Agent, ConfigError, ToolCallPart, tool
from hookline.evals import (
    EVAL_KEY,
    Answer,
    AnswerCheck,
    Case,
    CaseRun,
    ExpectedCall,
    Judge,
    Trajectory,
    load_cases,
    run_case,
    run_cases,
)
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SQLiteSessionStore

pytestmark = pytest.mark.anyio

CASE = Case(name="c", prompts=["go"])


def _run(*names: str, output: Any = "") -> CaseRun:
    calls = [ToolCallPart(id=f"c{i}", name=name, arguments={"n": i}) for i, name in enumerate(names)]
    return CaseRun(output, calls, "completed")


@pytest.mark.parametrize(("match", "expected", "made", "passed"), [
    ("exact", ["a", "b"], ["a", "b"], True),
    ("exact", ["a", "b"], ["a", "b", "c"], False),
    ("exact", ["a", "b"], ["b", "a"], False),
    ("in_order", ["a", "c"], ["a", "b", "c"], True),
    ("in_order", ["c", "a"], ["a", "b", "c"], False),
    ("in_order", ["a", "a"], ["a", "b"], False),
    ("any_order", ["c", "a"], ["a", "b", "c"], True),
    ("any_order", ["a", "a"], ["a", "b"], False),
])
def test_trajectories(match: Any, expected: list[str], made: list[str], passed: bool) -> None:
    verdict = Trajectory([ExpectedCall(name=n) for n in expected], match)(CASE, _run(*made))
    assert verdict.passed is passed
    assert verdict.name == f"trajectory ({match})"
    if not passed:
        assert verdict.detail.startswith("expected [")


def test_a_trajectory_with_arguments_checks_them() -> None:
    run = _run("a", "b")
    assert Trajectory([ExpectedCall(name="b", arguments={"n": 1})])(CASE, run).passed
    assert not Trajectory([ExpectedCall(name="b", arguments={"n": 2})])(CASE, run).passed


async def test_answer_checks() -> None:
    run = _run(output="  The sum is 5. ")
    assert Answer("5")(CASE, run).passed
    assert not Answer("5", "equals")(CASE, run).passed
    assert Answer("The sum is 5.", "equals")(CASE, run).passed
    assert (await AnswerCheck(lambda answer: "5" in answer)(CASE, run)).passed
    failed = await AnswerCheck(lambda answer: "too long", name="short")(CASE, run)
    assert (failed.name, failed.passed, failed.detail) == ("short", False, "too long")

    async def nope(answer: str) -> bool:
        return False

    assert not (await AnswerCheck(nope)(CASE, run)).passed


async def test_a_judge_agent_gives_the_verdict() -> None:
    asked: list[str] = []

    def judge_model(request: ModelRequest) -> ModelResponse:
        asked.append(request.messages[-1].text)
        passed = "42" in request.messages[-1].text.split("The assistant answered:")[1].splitlines()[0]
        return ModelResponse(text=f'{{"passed": {str(passed).lower()}, "reason": "checked the number"}}')

    judge = Judge(Agent("judge", model=FunctionModel(judge_model)), criteria="The answer is 42.")
    case = Case(name="q", prompts=["what is six times seven?"], answer="42")
    good = await judge(case, _run(output="It is 42."))
    assert (good.name, good.passed, good.detail) == ("judge", True, "checked the number")
    assert not (await judge(case, _run(output="It is 41."))).passed
    assert "The user asked: what is six times seven?" in asked[0]
    assert "The expected answer: 42" in asked[0]
    assert "Criteria: The answer is 42." in asked[0]

    babbler = Judge(Agent("judge", model=FunctionModel(lambda request: ModelResponse(text="looks fine"))))
    confused = await babbler(case, _run(output="42"))
    assert not confused.passed
    assert confused.detail.startswith("the judge's answer is no verdict")


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def _adder() -> Agent:
    def model(request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if last.role == "user":
            return ModelResponse(tool_calls=[ToolCallPart(id="c1", name="add", arguments={"a": 2, "b": 3})])
        return ModelResponse(text=f"it is {last.tool_results[0].content}")

    return Agent("adder", model=FunctionModel(model), tools=[add])


async def test_a_case_runs_is_checked_and_its_verdict_is_an_event_of_its_session(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db")
    case = Case(name="adds/two", prompts=["2+3?"], calls=[ExpectedCall(name="add")], answer="5")
    result = await run_case(_adder(), case, [AnswerCheck(lambda a: a.startswith("it"), name="polite")], store=store)

    assert result.passed, result.report()
    assert [c.name for c in result.checks] == ["trajectory (in_order)", "answer (contains)", "polite"]
    assert result.session_id.startswith("eval-adds-two-")
    (line,) = [e for e in await store.events(result.session_id, view="ui") if EVAL_KEY in e.metadata]
    assert line.text == "eval adds/two: passed"
    assert line.metadata[EVAL_KEY]["checks"][2] == {"name": "polite", "passed": True, "detail": ""}
    await store.aclose()


async def test_a_failing_suite_says_which_and_why() -> None:
    cases = [Case(name="right", prompts=["2+3?"], answer="5"),
             Case(name="wrong", prompts=["2+3?"], answer="6", answer_match="equals")]
    suite = await run_cases(_adder(), cases)
    assert not suite.passed
    lines = suite.table().splitlines()
    assert lines[0].split() == ["case", "result", "checks", "seconds"]
    assert lines[2].startswith("right  pass    answer (contains)")
    assert lines[3].startswith("wrong  FAIL    answer (equals): expected '6'; got 'it is 5'")
    assert lines[-1] == "2 cases: 1 passed, 1 failed"
    assert "FAIL answer (equals): expected '6'; got 'it is 5'" in suite.results[1].report()


async def test_a_run_that_fails_fails_its_case() -> None:
    def broken(request: ModelRequest) -> ModelResponse:
        from hookline import ModelError

        raise ModelError("the provider is down", provider="test")

    result = await run_case(Agent(model=FunctionModel(broken)), Case(name="x", prompts=["hi"], answer="hi"))
    assert not result.passed
    assert result.error == "ModelError: the provider is down"
    assert result.checks == []


def test_loading_cases(tmp_path: Path) -> None:
    (tmp_path / "one.json").write_text(Case(name="a", prompts=["x"]).model_dump_json())
    (tmp_path / "two.json").write_text("[" + Case(name="b", prompts=["y"]).model_dump_json() + "]")
    assert [c.name for c in load_cases(tmp_path)] == ["a", "b"]
    (tmp_path / "bad.json").write_text('{"name": "c"}')
    with pytest.raises(ConfigError, match=r"bad.json is not a case or a list of cases: .*prompts"):
        load_cases(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no cases in"):
        load_cases(tmp_path / "empty")
    with pytest.raises(ConfigError, match=r"cannot read cases from .*missing\.json: No such file"):
        load_cases(tmp_path / "missing.json")
