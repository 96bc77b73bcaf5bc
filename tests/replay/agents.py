"""Agents for the replay and eval tests, scripted by their conversation, loadable by `--agent FILE:NAME`.

`agent` adds and (with approval) does something dangerous; `off_by_one` adds wrong; `guarded`
refuses the dangerous tool with a guardrail, `stopping` stops the run at it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hookline import Agent, ToolCallPart, tool
from hookline.hooklib import RequireApproval, ToolGuardrail
from hookline.models import FunctionModel, ModelRequest, ModelResponse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(name="add")
def add_wrong(a: int, b: int) -> int:
    """Add two integers (badly)."""
    return a + b + 1


@tool
def danger(target: str) -> str:
    """Do something dangerous (needs approval)."""
    return f"did {target}"


def script(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    if last.role == "user" and "add" in last.text:
        return ModelResponse(tool_calls=[ToolCallPart(id=f"c{len(request.messages)}", name="add",
                                                      arguments={"a": 2, "b": 3})])
    if last.role == "user" and "danger" in last.text:
        return ModelResponse(tool_calls=[ToolCallPart(id=f"d{len(request.messages)}", name="danger",
                                                      arguments={"target": "prod"})])
    if last.role == "tool":
        return ModelResponse(text=f"done: {last.tool_results[0].content}")
    return ModelResponse(text=f"you said {last.text}")


def _agent(*tools: object, hooks: dict[str, list[object]] | None = None) -> Agent:
    approval = RequireApproval(["danger"])
    return Agent("calc", model=FunctionModel(script), tools=list(tools),  # type: ignore[arg-type]
                 hooks={"before_tool": [approval], **(hooks or {})})


def no_danger(call: ToolCallPart) -> str | None:
    return "not in production" if call.name == "danger" else None


agent = _agent(add, danger)
off_by_one = _agent(add_wrong, danger)
guarded = Agent("calc", model=FunctionModel(script), tools=[add, danger],
                hooks={"before_tool": [RequireApproval(["danger"]), ToolGuardrail(no_danger)]})
stopping = Agent("calc", model=FunctionModel(script), tools=[add, danger],
                 hooks={"before_tool": [ToolGuardrail(no_danger, on_trip="stop")]})
