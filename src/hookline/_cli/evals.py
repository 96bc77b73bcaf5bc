"""`hookline eval PATH`: run a folder (or file) of cases against an agent; print the summary table.

Exits 0 when every case passed, 1 when one failed. `--replay` answers with each case's
recorded model answers (no model is called); otherwise the agent's model answers. `--db`
keeps each case's session, with its verdict, in a store (default: in memory, thrown away).
"""

from __future__ import annotations

import asyncio
import json
from typing import Literal

from hookline._cli.exits import ExitCode
from hookline._cli.setup import build_agent, import_agent, open_store, store_location
from hookline.agent import Agent
from hookline.evals import SuiteResult, load_cases, run_cases

__all__ = ["eval_command"]


def eval_command(path: str, agent_ref: str | None, model: str | None, replay: bool,
                 tools: Literal["replay", "real"], db: str | None, as_json: bool) -> ExitCode:
    """Run the cases of `path`; print the table (or one JSON object a case)."""
    cases = load_cases(path)
    agent = _agent(agent_ref, model, replay)

    async def run() -> SuiteResult:
        if db is None:
            return await run_cases(agent, cases, replay=replay, tools=tools)
        async with open_store(store_location(db)) as store:
            return await run_cases(agent, cases, replay=replay, tools=tools, store=store)

    suite = asyncio.run(run())
    if as_json:
        for result in suite.results:
            print(json.dumps({"case": result.case.name, "passed": result.passed, "session_id": result.session_id,
                              "error": result.error, "seconds": round(result.seconds, 3),
                              "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail}
                                         for c in result.checks]}), flush=True)
    else:
        print(suite.table(), flush=True)
    return ExitCode.OK if suite.passed else ExitCode.RUN_FAILED


def _agent(agent_ref: str | None, model: str | None, replay: bool) -> Agent:
    if replay and model is None:  # its model is never called: no need to find one
        return import_agent(agent_ref) if agent_ref else Agent()
    return build_agent(agent_ref, model)
