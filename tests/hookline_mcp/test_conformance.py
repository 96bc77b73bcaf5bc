"""The official MCP conformance kit against hookline: its server scenarios, and its client scenarios.

The server scenarios run against `hookline.testing.mcp_conformance`, the kit's fixture
served by `hookline.mcp.serving` (what `hookline mcp --http` serves with), the tasks
extension's (`tasks-*`, run by the kit outside the scored sets) included; the client
scenarios against `MCPToolset`, driven by `conformance/client.py`. Each revision's
requirement set runs at its own wire version. A failure the baseline does not name, or a
baselined scenario that passes, fails the test; docs/mcp.md shows the same table.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.waiting import DEADLINE

from .conformance import kit

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def fixture_url() -> Iterator[str]:
    """The conformance fixture, served over HTTP by hookline's serving code."""
    process = subprocess.Popen([sys.executable, "-m", "hookline.testing.mcp_conformance", "--port", "0"],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("PORT "), f"the fixture did not start: {line!r}"
    yield f"http://127.0.0.1:{line.split()[1]}/mcp"
    process.terminate()
    process.wait(DEADLINE)
    process.stdout.close()


@pytest.mark.parametrize("revision", kit.REVISIONS)
def test_the_served_fixture_passes_the_server_scenarios(revision: str, fixture_url: str, tmp_path: Path) -> None:
    verdict = kit.run("server", revision, ["--url", fixture_url], tmp_path)
    assert verdict.returncode == 0, verdict.explain()
    assert kit.required("server", revision) <= verdict.ran
    # The tasks extension's scenarios are outside every scored set; hookline serves tasks, so they must pass.
    tasks = kit.tasks_scenarios(revision)
    assert tasks <= verdict.ran
    assert not {s: ids for s, ids in verdict.failing.items() if s in tasks}, verdict.explain()


@pytest.mark.parametrize("revision", kit.REVISIONS)
def test_the_toolset_passes_the_client_scenarios(revision: str, tmp_path: Path) -> None:
    verdict = kit.run("client", revision, ["--command", kit.CLIENT], tmp_path)
    assert verdict.returncode == 0, verdict.explain()
    assert kit.required("client", revision) <= verdict.ran


def test_the_docs_table_shows_every_expected_failure_as_a_gap() -> None:
    table = conformance_table((ROOT / "docs" / "mcp.md").read_text())
    for revision in kit.REVISIONS:
        gaps = kit.expected(revision)
        shown = {scenario for scenario, verdicts in table.items() if verdicts[revision] not in ("✓", "-")}
        assert shown == gaps, f"{revision}: docs/mcp.md and {kit.baseline(revision).name} disagree"


def conformance_table(page: str) -> dict[str, dict[str, str]]:
    """docs/mcp.md's conformance table: `{scenario: {revision: verdict}}`.

    A verdict is "✓", "-" (not in that revision's set) or the gap's reason.
    """
    section = page.split("\n## The conformance kit\n", 1)[1].split("\n## ", 1)[0]
    table: dict[str, dict[str, str]] = {}
    for row in re.findall(r"^\| `([^`]+)` \|(.+)\|$", section, re.M):
        scenario, cells = row
        verdicts = [cell.strip() for cell in cells.split("|")]
        table[scenario] = dict(zip(kit.REVISIONS, verdicts[-2:], strict=True))
    return table
