"""Run by test_store_faults.py in a process of its own: the disk fills up in the middle of a run.

    python disk_full_worker.py DB SESSION

Three prompts on one session of a SQLite file, through one store. During the second, the
tool caps the size of every file the process writes (RLIMIT_FSIZE) to what they hold now, so
the next commit fails on a real write() error, as on a full disk; the tool's result is
larger than anything that still fits. Then the cap is lifted (space is back) and the third
prompt runs on the same store. Prints one JSON line: what the failed run raised, the log as
it stood while the disk was full, and how the third run ended.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import sys
from typing import Any

from _harness import log_problems

from hookline import Agent, ToolCallPart, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SQLiteSessionStore, StoreError

BIG = 200_000  # characters of the result that cannot be stored
_LIMITS = resource.getrlimit(resource.RLIMIT_FSIZE)


def script(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    turn = sum(1 for m in request.messages if m.role == "user")
    if last.role == "user":
        return ModelResponse(tool_calls=[ToolCallPart(id=f"c{turn}", name="note", arguments={"text": last.text})])
    return ModelResponse(text=f"done {turn}")


def build(db: str) -> Agent:
    @tool
    def note(text: str) -> str:
        """Note `text`; "fill" fills the disk while it runs."""
        if text != "fill":
            return f"noted {text}"
        full = max(os.path.getsize(f"{db}{suffix}") for suffix in ("", "-wal") if os.path.exists(f"{db}{suffix}"))
        resource.setrlimit(resource.RLIMIT_FSIZE, (full, _LIMITS[1]))
        return "x" * BIG

    return Agent(name="noter", model=FunctionModel(script), tools=[note], session_store=SQLiteSessionStore(db))


async def main(db: str, session_id: str) -> dict[str, Any]:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # else the kernel kills the process at the cap
    agent = build(db)
    report: dict[str, Any] = {}
    async with agent.session_store as store:
        report["first"] = await attempt(agent, "first", session_id)
        report["full"] = await attempt(agent, "fill", session_id)
        log = await store.events(session_id, view="all")
        report["while_full"] = {"events": len(log), "problems": log_problems(log, complete=False)}
        resource.setrlimit(resource.RLIMIT_FSIZE, _LIMITS)  # space is back
        report["third"] = await attempt(agent, "third", session_id)
    return report


async def attempt(agent: Agent, prompt: str, session_id: str) -> dict[str, Any]:
    try:
        return {"output": (await agent.prompt(prompt).session(session_id)).output}
    except Exception as exc:
        where = exc.where if isinstance(exc, StoreError) else None
        return {"type": type(exc).__name__, "message": str(exc), "where": where}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:]))), flush=True)
