"""Run by test_concurrent_writers.py: several threads of one process run prompts on one store.

    python concurrency_worker.py BACKEND TARGET TAG THREADS PROMPTS WAIT SHARED

Each thread runs PROMPTS prompts with `run_sync`, alternating between the session SHARED
(which every thread of every worker also uses) and a session of its own, waiting up to
WAIT seconds for a busy session. On SQLite every thread uses the same store object; on
PostgreSQL each thread has its own (an asyncpg pool belongs to the event loop that opened
it, and each thread's `run_sync` has its own loop). The worker prints "ready", waits for a
line on stdin (so that all workers start together), then prints one JSON line: a list of
`{"session", "prompt", "outcome"}` where outcome is "completed", "busy" (`SessionBusy`) or
the error.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from typing import Any

from hookline import Agent, SessionBusy, ToolCallPart, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import PostgresSessionStore, SessionStore, SQLiteSessionStore


async def script(request: ModelRequest) -> ModelResponse:
    await asyncio.sleep(0.005)  # a model takes a moment: the runs overlap
    last = request.messages[-1]
    if last.role == "user":
        return ModelResponse(tool_calls=[ToolCallPart(id=f"{last.text}-c", name="echo", arguments={"text": last.text})])
    return ModelResponse(text=f"done {last.tool_results[0].content}")


@tool
async def echo(text: str) -> str:
    """Say `text` back."""
    await asyncio.sleep(0.005)  # the tool's work
    return text


def worker_thread(
    make_store: Any, tag: str, number: int, prompts: int, wait: float, shared: str, out: list[dict[str, str]]
) -> None:
    agent = Agent(name="echo", model=FunctionModel(script), tools=[echo], session_store=make_store())
    for i in range(prompts):
        session = shared if i % 2 == 0 else f"{tag}-t{number}"
        prompt = f"{tag}-t{number}-p{i}"
        try:
            result = agent.prompt(prompt).session(session, wait=wait).run_sync()
            outcome = "completed" if result.output == f"done {prompt}" else f"wrong output {result.output!r}"
        except SessionBusy:
            outcome = "busy"
        except Exception as exc:
            outcome = f"{type(exc).__name__}: {exc}"
        out.append({"session": session, "prompt": prompt, "outcome": outcome})


def main(backend: str, target: str, tag: str, threads: str, prompts: str, wait: str, shared: str) -> None:
    if backend == "sqlite":
        one = SQLiteSessionStore(target)

        def make_store() -> SessionStore:
            return one
    else:

        def make_store() -> SessionStore:
            return PostgresSessionStore(target)

    out: list[dict[str, str]] = []
    workers = [
        threading.Thread(target=worker_thread, args=(make_store, tag, n, int(prompts), float(wait), shared, out))
        for n in range(int(threads))
    ]
    print("ready", flush=True)
    sys.stdin.readline()
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
