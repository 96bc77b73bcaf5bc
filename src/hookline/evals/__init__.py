"""Evals: cases made from sessions, run against an agent and checked, from pytest or the command line.

```python
from hookline.evals import load_cases, run_cases

suite = await run_cases(agent, load_cases("evals/"), replay=True)
print(suite.table())
```

A `Case` holds prompts, the tool calls expected (matched `exact`, `in_order` or `any_order`)
and the answer expected, and the conversation recorded when it was seen, which a replay
answers with instead of calling the model (`replay=True`: the fast path). Checks beyond the
case's own: `AnswerCheck` (your function of the answer) and `Judge` (another agent's verdict).
Each case runs in a session of its own; its verdict is recorded there (`metadata["eval"]`).
`hookline sessions export ID --as-case` makes a case of a session; `hookline eval PATH`
runs a folder of them and prints the table.
"""

from hookline.evals.case import Case, ExpectedCall, load_cases
from hookline.evals.checks import (
    Answer,
    AnswerCheck,
    CaseRun,
    Check,
    CheckResult,
    Judge,
    Trajectory,
    Verdict,
    checks_of,
)
from hookline.evals.runner import EVAL_KEY, CaseResult, SuiteResult, run_case, run_cases

__all__ = [
    "EVAL_KEY", "Answer", "AnswerCheck", "Case", "CaseResult", "CaseRun", "Check", "CheckResult", "ExpectedCall",
    "Judge", "SuiteResult", "Trajectory", "Verdict", "checks_of", "load_cases", "run_case", "run_cases",
]
