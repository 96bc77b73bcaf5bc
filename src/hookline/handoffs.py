"""Handoffs: an agent hands the conversation to another, which answers it from then on.

```python
team = Team([triage, billing], handoffs={"triage": ["billing"], "billing": ["triage"]})
result = await team.run("my invoice is wrong", session_id="s-1")
```

A `Team` gives each agent that may hand over a tool per target, `transfer_to_<name>` (one
optional argument, `reason`), which ends its run (an exit condition): the call's result,
`{"to": "billing", "reason": "..."}`, is the log's record of the handoff, and the session's
state records who holds the conversation now (`state.data["hookline.holder"]`). The team then
lets the target go on with the same conversation in the same session: it answers the prompt
that was handed over. The next prompt goes to whoever holds the conversation, in any process
sharing the store.

What the target is shown of the conversation before the handoff can be filtered: a
`Handoff(to, history=...)` names a function from those messages to the ones to hand over.
It is applied before each of the target's model calls (the log keeps every message), on the
messages before the last handoff into that agent; the handoff's own call and result are left
out of what it is shown, what came after is kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from hookline.agent import Agent
from hookline.context import RunContext
from hookline.errors import ConfigError, SessionNotFound
from hookline.hook_points import HookPoint
from hookline.messages import Message
from hookline.result import RunResult
from hookline.sessions import SessionStore
from hookline.state import State
from hookline.tools import Tool

__all__ = ["HOLDER_KEY", "Handoff", "Handover", "HistoryFilter", "Team"]

HOLDER_KEY = "hookline.holder"
"""`state.data` key: the name of the agent that holds the conversation."""

HistoryFilter = Callable[[list[Message]], list[Message]]
"""What a handoff hands over: the messages before it, to those the target is shown."""


@dataclass(frozen=True)
class Handoff:
    """A way for an agent to hand the conversation to the agent named `to`."""

    to: str
    """The target's name."""
    description: str = ""
    """What the tool says to the model (default: "Hand the conversation to <to>.")."""
    history: HistoryFilter | None = None
    """Filters what the target is shown of the conversation before the handoff (None: all of it)."""


class Handover(BaseModel):
    """What a handoff tool returns: the run's output, and the result the log records."""

    to: str
    """The agent the conversation goes to."""
    reason: str = ""
    """Why, as the model said."""


def _tool_name(target: str) -> str:
    return f"transfer_to_{target}"


def _handoff_tool(handoff: Handoff) -> Tool:
    target = handoff.to

    async def transfer(ctx: RunContext[Any], reason: str = "") -> Handover:
        ctx.state.data[HOLDER_KEY] = target
        return Handover(to=target, reason=reason)

    return Tool(transfer, name=_tool_name(target),
                description=handoff.description or f"Hand the conversation to {target}.")


class _ShownHistory:
    """A `before_llm` hook of a target: what it is shown of the conversation before the last handoff into it."""

    def __init__(self, filters: Mapping[str, HistoryFilter]) -> None:
        self.filters = dict(filters)  # handoff tool name -> filter
        self.name = "handoff history"

    def run(self, state: State) -> None:
        messages = state.messages
        for index in range(len(messages) - 1, -1, -1):
            names = [c.name for c in messages[index].tool_calls if c.name in self.filters]
            if names:
                after = index + 1
                while after < len(messages) and messages[after].role == "tool":
                    after += 1
                state.messages = [*self.filters[names[-1]](list(messages[:index])), *messages[after:]]
                return


class Team:
    """Agents that hand a conversation to each other; each prompt goes to whoever holds it.

    Args:
        agents: The agents, by their names (unique); the first holds a new conversation. Each
            one's tools must be a list (not a function of the state), to add the handoff tools to.
        handoffs: For each agent that may hand over, its targets: names, or `Handoff`s.
        session_store: Where the sessions live (default: the first agent's store).
        max_handoffs: Handoffs allowed within one prompt; past it, the last run's result is
            answered as it is (its output the `Handover`).

    Raises:
        ConfigError: Two agents share a name, a handoff names no agent of the team (or the
            agent itself), or an agent's tools are a function.
    """

    def __init__(self, agents: Sequence[Agent], handoffs: Mapping[str, Sequence[str | Handoff]], *,
                 session_store: SessionStore | None = None, max_handoffs: int = 5) -> None:
        names = [a.name for a in agents]
        if not agents or len(set(names)) != len(names):
            raise ConfigError(f"a Team needs agents of distinct names, not {names!r}")
        routes = {source: [t if isinstance(t, Handoff) else Handoff(t) for t in targets]
                  for source, targets in handoffs.items()}
        for source, targets in routes.items():
            for handoff in targets:
                if source not in names or handoff.to not in names or handoff.to == source:
                    raise ConfigError(f"the handoff {source!r} -> {handoff.to!r} names no other agent of the team; "
                                      f"its agents: {', '.join(names)}")
        self.members = {agent.name: _member(agent, routes) for agent in agents}
        """The team's agents, each with its handoff tools (and its history filters), by name."""
        self.first = names[0]
        self.store = session_store or agents[0].session_store
        self.max_handoffs = max_handoffs

    async def holder(self, session_id: str, *, user: str | None = "default") -> str:
        """The name of the agent holding the conversation of `session_id` (the first for a new one)."""
        try:
            session = await self.store.get(session_id, user=user, with_events=False)
        except SessionNotFound:
            return self.first
        held = session.state.get(HOLDER_KEY)
        return held if isinstance(held, str) and held in self.members else self.first

    async def run(self, prompt: str | Message, *, session_id: str, user: str = "default") -> RunResult:
        """Send `prompt` to whoever holds the conversation; follow its handoffs; answer the last run's result."""
        holder = await self.holder(session_id, user=user)
        result = await self.members[holder].prompt(prompt).session(session_id, user=user, store=self.store)
        for _ in range(self.max_handoffs):
            if not isinstance(result.output, Handover):
                break
            target = self.members[result.output.to]
            result = await target.resume(session_id, {}, user=user, store=self.store)
        return result

    def run_sync(self, prompt: str | Message, *, session_id: str, user: str = "default") -> RunResult:
        """`run`, blocking (not from inside a running event loop)."""
        return asyncio.run(self.run(prompt, session_id=session_id, user=user))


def _member(agent: Agent, routes: Mapping[str, Sequence[Handoff]]) -> Agent:
    """`agent` with a tool per handoff it may make, and a hook for the history of handoffs into it."""
    out = routes.get(agent.name, [])
    into = {_tool_name(h.to): h.history for targets in routes.values() for h in targets
            if h.to == agent.name and h.history is not None}
    if not out and not into:
        return agent
    if agent.tools is not None and not isinstance(agent.tools, Sequence):
        raise ConfigError(f"agent {agent.name!r} picks its tools with a function: a Team adds handoff tools to a "
                          "list of tools only")
    tools = [*(agent.tools or []), *(_handoff_tool(h) for h in out)]
    hooks: dict[Any, Any] = {point: list(bound) for point, bound in agent.hooks.items()}
    if into:
        hooks[HookPoint.BEFORE_LLM] = [*hooks.get(HookPoint.BEFORE_LLM, []), _ShownHistory(into)]
    exits = [*agent.exit_conditions, *(_tool_name(h.to) for h in out)]
    return agent.clone(tools=tools, hooks=hooks, exit_conditions=exits)
