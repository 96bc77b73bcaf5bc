"""The agent of the example eval suite: a calculator on the offline model (SmolLM2 under llama.cpp).

    .venv/bin/hookline eval examples/evals/cases --agent examples/evals/calculator.py:agent
    .venv/bin/hookline eval examples/evals/cases --agent examples/evals/calculator.py:agent --replay

The cases in `cases/` were made from sessions of this agent (`hookline sessions export ID
--as-case`), then loosened by hand: the calls matched in order, the answer by a part of it.
`--replay` answers with the recorded model answers: no model runs.
"""

from __future__ import annotations

from hookline import Agent, tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


agent = Agent("calculator", model="local:smollm2", instructions="You are a calculator. Use the add tool.",
              tools=[add], max_turns=3)
