"""Durable runs on DBOS: an agent's run is a DBOS workflow, each model call and tool call a step.

```python
agent = DurableAgent("worker", model=..., tools=[...], session_store=PostgresSessionStore(dsn))
with launched(dbos_config(dsn, app="support", version="2024-06-01")):
    await register_queue(worker_concurrency=8)
    result = await agent.run("Refund order 42", session_id="order-42")
```

How a killed run goes on. DBOS recovers a workflow by running its function again, and
replays each step from its checkpoint by the step's position in the workflow. hookline's
session log already says how far a run got, so a recovered workflow does not replay the
run: it resumes it from the log (`Agent.resume`), which asks the model again after a death
mid-answer and runs the calls the user approved. Two things make that sound:

- Exactly one prompt. Every event the run writes carries the workflow's id (`workflow_store`);
  a recovered prompt workflow whose tag is in the log resumes instead of prompting again.
- At most once per tool. The log records a call's start before the tool runs. A started
  call without a result is handed back as an interruption, unless DBOS holds its result
  (it finished after the log's last write): then the checkpoint answers it and the tool
  does not run again. The user's own approvals are kept, except for a call this workflow
  already started (it may have taken effect).

Steps are numbered in DBOS by position, and a resumed run takes another path than the
first one did, so each execution first skips the step numbers earlier executions used:
its steps never meet an old checkpoint at their number. The checkpoints are read by name
and order instead (`Replay`).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dbos import DBOS, DBOSConfig, SetEnqueueOptions, SetWorkflowID, StepInfo, WorkflowHandleAsync

from hookline._run.resume import Answer, Approval, parse_approvals, paused_calls, started_calls
from hookline.agent import Agent
from hookline.conversation import user_actions_as_text
from hookline.durable._schedules import ScheduledPrompt, register_runner, scheduled_workflow
from hookline.durable._steps import DurableModel, DurableTool, Replay, replaying
from hookline.durable._tagging import WORKFLOW_KEY, began, workflow_store
from hookline.errors import ConfigError, SessionNotFound
from hookline.events import Event
from hookline.messages import Message
from hookline.models import Model
from hookline.result import RunResult
from hookline.sessions import InMemorySessionStore, SessionStore
from hookline.tools import Tool

if TYPE_CHECKING:
    from hookline.state import State

__all__ = ["DEFAULT_QUEUE", "WORKFLOW_KEY", "DurableAgent", "dbos_config", "launched", "register_queue"]

DEFAULT_QUEUE = "hookline"
"""The DBOS queue durable runs go through unless a `DurableAgent` names another."""

Approvals = Mapping[str, Approval]
Workflow = Callable[
    [str, str | Message | None, str | None, dict[str, Answer] | None], Coroutine[Any, Any, RunResult]
]
"""A durable agent's workflow function: `(session_id, prompt or None, user, approvals or None) -> RunResult`."""

_agents: dict[str, DurableAgent] = {}
"""The durable agent of each name in this process: the one its workflow runs."""
_workflows: dict[str, Workflow] = {}
"""The DBOS workflow of each agent name, registered once per process."""


def dbos_config(
    database_url: str, *, app: str, version: str, executor_id: str | None = None, log_level: str = "WARNING"
) -> DBOSConfig:
    """A DBOS configuration on the session store's PostgreSQL database, with a pinned version.

    Args:
        database_url: The database: the one `PostgresSessionStore` uses (DBOS keeps its tables
            in its schema `dbos`), or a `sqlite:///` file for runs on one machine.
        app: The application's name (lowercase letters, digits, `-` and `_`, as DBOS requires).
        version: The application version. DBOS recovers only the workflows of its own version,
            so every worker that may recover another's runs must run with the same one; change
            it when a change of tools or hooks must not meet runs started before it.
        executor_id: This process's id; a restarted process recovers the runs of its id.
        log_level: DBOS's own log level.
    """
    if not version:
        raise ConfigError("pin the application version (e.g. version='2024-06-01'): recovery finds only its own")
    if database_url.startswith("postgres://"):  # libpq's short scheme, which SQLAlchemy refuses
        database_url = "postgresql://" + database_url.removeprefix("postgres://")
    config: DBOSConfig = {"name": app, "system_database_url": database_url, "application_version": version,
                          "log_level": log_level}
    if executor_id is not None:
        config["executor_id"] = executor_id
    return config


@contextmanager
def launched(config: DBOSConfig) -> Iterator[None]:
    """DBOS launched for the block, and destroyed after it (its threads stopped).

    Create the `DurableAgent`s first: DBOS recovers the runs of this process's executor at
    launch, and a recovered run needs its agent. Launched inside a running event loop,
    DBOS runs the workflows on it.
    """
    DBOS(config=config)
    try:
        DBOS.launch()
        yield
    finally:
        DBOS.destroy()


async def register_queue(
    name: str = DEFAULT_QUEUE,
    *,
    worker_concurrency: int | None = None,
    global_concurrency: int | None = None,
    polling_interval_sec: float = 1.0,
) -> None:
    """Register the DBOS queue of durable runs (after `DBOS.launch()`).

    The queue runs one run per session at a time across every worker (its partition key is
    the session id), so two runs of one session never race for it.

    Args:
        name: The queue's name.
        worker_concurrency: Runs at once in one process (None: no limit).
        global_concurrency: Runs at once across all processes (None: no limit).
        polling_interval_sec: How often each worker looks for queued runs.
    """
    await DBOS.register_queue_async(
        name,
        worker_concurrency=worker_concurrency,
        global_concurrency=global_concurrency,
        partition_concurrency=1,
        polling_interval_sec=polling_interval_sec,
    )


class DurableAgent(Agent):
    """An agent whose runs are DBOS workflows: a killed worker's run is recovered and goes on.

    It is an `Agent` (its own runs, outside a workflow, are ordinary ones) whose model calls
    and tool calls are DBOS steps. `start()` and `start_resume()` start durable runs. Every
    process that may run or recover them creates the agent, under the same name, before
    `DBOS.launch()`; the name names the workflow (a later agent of one name replaces the earlier).

    Args:
        name: The agent's name, and its workflow's (`hookline.agent.<name>`).
        queue: The DBOS queue runs go through (see `register_queue`); None starts them at once
            in this process, with no concurrency limit.
        session_wait: Seconds a run waits for another run of its session before `SessionBusy`.
        max_recovery_attempts: How often DBOS recovers one run before giving up on it.
        **options: The `Agent` options (`model`, `tools`, `session_store`, ...).
    """

    def __init__(
        self,
        name: str = "agent",
        *,
        queue: str | None = DEFAULT_QUEUE,
        session_wait: float = 60.0,
        max_recovery_attempts: int = 100,
        **options: Any,
    ) -> None:
        super().__init__(name, **options)
        self.queue = queue
        self.session_wait = session_wait
        self._durable_model: DurableModel | None = None
        self._wrapped: tuple[dict[str, Tool], dict[str, Tool]] | None = None
        self._durable_tools: dict[int, DurableTool] = {}
        self._queue_checked = False
        self.workflow = _workflow_for(name, max_recovery_attempts)
        """The DBOS workflow function: `(session_id, prompt, user, approvals) -> RunResult`."""
        _agents[name] = self
        register_runner(name, self)

    @property
    def model(self) -> Model:
        """The agent's model, each call a DBOS step."""
        inner = super().model
        if self._durable_model is None or self._durable_model.inner is not inner:
            self._durable_model = DurableModel(inner)
        return self._durable_model

    def tools_for(self, state: State) -> dict[str, Tool]:
        """The tools offered this turn, each call a DBOS step."""
        tools = super().tools_for(state)
        if self._wrapped is not None and self._wrapped[0] is tools:
            return self._wrapped[1]  # the static tools: one wrapping for every turn
        wrapped: dict[str, Tool] = {name: self._durable_tool(t) for name, t in tools.items()}
        self._wrapped = (tools, wrapped)
        return wrapped

    def _durable_tool(self, inner: Tool) -> DurableTool:
        cached = self._durable_tools.get(id(inner))
        if cached is None or cached.inner is not inner:
            cached = self._durable_tools[id(inner)] = DurableTool(inner)
        return cached

    async def start(
        self,
        prompt: str | Message,
        *,
        session_id: str,
        user: str | None = "default",
        workflow_id: str | None = None,
    ) -> WorkflowHandleAsync[RunResult]:
        """Start a durable run of `prompt` on session `session_id`; await `.get_result()` on the handle.

        Args:
            prompt: The user's prompt.
            session_id: The session (created when missing).
            user: Its owner (None: any owner).
            workflow_id: The workflow's id (default: a new one); starting an id again returns its run.
        """
        self.prompt(prompt)  # a bad prompt fails here, not in a worker
        return await self._start(session_id, prompt, user, None, workflow_id)

    async def start_resume(
        self,
        session_id: str,
        approvals: Approvals | None = None,
        *,
        user: str | None = None,
        workflow_id: str | None = None,
    ) -> WorkflowHandleAsync[RunResult]:
        """Resume an interrupted run of session `session_id` durably (see `Agent.resume`).

        Args:
            session_id: The session of the interrupted run.
            approvals: `{call_id: True}` runs a call; `False` or a reason refuses it;
                `{call_id: {"args": {...}}}` runs it with these arguments (as `Agent.resume`).
            user: The session's owner, to check it; None finds the session by id.
            workflow_id: The workflow's id (default: a new one).
        """
        self.resume(session_id, approvals, user=user)  # bad approvals fail here, not in a worker
        return await self._start(session_id, None, user, parse_approvals(approvals), workflow_id)

    async def schedule(
        self, name: str, cron: str, prompt: str, *, session_id: str, user: str | None = "default",
        timezone: str | None = None,
    ) -> None:
        """Run `prompt` on session `session_id` on the cron schedule `cron` (DBOS's scheduler; see `_schedules`).

        Args:
            name: The schedule's name, unique in the DBOS database (`unschedule(name)` ends it).
            cron: A cron expression; six fields put seconds first (`"0 */5 * * * *"`).
            prompt: The prompt of each run.
            session_id: The session each run goes to (created by the first when missing).
            user: Its owner.
            timezone: The IANA time zone the expression is read in (None: UTC).

        Raises:
            ConfigError: A session store the workers do not share (in memory).
        """
        self.prompt(prompt)  # a bad prompt fails here, not at the first tick
        if isinstance(self.session_store, InMemorySessionStore):
            raise ConfigError("a scheduled run needs a session store every worker shares: "
                              "pass session_store=PostgresSessionStore(dsn) to the agent")
        context: ScheduledPrompt = {"agent": self.name, "session_id": session_id, "prompt": prompt, "user": user}
        # DBOS's own queue of schedules, not the agent's: that one is partitioned by session, and a
        # tick carries no partition key. The session's run lock keeps its runs one at a time.
        await DBOS.create_schedule_async(schedule_name=name, workflow_fn=scheduled_workflow, schedule=cron,
                                         context=context, cron_timezone=timezone)

    @staticmethod
    async def unschedule(name: str) -> None:
        """End the schedule `name` (runs it already started go on)."""
        await DBOS.delete_schedule_async(name)

    async def run(
        self, prompt: str | Message, *, session_id: str, user: str | None = "default", poll: float = 0.1
    ) -> RunResult:
        """Start a durable run and wait for its result, looking every `poll` seconds (see `start`)."""
        handle = await self.start(prompt, session_id=session_id, user=user)
        return await handle.get_result(polling_interval_sec=poll)

    async def _start(
        self, session_id: str, prompt: str | Message | None, user: str | None, approvals: dict[str, Answer] | None,
        workflow_id: str | None,
    ) -> WorkflowHandleAsync[RunResult]:
        if isinstance(self.session_store, InMemorySessionStore):
            raise ConfigError("a durable run needs a session store every worker shares: "
                              "pass session_store=PostgresSessionStore(dsn) to the agent")
        args = (session_id, prompt, user, approvals)
        with SetWorkflowID(workflow_id) if workflow_id is not None else nullcontext():
            if self.queue is None:
                return await DBOS.start_workflow_async(self.workflow, *args)
            await self._check_queue(self.queue)
            with SetEnqueueOptions(queue_partition_key=session_id):
                return await DBOS.enqueue_workflow_async(self.queue, self.workflow, *args)

    async def _check_queue(self, queue: str) -> None:
        if not self._queue_checked:
            if await DBOS.retrieve_queue_async(queue) is None:
                raise ConfigError(f"the DBOS queue {queue!r} is not registered: await "
                                  f"hookline.durable.register_queue({queue!r}, ...) after DBOS.launch(), "
                                  "or pass queue=None to start runs at once")
            self._queue_checked = True

    async def _execute(
        self, session_id: str, prompt: str | Message | None, user: str | None, approvals: dict[str, Answer] | None
    ) -> RunResult:
        """The workflow's body: this execution's run, from the log and the checkpoints."""
        workflow_id = DBOS.workflow_id
        assert workflow_id is not None
        steps = await _recorded_steps(workflow_id)
        _skip_step_ids(steps)
        replay = Replay.from_steps(steps)
        log = await _session_log(self.session_store, session_id)
        store = workflow_store(self.session_store, workflow_id)
        token = replaying.set(replay)
        try:
            if prompt is not None and not began(log, workflow_id):
                return await self.prompt(prompt).session(session_id, user=user, store=store, wait=self.session_wait)
            decided = _recovery_approvals(approvals or {}, log, replay, begun=began(log, workflow_id))
            result = await self.resume(session_id, decided, user=user, store=store, wait=self.session_wait)
        finally:
            replaying.reset(token)
        return _whole_run(result, log, workflow_id)


def _workflow_for(name: str, max_recovery_attempts: int) -> Workflow:
    """The workflow of the agents named `name`, registered with DBOS on first use."""
    workflow = _workflows.get(name)
    if workflow is None:

        async def run_agent(
            session_id: str, prompt: str | Message | None, user: str | None, approvals: dict[str, Answer] | None
        ) -> RunResult:
            agent = _agents.get(name)
            if agent is None:
                raise ConfigError(f"no DurableAgent named {name!r} in this process: create it before DBOS.launch()")
            return await agent._execute(session_id, prompt, user, approvals)

        register = DBOS.workflow(name=f"hookline.agent.{name}", max_recovery_attempts=max_recovery_attempts)
        workflow = _workflows[name] = register(run_agent)
    return workflow


async def _recorded_steps(workflow_id: str) -> list[StepInfo]:
    """The workflow's checkpointed steps, as the database holds them now.

    Inside a workflow DBOS checkpoints this call too and would replay the first execution's
    answer; run without the workflow's context, it reads the database.
    """
    read = DBOS.list_workflow_steps_async(workflow_id)
    return await asyncio.get_running_loop().create_task(read, context=contextvars.Context())


def _skip_step_ids(steps: list[StepInfo]) -> None:
    """Move this execution's step numbers past every checkpoint of the earlier executions."""
    last = max((s["function_id"] for s in steps), default=0)
    if last:
        while DBOS.reserve_step().step_id < last:
            pass


async def _session_log(store: SessionStore, session_id: str) -> list[Event]:
    try:
        return await store.events(session_id, view="all")
    except SessionNotFound:
        return []


def _recovery_approvals(
    approvals: Mapping[str, Answer], log: list[Event], replay: Replay, *, begun: bool
) -> dict[str, Answer]:
    """The approvals a (re-)execution resumes with.

    A call this workflow started may have taken effect, so the user's approval of it is
    spent; a started call whose result DBOS checkpointed is approved, to take that result.
    """
    started = started_calls(log)
    decided = {c: a for c, a in approvals.items() if not (begun and (a is True or isinstance(a, Mapping))
                                                          and c in started)}
    for paused in paused_calls(log):
        if paused.call_id in started and paused.call_id in replay.results:
            decided[paused.call_id] = True
    return decided


def _whole_run(result: RunResult, log: list[Event], workflow_id: str) -> RunResult:
    """The run's result across executions: the messages earlier ones recorded come first.

    Their model and tool calls are counted from those messages; their tokens are not known.
    """
    earlier = [
        user_actions_as_text(e.to_message())
        for e in log
        if e.kind == "message" and not e.partial and e.metadata.get(WORKFLOW_KEY) == workflow_id
    ]
    if not earlier:
        return result
    usage = replace(result.usage)
    usage.model_calls += sum(1 for m in earlier if m.role == "assistant")
    usage.tool_calls += sum(len(m.tool_results) for m in earlier)
    return result.model_copy(update={"messages": [*earlier, *result.messages], "usage": usage})
