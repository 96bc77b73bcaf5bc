"""`RequireApproval`: pause the run for a human before chosen tools run.

How policy "once" learns what was approved: `agent.resume(...)` runs approved calls
without running `before_tool` again, so the hook cannot see the approval where it asked
for it. When it interrupts a call it notes the call in `state.data` (saved with the
session) under `PENDING_KEY`; an approved call then runs, and `after_tool` fires for it
(never for refused ones), which is where the hook records the tool's name under
`APPROVED_KEY`. Registered at `before_tool` only, it learns at the next `before_tool`
instead, from the conversation: a noted call whose result is not an error was approved.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args

from hookline.errors import ConfigError
from hookline.hooks import HookPoint
from hookline.messages import ToolCallPart

if TYPE_CHECKING:
    from hookline.state import State

__all__ = ["APPROVED_KEY", "PENDING_KEY", "Policy", "RequireApproval"]

Policy = Literal["always", "once", "never"]
"""When to ask: before every matching call, once per tool per session, or never."""

APPROVED_KEY = "hookline.approved_tools"
"""`state.data` key: the names of tools approved in this session (policy "once")."""
PENDING_KEY = "hookline.pending_approvals"
"""`state.data` key: `{call_id: tool name}` of calls paused and not yet decided (policy "once")."""


class RequireApproval:
    """A hook that interrupts tool calls for human approval.

    Register it at `before_tool`, and also at `after_tool` when the policy is "once" (see
    below). Matching calls are paused with `state.interrupt(...)`: the run stops with
    `stop_reason == "interrupted"` and lists them in `result.interruptions`, and
    `agent.resume(session_id, approvals={call_id: True})` runs them (a session is needed
    to resume).

    Policies:
        - "always": ask before every matching call.
        - "once": ask once per tool name per session; a tool approved once runs freely
          afterwards. Approvals are kept in `state.data[APPROVED_KEY]`, so they last as
          long as the session. Registered at `after_tool` too, the hook learns an approval
          as soon as the approved call runs; at `before_tool` alone, it learns it at the
          next tool turn from the call's result, and only if that result is not an error.
        - "never": never ask: a switch to turn approvals off from configuration.

    Example:
        ```python
        approval = RequireApproval(tools=["delete_file"], policy="once")
        agent = Agent(
            model=..., tools=[read_file, delete_file],
            hooks={"before_tool": [approval], "after_tool": [approval]},
        )
        result = await agent.prompt("clean up").session("s-1")
        if result.stop_reason == "interrupted":
            result = await agent.resume("s-1", approvals={i.call_id: True for i in result.interruptions})
        ```

    Args:
        tools: The names of the tools that need approval (None: every tool).
        policy: "always", "once" or "never".
        reason: The reason shown with each interruption (default: one naming the tool).

    """

    def __init__(
        self, tools: Sequence[str] | None = None, policy: Policy = "always", reason: str | None = None
    ) -> None:
        if policy not in get_args(Policy):
            raise ConfigError(f"RequireApproval(policy=...) must be 'always', 'once' or 'never', not {policy!r}")
        if tools is not None and (isinstance(tools, str) or not all(isinstance(t, str) for t in tools)):
            raise ConfigError(f"RequireApproval(tools=...) takes a list of tool names or None, not {tools!r}")
        self.tools = frozenset(tools) if tools is not None else None
        self.policy = policy
        self.reason = reason

    def __repr__(self) -> str:
        tools = sorted(self.tools) if self.tools is not None else None
        return f"RequireApproval(tools={tools!r}, policy={self.policy!r})"

    def run(self, state: State) -> None:
        """At `before_tool`, pause the matching calls; at `after_tool`, learn approvals."""
        if state.point is HookPoint.BEFORE_TOOL:
            self._before_tool(state)
        elif state.point is HookPoint.AFTER_TOOL:
            self._after_tool(state)
        else:
            raise ConfigError(f"RequireApproval runs at before_tool (and after_tool), not at {state.point}")

    def matches(self, name: str) -> bool:
        """Whether calls to the tool `name` need approval under `tools` (ignoring the policy)."""
        return self.tools is None or name in self.tools

    def needs_approval(self, state: State, call: ToolCallPart) -> bool:
        """Whether `call` must be paused now."""
        if self.policy == "never" or not self.matches(call.name):
            return False
        return self.policy == "always" or call.name not in approved_tools(state)

    def _before_tool(self, state: State) -> None:
        if self.policy == "once":
            _learn_from_results(state)
        for call in state.tool_calls:
            if self.needs_approval(state, call):
                state.interrupt(call.id, self.reason or f"{call.name} needs approval")
                if self.policy == "once":
                    _pending(state)[call.id] = call.name

    def _after_tool(self, state: State) -> None:
        call = state.tool_call
        if self.policy != "once" or call is None:
            return
        pending = _pending(state)
        if call.id in pending:
            _approve(state, pending.pop(call.id))


def approved_tools(state: State) -> list[str]:
    """Return the tools approved in this session (policy "once")."""
    value: Any = state.data.get(APPROVED_KEY, [])
    return [name for name in value if isinstance(name, str)] if isinstance(value, list) else []


def _approve(state: State, name: str) -> None:
    names = approved_tools(state)
    if name not in names:
        state.data[APPROVED_KEY] = sorted([*names, name])


def _pending(state: State) -> dict[str, str]:
    value = state.data.get(PENDING_KEY)
    if not isinstance(value, dict):
        value = state.data[PENDING_KEY] = {}
    return value


def _learn_from_results(state: State) -> None:
    pending = _pending(state)
    if not pending:
        return
    results = {r.call_id: r for m in state.messages if m.role == "tool" for r in m.tool_results}
    for call_id in [c for c in pending if c in results]:
        name = pending.pop(call_id)
        if not results[call_id].is_error:
            _approve(state, name)
