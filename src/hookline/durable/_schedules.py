"""Schedules: a prompt run on a session on a cron schedule, by DBOS's scheduler (not one of hookline's own).

`DurableAgent.schedule(name, cron, prompt, session_id=...)` creates a DBOS schedule whose
workflow (`hookline.scheduled`) runs the agent's prompt on the session at each tick, a
durable run like `start()`'s: its steps checkpointed, its events in the session's log
(tagged with the workflow's id), so the runs show wherever the session does. DBOS keeps the
schedule in its database: every worker sharing it fires it, once a tick; it survives
restarts, and `unschedule(name)` ends it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol, TypedDict

from dbos import DBOS

from hookline.errors import ConfigError
from hookline.result import RunResult

__all__ = ["ScheduledPrompt", "scheduled_workflow"]


class ScheduledPrompt(TypedDict):
    """What a schedule runs at each tick (DBOS keeps it with the schedule)."""

    agent: str
    """The name of the `DurableAgent` that runs it."""
    session_id: str
    """The session it runs on."""
    prompt: str
    """The prompt."""
    user: str | None
    """The session's owner."""


class _Runner(Protocol):
    async def _execute(self, session_id: str, prompt: str, user: str | None, approvals: None) -> RunResult: ...


_runners: dict[str, _Runner] = {}


def register_runner(name: str, agent: _Runner) -> None:
    """The agent the schedules naming `name` run (the latest `DurableAgent` of that name)."""
    _runners[name] = agent


async def _run_scheduled(at: datetime, context: Any) -> None:
    prompt: ScheduledPrompt = context
    agent = _runners.get(prompt["agent"])
    if agent is None:
        raise ConfigError(f"no DurableAgent named {prompt['agent']!r} in this process: create it before DBOS.launch()")
    await agent._execute(prompt["session_id"], prompt["prompt"], prompt["user"], None)


scheduled_workflow = DBOS.workflow(name="hookline.scheduled")(_run_scheduled)
"""The workflow every schedule of a prompt fires: `(tick time, ScheduledPrompt)`."""
