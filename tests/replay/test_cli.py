"""`hookline replay`, `hookline sessions export --as-case` and `hookline eval` as processes (issue 27,
part 4), on a SQLite file and on PostgreSQL: a session recorded, replayed, made a case, and evaluated."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.backends import open_store

from .agents import agent

pytestmark = pytest.mark.anyio

AGENTS = Path(__file__).with_name("agents.py")


def hookline(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookline", *args], capture_output=True, text=True, timeout=120,
                          check=False)


@pytest.fixture
async def recorded(shared: tuple[str, str]) -> str:
    """The `--db` of a store holding session "s": an addition, an approved danger, a thanks."""
    async with open_store(*shared) as store:
        await agent.prompt("please add").session("s", store=store)
        paused = await agent.prompt("now the danger").session("s", store=store)
        await agent.resume("s", {paused.interruptions[0].call_id: True}, store=store)
        await agent.prompt("thanks").session("s", store=store)
    return shared[1]


async def test_a_session_replays_the_same_and_a_changed_tool_diverges(recorded: str) -> None:
    same = hookline("replay", "s", "--db", recorded, "--agent", f"{AGENTS}:agent")
    assert same.returncode == 0, same.stderr
    assert same.stdout.strip() == ("replayed session s: 10 messages, 5 model calls, tools replayed: "
                                   "the same conversation")
    bare = hookline("replay", "s", "--db", recorded)
    assert bare.returncode == 0, bare.stdout + bare.stderr

    changed = hookline("replay", "s", "--db", recorded, "--agent", f"{AGENTS}:off_by_one", "--tools", "real")
    assert changed.returncode == 1
    lines = changed.stdout.splitlines()
    assert lines[0].endswith("1 divergence(s), the first at message #2")
    assert lines[1] == "  #2 tool_result: expected 'tool: add -> 5', got 'tool: add -> 6'"

    as_json = json.loads(hookline("replay", "s", "--db", recorded, "--agent", f"{AGENTS}:off_by_one", "--tools",
                                  "real", "--json").stdout)
    assert (as_json["ok"], as_json["divergences"][0]["index"]) == (False, 2)
    missing = hookline("replay", "nope", "--db", recorded)
    assert missing.returncode == 3


async def test_a_session_becomes_a_case_that_the_agent_passes_and_a_changed_one_fails(
    recorded: str, tmp_path: Path
) -> None:
    exported = hookline("sessions", "export", "s", "--db", recorded, "--as-case", "--name", "adds and dares")
    assert exported.returncode == 0, exported.stderr
    case = json.loads(exported.stdout)
    assert case["prompts"] == ["please add", "now the danger", "thanks"]
    assert [c["name"] for c in case["calls"]] == ["add", "danger"]
    assert (case["answer"], case["source"]) == ("you said thanks", "s")
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "adds.json").write_text(exported.stdout)

    passing = hookline("eval", str(cases), "--agent", f"{AGENTS}:agent", "--replay")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    table = passing.stdout.splitlines()
    assert table[0].split() == ["case", "result", "checks", "seconds"]
    assert table[2].startswith("adds and dares  pass    trajectory (exact), answer (equals)  ")
    assert table[-1] == "1 cases: 1 passed, 0 failed"

    failing = hookline("eval", str(cases / "adds.json"), "--agent", f"{AGENTS}:stopping", "--replay", "--json")
    assert failing.returncode == 1
    (verdict,) = [json.loads(line) for line in failing.stdout.splitlines()]
    assert verdict["passed"] is False
    assert [(c["name"], c["passed"]) for c in verdict["checks"]] == [("trajectory (exact)", True),
                                                                     ("answer (equals)", False)], (
        "a guardrail stops the run at the call: the answers after it come out of step")

    kept = hookline("eval", str(cases), "--agent", f"{AGENTS}:agent", "--replay", "--db", recorded)
    assert kept.returncode == 0
    async with open_store("postgres" if "://" in recorded else "sqlite", recorded) as store:
        sessions = [s.id for s in await store.list() if s.id.startswith("eval-adds-and-dares-")]
        (line,) = [e for e in await store.events(sessions[0], view="ui") if "eval" in e.metadata]
    assert line.metadata["eval"]["passed"] is True
    assert [c["name"] for c in line.metadata["eval"]["checks"]] == ["trajectory (exact)", "answer (equals)"]
