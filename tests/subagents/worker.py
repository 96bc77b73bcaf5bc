"""Runs the sub-agent tests' agents in a process of its own (test_processes.py).

    python worker.py prompt|resume BACKEND TARGET EFFECTS [APPROVALS_JSON] [--hold FILE] [--no-approval]

BACKEND is sqlite (TARGET a file) or postgres (TARGET a URL). `prompt` sends "clean up" to
session "s"; `resume` resumes it with APPROVALS_JSON. The researcher's `delete` notes each run
in EFFECTS; with `--hold FILE` its first run writes FILE and waits until it is gone (the test
kills the process meanwhile). Prints the result as one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hookline.sessions import PostgresSessionStore, SessionStore, SQLiteSessionStore
from subagents.agents import lead, researcher


async def main(argv: list[str]) -> None:
    hold = Path(argv[argv.index("--hold") + 1]) if "--hold" in argv else None
    mode, backend, target, effects, *rest = [a for a in argv if not a.startswith("--") and Path(a) != hold]
    store: SessionStore = SQLiteSessionStore(target) if backend == "sqlite" else PostgresSessionStore(target)
    async with store:
        boss = lead(researcher(Path(effects), approval="--no-approval" not in argv, hold=hold), store)
        request = boss.prompt("clean up").session("s") if mode == "prompt" else boss.resume("s", json.loads(rest[0]))
        result = await request
        print(json.dumps({"stop_reason": result.stop_reason, "output": result.output,
                          "interruptions": [i.model_dump(exclude_none=True) for i in result.interruptions]}),
              flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
