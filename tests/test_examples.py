"""Every example runs offline (on its script) and prints what it is about."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

CASES = {
    "hook_tour.py": [
        "[before_tool] turn 1: pending calls: call-1 add",
        "[after_tool] turn 1: add returned '5'",
        "[after_run] turn 2: done: 2 model calls, 1 tool calls",
        "answer: 2 + 3 = 5 (completed)",
    ],
    "research_flow.py": [
        "writer draft (discarded): 'Draft: hooks are probably callbacks of some kind.'",
        "researcher (researcher_script) says:",
        "final answer: Hooks are your code, called by the loop at named points. In detail: hooks run at seven points",
        "writer model calls: 2",
    ],
    "agent_as_tool.py": [
        "orchestrator calls research(",
        "  researcher run finished after 1 model call(s)",
        "final answer: Summary for the user: Finding on",
    ],
    "budget_and_approval.py": [
        "paused: delete_file({'path': 'tmp1.log'}) - delete_file needs approval; a human approves step-1",
        "cleanup completed: Deleted tmp1.log and tmp2.log",
        "files left: ['notes.txt']",
        "approved tools in this session: ['delete_file']",
        "polling stopped (hook_exit) after 4 model calls: budget: 4 model calls reached (max_turns=4)",
    ],
    "durable_dbos.py": [
        "worker 1: started run ship-42; killed while `ship` ran",
        "worker 2: recovered run ship-42: interrupted: ship (the process stopped while this call ran; "
        "it may or may not have taken effect)",
        "worker 2: final answer: Order 42 was shipped once; I did not ship it again.",
        "tool runs: check_stock 1, ship 1",
    ],
    "mcp_client.py": [
        "  [weather_station_report] info: progress 1/3: read station north",
        "answer: Lyon tomorrow: 3 stations read, light wind, gusts in the south. Pack sunglasses and a light jacket.",
    ],
    "mcp_server.py": [
        "tools: calculator(prompt, session_id)",
        "  progress 3: running add(a=2, b=3)",
        "answer: 2 + 3 = 5 (question 2 of this session)",
    ],
}


def test_every_example_is_tested() -> None:
    found = {p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")}
    assert found == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_runs_offline(name: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOOKLINE_") and not k.endswith("_API_KEY")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, env=env, timeout=60, check=False
    )

    assert done.returncode == 0, done.stderr
    for line in CASES[name]:
        assert line in done.stdout, f"{line!r} not in the output of {name}:\n{done.stdout}"
