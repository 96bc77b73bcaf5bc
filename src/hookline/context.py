"""`RunContext`: what a tool or a hook knows of its run, and how it reports progress.

A tool asks for it by annotating a parameter, `ctx: RunContext[Db]` (any name, any
position); that parameter is left out of the tool's JSON schema and of the validation of
its arguments, and the loop passes the context of the call. A hook may take one instead
of the state or beside it: `def audit(ctx: RunContext)`, `def audit(state, ctx: RunContext)`.

```python
@tool
async def lookup(key: str, ctx: RunContext[Db]) -> str:
    ctx.status(f"looking up {key}")        # a status line of this call
    return await ctx.deps.get(key)         # the run's deps: agent.prompt(...).deps(db)
```

Status lines and partial results are status events of the run: they reach the session's
log and `.stream()`, never the model. Both are safe to call from a tool running in a
worker thread (`@tool(thread=True)`).

A tool can also ask the user a question: `ctx.ask(...)` pauses the run at its call, and the
user's answer comes back in `ctx.reply` when the run is resumed (an MCP server's
elicitation goes this way). A tool that runs a sub-agent (`Agent.as_tool`) reaches the
run's store through `child_runs(ctx)`, and pauses the run on the sub-agent's paused calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from hookline.events import Event
from hookline.tools import to_content

if TYPE_CHECKING:
    from hookline.result import Interruption, Reply
    from hookline.sessions.base import SessionStore
    from hookline.state import State

__all__ = ["Asker", "ChildRuns", "DepsT", "RunContext", "StatusEmitter", "child_runs", "status_forwarder"]

DepsT = TypeVar("DepsT")
"""The type of a run's deps (`Agent(deps_type=...)`)."""

StatusEmitter = Callable[[str, dict[str, Any]], None]
"""Adds one status line, with its metadata, to the run (from any thread)."""

Asker = Callable[[str, "dict[str, Any] | None"], None]
"""Pauses the run at a call to ask the user a question (with the JSON schema of the answer, or None)."""


@dataclass(frozen=True, slots=True)
class ChildRuns:
    """What a tool that runs a sub-agent needs of its call's run (see `hookline.subagents`)."""

    store: SessionStore | None
    """The run's session store (None for a run without a session): the sub-agent's session goes there."""
    user: str | None
    """The owner of the run's session, who owns the sub-agent's too."""
    answers: Mapping[str, Any]
    """On resume, the user's answers to the calls paused inside this call, by the sub-agent's own call ids."""
    pause: Callable[[str, Sequence[Interruption]], None]
    """Pauses the run at this call on the paused calls of the named sub-agent (its own `interruptions`)."""
    link: Callable[[str, str, bool], None]
    """Records in the run's log that the named sub-agent runs in the given session (goes on there: True)."""


class RunContext(Generic[DepsT]):
    """The run a tool call or a hook belongs to.

    The loop builds one per tool call (and per hook call). Build one yourself only to call
    a tool outside a run, e.g. in a unit test: `await my_tool.call({...}, RunContext(db))`;
    its `status` and `partial` then do nothing.

    Attributes:
        deps: The run's deps, as given to `agent.prompt(...).deps(value)` (None if none).
        session_id: The session's id, or None for a run without a session.
        user: The session's owner, or None for a run without a session.
        call_id: The id of the tool call (None in a hook).
        tool_name: The name of the tool called (None in a hook).
        reply: The user's reply to the question this call asked (`ask`) before the run was
            paused, now that the run is resumed with one; None otherwise.
    """

    _hookline_run_context: ClassVar[bool] = True  # what tools and hooks look for (`hookline._context_var`)

    __slots__ = (
        "_ask", "_child", "_emit", "_forward", "_state", "call_id", "deps", "reply", "session_id", "tool_name", "user",
    )

    def __init__(
        self,
        deps: DepsT,
        *,
        state: State | None = None,
        session_id: str | None = None,
        user: str | None = None,
        call_id: str | None = None,
        tool_name: str | None = None,
        emit: StatusEmitter | None = None,
        forward: Callable[[Event, str], None] | None = None,
        reply: Reply | None = None,
        ask: Asker | None = None,
        child: Callable[[], ChildRuns] | None = None,
    ) -> None:
        self.deps = deps
        self.session_id = session_id
        self.user = user
        self.call_id = call_id
        self.tool_name = tool_name
        self.reply = reply
        self._state = state
        self._emit = emit
        self._forward = forward
        self._ask = ask
        self._child = child

    @property
    def state(self) -> State:
        """The live `State` of the run (what hooks get).

        Raises:
            RuntimeError: This context was built outside a run.
        """
        if self._state is None:
            raise RuntimeError("this RunContext belongs to no run, so it has no state")
        return self._state

    def status(self, text: str, **metadata: Any) -> None:
        """Add a status line to the run: `ctx.status("fetched 3 pages", pages=3)`.

        From a tool it is a `tool` status event of the call (authored by the tool, with its
        `call_id`); from a hook an `agent` one (with the hook's name and point). It is written
        only when the run records status of that source (see `StatusOptions`); metadata
        values should be JSON values.
        """
        if self._emit is not None:
            self._emit(str(text), metadata)

    def partial(self, value: Any) -> None:
        """Report a partial result of the call: a status event marked `metadata["partial_result"]`.

        Its text is `value` as a tool result would hold it (strings as they are, anything
        else as JSON). A front end can show it as the call's progress; the model never sees
        it: the call's result is what the tool returns.
        """
        if self._emit is not None:
            self._emit(to_content(value), {"partial_result": True})

    def ask(self, question: str, response_schema: dict[str, Any] | None = None) -> None:
        """Pause the run at this call to ask the user `question`; the answer comes back as `reply` on resume.

        Once the tool returns, what it returned is dropped and its call stays unanswered: the
        run stops (`stop_reason="interrupted"`) with an `Interruption` of this call whose
        `reason` is `question` and whose `response_schema` is given (the JSON schema of the
        answer, for a form; without one, an empty form: the user accepts or declines).
        `agent.resume(session_id, {call_id: {"response": {...}}})` runs the call again with
        `reply` accepted with that answer; `False` or a reason declines, `{"cancel": True}`
        cancels. Only a run with a session can be resumed.

        Raises:
            RuntimeError: this context belongs to no tool call of a run.
        """
        if self._ask is None:
            raise RuntimeError("this RunContext belongs to no tool call of a run, so it cannot ask the user")
        self._ask(str(question), response_schema)

    def __repr__(self) -> str:
        where = f"call_id={self.call_id!r}, tool_name={self.tool_name!r}" if self.call_id else "hook"
        return f"RunContext({where}, session_id={self.session_id!r})"


def status_forwarder(context: RunContext[Any]) -> Callable[[Event, str], None] | None:
    """How a sub-agent's status events (and its name) reach the run of `context`; None when it records none."""
    return context._forward


def child_runs(context: RunContext[Any]) -> ChildRuns | None:
    """What a sub-agent run by the tool call of `context` needs of that call's run; None outside a run's tool call."""
    return context._child() if context._child is not None else None
