"""The example eval suite (examples/evals) on the offline model (issue 27, part 4): live on SmolLM2
under llama.cpp (about a second a model call on one core), and replayed from its recorded answers
(the fast path: no model runs). Both through the library, and the replay through `hookline eval`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")

from hookline import Agent, State
from hookline.evals import load_cases, run_cases
from hookline.models import FunctionModel, ModelRequest, ModelResponse

pytestmark = pytest.mark.anyio

SUITE = Path(__file__).resolve().parents[2] / "examples" / "evals"
sys.path.insert(0, str(SUITE))

from calculator import agent  # noqa: E402


async def test_the_suite_passes_on_the_embedded_model() -> None:
    suite = await run_cases(agent, load_cases(SUITE / "cases"))
    assert suite.passed, suite.table()
    assert [r.case.name for r in suite.results] == ["adds forty and two", "adds two numbers"]
    assert all(r.run is not None and r.run.calls for r in suite.results)


async def test_the_suite_replays_without_a_model() -> None:
    def no_model(request: ModelRequest) -> ModelResponse:
        raise AssertionError("a replay calls no model")

    unplugged = Agent(agent.name, model=FunctionModel(no_model), instructions=agent.instructions,
                      tools=list(agent.tools_for(State(agent, [])).values()))
    suite = await run_cases(unplugged, load_cases(SUITE / "cases"), replay=True)
    assert suite.passed, suite.table()


def test_hookline_eval_replays_the_suite() -> None:
    done = subprocess.run([sys.executable, "-m", "hookline", "eval", str(SUITE / "cases"), "--agent",
                           f"{SUITE / 'calculator.py'}:agent", "--replay"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "2 cases: 2 passed, 0 failed"
