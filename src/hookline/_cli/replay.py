"""`hookline replay SESSION`: run an agent again against a session's recorded model answers.

Prints what was replayed and each divergence, one line each (or the report as JSON), and
exits 0 when the replay made the recorded conversation, 1 when it diverged. Without
`--agent`, an agent with no tools, hooks or instructions of its own replays the log (its
tools answered from the recording): a check that the log replays at all.
"""

from __future__ import annotations

import asyncio
import json
from typing import Literal

from hookline._cli.exits import ExitCode
from hookline._cli.setup import import_agent, open_store, store_location
from hookline.agent import Agent
from hookline.errors import SessionNotFound
from hookline.events import Event
from hookline.replay import Recording, ReplayReport, replay

__all__ = ["read_log", "replay_command"]


def read_log(db: str | None, session_id: str) -> list[Event]:
    """Session `session_id`'s whole log (the `all` view), from the store `db` names."""

    async def read() -> list[Event]:
        async with open_store(store_location(db)) as store:
            await store.get(session_id, with_events=False)
            return await store.events(session_id, view="all")

    location = store_location(db)
    if "://" not in location:
        from pathlib import Path

        if not Path(location).exists():
            raise SessionNotFound(session_id)
    return asyncio.run(read())


def replay_command(session_id: str, db: str | None, agent_ref: str | None, tools: Literal["replay", "real"],
                   as_json: bool) -> ExitCode:
    """Replay `session_id` with the agent `agent_ref` names (or a bare one); print the report."""
    events = read_log(db, session_id)
    recording = Recording.of(events)
    agent = import_agent(agent_ref) if agent_ref else Agent(_author(events))
    report = asyncio.run(replay(agent, recording, tools=tools))
    if as_json:
        print(json.dumps(_as_json(session_id, report)), flush=True)
    else:
        print(f"replayed session {session_id}: {report.summary()}", flush=True)
        for divergence in report.divergences:
            print(f"  {divergence}", flush=True)
    return ExitCode.OK if report.ok else ExitCode.RUN_FAILED


def _author(events: list[Event]) -> str:
    return next((e.author for e in events if e.kind == "message" and e.role == "assistant"), "agent")


def _as_json(session_id: str, report: ReplayReport) -> dict[str, object]:
    return {
        "session_id": session_id, "ok": report.ok, "summary": report.summary(), "tools": report.tools,
        "model_calls": report.model_calls,
        "divergences": [{"index": d.index, "kind": d.kind, "expected": d.expected, "got": d.got}
                        for d in report.divergences],
    }
