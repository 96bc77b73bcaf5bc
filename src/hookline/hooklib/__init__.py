"""Ready hooks for common needs: budgets, required tools, large results, windows, approvals, guardrails.

Each is an object with `run(state)` (and `run_async` where it awaits), registered at the
hook point its docstring names:

```python
from hookline.hooklib import Budget, RequireApproval

agent = Agent(
    model=...,
    hooks={"before_llm": [Budget(max_turns=5)], "before_tool": [RequireApproval(["delete_file"])]},
)
```
"""

from hookline.hooklib.approval import RequireApproval
from hookline.hooklib.budget import Budget
from hookline.hooklib.guardrails import InputGuardrail, OutputGuardrail, ToolGuardrail
from hookline.hooklib.offload import OffloadLargeResults
from hookline.hooklib.require_tool import RequireTool
from hookline.hooklib.window import Compaction, SlidingWindow

__all__ = [
    "Budget", "Compaction", "InputGuardrail", "OffloadLargeResults", "OutputGuardrail", "RequireApproval",
    "RequireTool", "SlidingWindow", "ToolGuardrail",
]
