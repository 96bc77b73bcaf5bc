"""Run by test_recovery.py in a process of its own: a DBOS worker the test kills, or one that recovers.

    python worker.py start|recover|wrong-version DSN EFFECTS SCENARIO

Every mode builds the same `DurableAgent` (a scripted model, two async tools) on the
PostgreSQL database DSN, with DBOS's tables in the same database, the executor id
`worker-SCENARIO` and the queue `queue-SCENARIO`, and launches DBOS. Each model call and each tool execution appends a
line to EFFECTS (fsync'd), so the test counts real executions.

- `start` starts the durable run of SCENARIO and prints "killpoint" where the test kills it:
  `model` while the model is asked a second time, `answered` after that answer was
  checkpointed (in an `after_llm` hook, before the log records it), `tool` while the tool
  `slow` runs beside `note`, once `note`'s result is checkpointed (`ctrl-c`: the same, for the
  test to send SIGINT); `approved` while `slow` runs in a durable resumption that approved it
  (a `before_tool` hook paused it for approval).
- `recover` launches with the same application version, so DBOS recovers the killed run;
  it waits for its result, then resumes a run that came back interrupted, refusing the
  paused calls. It prints one JSON line: `{"recovered": result, "resumed": result}`.
- `wrong-version` launches with another application version and prints the run's status
  (as JSON): that version must not recover it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from dbos import DBOS

from hookline import RunResult, State, ToolCallPart, hook, tool
from hookline.durable import DurableAgent, dbos_config, launched, register_queue
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import PostgresSessionStore

MODE, DSN, EFFECTS, SCENARIO = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4]
VERSION = "v2" if MODE == "wrong-version" else "v1"
SESSION = f"session-{SCENARIO}"
WORKFLOW = f"run-{SCENARIO}"
RESUME_WORKFLOW = f"resume-{SCENARIO}"
QUEUE = f"queue-{SCENARIO}"


def effect(line: str) -> None:
    """Append `line` to EFFECTS and fsync it: it survives a SIGKILL right after."""
    fd = os.open(EFFECTS, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


async def kill_me_here() -> None:
    print("killpoint", flush=True)
    await asyncio.Event().wait()  # the test kills this process now


async def script(request: ModelRequest) -> ModelResponse:
    results = [r for m in request.messages for r in m.tool_results]
    effect(f"model call {len(results)}")
    if not results:
        calls = [ToolCallPart(id="c1", name="note", arguments={"text": "a"})]
        if SCENARIO in ("tool", "ctrl-c"):
            calls.append(ToolCallPart(id="c2", name="slow", arguments={"text": "b"}))
        if SCENARIO == "approved":
            calls = [ToolCallPart(id="c2", name="slow", arguments={"text": "b"})]
        return ModelResponse(tool_calls=calls)
    if SCENARIO == "model" and MODE == "start":
        await kill_me_here()
    return ModelResponse(text="done: " + "; ".join(r.content for r in results))


@tool
async def note(text: str) -> str:
    """Note `text`."""
    effect(f"note {text}")
    return f"noted {text}"


@tool
async def slow(text: str) -> str:
    """Take a long time over `text`."""
    effect(f"slow {text} started")
    if MODE == "start":
        if SCENARIO in ("tool", "ctrl-c"):
            await until_checkpointed("hookline.tool:note")
        await kill_me_here()
    return f"slow {text} done"


async def until_checkpointed(step: str) -> None:
    """Wait until this workflow's step `step` is checkpointed (so the kill lands after it)."""
    workflow_id = DBOS.workflow_id
    assert workflow_id is not None
    for _ in range(3000):  # DBOS has nothing to wait on: look every 10 ms, for 30 s at most
        if any(s["function_name"] == step for s in await DBOS.list_workflow_steps_async(workflow_id)):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{step} was never checkpointed")


@hook
def ask_for_approval(state: State) -> None:
    if SCENARIO == "approved":
        for call in state.tool_calls:
            state.interrupt(call.id, "slow needs approval")


@hook
async def stop_after_the_answer(state: State) -> None:
    if SCENARIO == "answered" and MODE == "start" and state.turn == 2:
        effect("after_llm waits")
        await kill_me_here()


agent = DurableAgent(
    "durable-test",
    model=FunctionModel(script),
    tools=[note, slow],
    hooks={"after_llm": [stop_after_the_answer], "before_tool": [ask_for_approval]},
    session_store=PostgresSessionStore(DSN),
    queue=QUEUE,
)


def dump(result: RunResult) -> dict[str, Any]:
    return result.model_dump(mode="json")


async def main() -> None:
    config = dbos_config(DSN, app="hookline-tests", version=VERSION, executor_id=f"worker-{SCENARIO}")
    with launched(config):
        await register_queue(QUEUE, polling_interval_sec=0.05)
        if MODE == "start":
            handle = await agent.start("go", session_id=SESSION, workflow_id=WORKFLOW)
            paused = await handle.get_result(polling_interval_sec=0.05)
            assert SCENARIO == "approved", f"the {SCENARIO} run finished before the kill"
            assert paused.stop_reason == "interrupted", paused
            approved = await agent.start_resume(SESSION, {"c2": True}, workflow_id=RESUME_WORKFLOW)
            await approved.get_result()
            raise AssertionError("the run finished before the kill")
        if MODE == "wrong-version":
            status = await DBOS.get_workflow_status_async(WORKFLOW)
            assert status is not None
            print(json.dumps({"status": status.status, "app_version": status.app_version}), flush=True)
            return
        killed = RESUME_WORKFLOW if SCENARIO == "approved" else WORKFLOW
        recovered = await (await DBOS.retrieve_workflow_async(killed)).get_result(polling_interval_sec=0.05)
        answer: dict[str, Any] = {"recovered": dump(recovered)}
        if recovered.stop_reason == "interrupted":
            refusals = {i.call_id: "it may have run already" for i in recovered.interruptions}
            resumed = await (await agent.start_resume(SESSION, refusals)).get_result(polling_interval_sec=0.05)
            answer["resumed"] = dump(resumed)
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
