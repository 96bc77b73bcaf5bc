"""Ready hooks from `hookline.hooklib` in action: an approval that pauses a run, and a budget.

    .venv/bin/python examples/budget_and_approval.py
    HOOKLINE_MODEL=openai:gpt-4o-mini .venv/bin/python examples/budget_and_approval.py

1. `RequireApproval(["delete_file"], policy="once")` pauses the first `delete_file` call
   of the session. The run stops (`stop_reason == "interrupted"`); a human approves, and
   `agent.resume(...)` runs the call and carries on. Later deletions in the same session
   run without asking: the approval was saved with the session.
2. `Budget(max_turns=4)` ends a run that would otherwise go on polling, with
   `stop_reason == "hook_exit"` and the reason in `result.exit_reason`.
"""

from __future__ import annotations

import asyncio

from _model import pick_model

from hookline import Agent, RunResult, ToolCallPart, tool
from hookline.hooklib import Budget, RequireApproval
from hookline.hooklib.approval import APPROVED_KEY
from hookline.models import ModelRequest, ModelResponse
from hookline.sessions.memory import InMemorySessionStore

workspace = {"notes.txt": "keep me", "tmp1.log": "...", "tmp2.log": "..."}


@tool
def list_files() -> list[str]:
    """List the files in the workspace."""
    return sorted(workspace)


@tool
def delete_file(path: str) -> str:
    """Delete a file from the workspace.

    Args:
        path: The file's name.
    """
    workspace.pop(path)
    return f"deleted {path}"


CLEANUP = "Delete the temporary .log files in the workspace."
POLL = "Check the workspace every turn until a file named done.txt appears."


def script(request: ModelRequest) -> ModelResponse:
    start = max(i for i, m in enumerate(request.messages) if m.role == "user")
    step = sum(1 for m in request.messages[start:] if m.tool_calls)
    if request.messages[start].text == POLL:
        return ModelResponse(tool_calls=[ToolCallPart(id=f"poll-{step}", name="list_files")])
    plan = [("list_files", {}), ("delete_file", {"path": "tmp1.log"}), ("delete_file", {"path": "tmp2.log"})]
    if step < len(plan):
        name, arguments = plan[step]
        return ModelResponse(tool_calls=[ToolCallPart(id=f"step-{step}", name=name, arguments=arguments)])
    return ModelResponse(text="Deleted tmp1.log and tmp2.log; notes.txt is left.")


approval = RequireApproval(["delete_file"], policy="once")
agent = Agent(
    name="janitor",
    model=pick_model(script),
    instructions="You tidy a workspace with your tools. Never delete anything but .log files.",
    tools=[list_files, delete_file],
    hooks={"before_llm": [Budget(max_turns=4)], "before_tool": [approval], "after_tool": [approval]},
    max_turns=10,
    session_store=InMemorySessionStore(),
)


async def approve_all(result: RunResult, session_id: str) -> RunResult:
    """Stand in for a human: show each paused call and approve it, then resume."""
    while result.stop_reason == "interrupted":
        for item in result.interruptions:
            print(f"paused: {item.name}({item.arguments}) - {item.reason}; a human approves {item.call_id}")
        result = await agent.resume(session_id, approvals={i.call_id: True for i in result.interruptions})
    return result


async def main() -> None:
    result = await agent.prompt(CLEANUP).session("demo")
    result = await approve_all(result, "demo")
    session = await agent.session_store.get("demo")
    print(f"cleanup {result.stop_reason}: {result.output}")
    print(f"files left: {sorted(workspace)}")
    print(f"approved tools in this session: {session.state.get(APPROVED_KEY, [])}")

    result = await agent.prompt(POLL).session("demo")
    print(f"polling stopped ({result.stop_reason}) after {result.usage.model_calls} model calls: {result.exit_reason}")


if __name__ == "__main__":
    asyncio.run(main())
