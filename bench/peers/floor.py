"""The floor: the scenario as a hand-written asyncio loop of plain dicts, without a framework.

The two tool calls of a turn are gathered (a sync tool is called inline). Persistence
(`seqdb`): the standard library's sqlite3, one INSERT and one COMMIT per message, in the
default rollback-journal mode: the cost of "commit every step" on this disk.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sqlite3
from collections.abc import Callable
from itertools import count
from typing import Any

from harness import Runner, Setup
from scenario import SYSTEM_PROMPT, USER_PROMPT, check_run, fake_decision

NAME = "baseline-loop"
PERSISTS = True

Message = dict[str, Any]


def version() -> str:
    """The floor has no version."""
    return "n/a"


def _model(T: int, sleep_s: float) -> Callable[[list[Message]], Any]:
    async def answer(messages: list[Message]) -> Message:
        if sleep_s:
            await asyncio.sleep(sleep_s)
        decision = fake_decision(sum(1 for m in messages if m["role"] == "tool"), T)
        if decision is None:
            return {"role": "assistant", "content": "done"}
        return {"role": "assistant", "tool_calls": [{"id": i, "name": "add", "args": a} for i, a in decision]}

    return answer


async def _call(tool: Callable[..., Any], args: dict[str, Any]) -> Any:
    value = tool(**args)
    return await value if inspect.isawaitable(value) else value


class _Log:
    """One table of messages; every message committed on its own."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE messages (session TEXT, seq INTEGER, body TEXT)")
        self.db.commit()

    def save(self, session: str, seq: int, message: Message) -> None:
        self.db.execute("INSERT INTO messages VALUES (?, ?, ?)", (session, seq, json.dumps(message)))
        self.db.commit()


async def build(setup: Setup) -> Runner:
    """The floor's loop for the scenario."""
    model = _model(setup.T, setup.model_sleep_s)
    tools = {"add": setup.tool}
    log = _Log(str(setup.db_path)) if setup.db_path is not None else None
    ids = count()

    async def run_once() -> None:
        session = f"s{next(ids)}"
        messages: list[Message] = []

        def append(message: Message) -> None:
            messages.append(message)
            if log is not None:
                log.save(session, len(messages), message)

        append({"role": "system", "content": SYSTEM_PROMPT})
        append({"role": "user", "content": USER_PROMPT})
        while calls := (reply := await model(messages)).get("tool_calls"):
            append(reply)
            results = await asyncio.gather(*(_call(tools[c["name"]], c["args"]) for c in calls))
            for call, result in zip(calls, results, strict=True):
                append({"role": "tool", "tool_call_id": call["id"], "content": str(result)})
        append(reply)
        check_run(messages[-1]["content"], sum(1 for m in messages if m["role"] == "tool"), setup.T)

    async def close() -> None:
        if log is not None:
            log.db.close()

    return Runner(run_once, close)
