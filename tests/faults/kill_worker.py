"""Run by test_kill_trials.py in a process of its own, to be killed with SIGKILL at a random moment.

    python kill_worker.py run|recover BACKEND TARGET SESSION EFFECTS ACKS

Both modes build the same agent on a session store (BACKEND sqlite with TARGET a file, or
postgres with TARGET a DSN), open the store, print "ready" and wait for a line on stdin, so
that the test's clock starts when the work does. Then:

- `run` prompts the session. The scripted model makes three tool turns (the second with two
  calls that run concurrently), then answers FINAL. Each tool execution appends its call id
  to EFFECTS (fsync'd), so the test can count real executions; each append the store
  acknowledges is written to ACKS as `seq id` lines (fsync'd), so the test can check that no
  acknowledged commit is lost.
- `recover` finishes the session as a user of the public API would: the prompt again if it
  never reached the log, else `agent.resume(session_id)`, approving every paused call that
  has not run (by EFFECTS) and refusing those that did, until the run completes.

Each mode prints one JSON line with its outcome and exits.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from _harness import durable_append, read_lines

from hookline import Agent, Event, RunResult, SessionNotFound, ToolCallPart, tool
from hookline._run.resume import DIED_REASON
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import PostgresSessionStore, SessionStore, SQLiteSessionStore

PROMPT = "record three things"
FINAL = "all three recorded"
TURNS = (("c1",), ("c2a", "c2b"), ("c3",))
MODEL_DELAY = 0.03  # a model takes time to answer: a kill may land while it does
TOOL_DELAY = 0.02  # before and after the effect: a kill may land on either side of it
LOCK_WAIT = 60.0  # a killed holder's lock is freed at once (SQLite) or when the server notices (Postgres)


async def script(request: ModelRequest) -> ModelResponse:
    await asyncio.sleep(MODEL_DELAY)
    made = sum(1 for m in request.messages if m.role == "assistant" and m.tool_calls)
    if made < len(TURNS):
        calls = [ToolCallPart(id=cid, name="record", arguments={"token": cid}) for cid in TURNS[made]]
        return ModelResponse(tool_calls=calls)
    return ModelResponse(text=FINAL)


def observed(base: type[SessionStore], acks: Path) -> type[SessionStore]:
    """`base` with every acknowledged append written to `acks` before the caller sees it."""

    class Observed(base):  # type: ignore[valid-type,misc]
        async def append_events(self, session_id: str, events: Any) -> list[Event]:
            stored: list[Event] = await super().append_events(session_id, events)
            durable_append(acks, "\n".join(f"{e.seq} {e.id}" for e in stored))
            return stored

    return Observed


def build(backend: str, target: str, effects: Path, acks: Path) -> Agent:
    @tool
    async def record(token: str) -> str:
        """Record one thing, durably."""
        await asyncio.sleep(TOOL_DELAY)
        durable_append(effects, token)
        await asyncio.sleep(TOOL_DELAY)
        return f"recorded {token}"

    base = SQLiteSessionStore if backend == "sqlite" else PostgresSessionStore
    store = observed(base, acks)(target)
    return Agent(name="recorder", model=FunctionModel(script), tools=[record], session_store=store)


async def recover(agent: Agent, session_id: str, effects: Path) -> dict[str, Any]:
    try:
        log = await agent.session_store.events(session_id, view="prompt")
    except SessionNotFound:
        log = []
    if not any(e.role == "user" for e in log):  # the prompt never reached the log: send it again
        return _outcome("prompt", await agent.prompt(PROMPT).session(session_id, wait=LOCK_WAIT), [])
    if log[-1].role == "assistant" and not log[-1].to_message().tool_calls:
        return {"how": "already finished", "stop_reason": "completed", "output": log[-1].text, "problems": []}
    result = await agent.resume(session_id, approvals={}, wait=LOCK_WAIT)
    problems: list[str] = []
    rounds = 0
    while result.stop_reason == "interrupted" and rounds < 5:
        rounds += 1
        ran = set(read_lines(effects))
        approvals: dict[str, bool | str] = {}
        for item in result.interruptions:
            if item.call_id in ran and item.reason != DIED_REASON:
                problems.append(f"call {item.call_id} ran, yet resume calls it {item.reason!r}")
            approvals[item.call_id] = "it already ran" if item.call_id in ran else True
        result = await agent.resume(session_id, approvals=approvals, wait=LOCK_WAIT)
    return _outcome(f"resume ({rounds} approval rounds)", result, problems)


def _outcome(how: str, result: RunResult, problems: list[str]) -> dict[str, Any]:
    return {"how": how, "stop_reason": result.stop_reason, "output": result.output, "problems": problems}


async def main(mode: str, backend: str, target: str, session_id: str, effects: str, acks: str) -> None:
    agent = build(backend, target, Path(effects), Path(acks))
    async with agent.session_store as store:
        await store.list(app="warm-up")  # connect (and migrate) before the clock starts
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        started = time.monotonic()
        try:
            if mode == "run":
                outcome = _outcome("run", await agent.prompt(PROMPT).session(session_id, wait=LOCK_WAIT), [])
            else:
                outcome = await recover(agent, session_id, Path(effects))
        except Exception as exc:
            outcome = {"error": f"{type(exc).__name__}: {exc}"}
        outcome["seconds"] = time.monotonic() - started
    print(json.dumps(outcome), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
