"""Running the JavaScript clients of tests/node (installed by scripts/test into HOOKLINE_NODE_KIT).

A script of tests/node runs from a throwaway folder whose `node_modules` is the kit's, so that
its `import`s find the packages at the lockfile's versions. A missing kit fails the test (the
protocol tests must run wherever the suite does): `scripts/test` installs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from support.waiting import DEADLINE

SCRIPTS = Path(__file__).parents[1] / "node"
KIT = Path(os.environ.get("HOOKLINE_NODE_KIT") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
           / "hookline-node-kit")


def kit_modules() -> Path:
    """The kit's node_modules (fails the test when it is not installed)."""
    modules = KIT / "node_modules"
    if not modules.is_dir() or shutil.which("node") is None:
        pytest.fail(f"the JavaScript test kit is not installed at {KIT} (or node is missing): run scripts/test, "
                    "which installs tests/node/package-lock.json there with npm ci")
    return modules


def run_node(script: str | Path, *args: str) -> Any:
    """Run `tests/node/<script>` (or the script at a path) with `args`; return the JSON it prints last on stdout."""
    return json.loads(node_output(script, *args).strip().splitlines()[-1])


def node_output(script: str | Path, *args: str) -> str:
    """Run `tests/node/<script>` (or the script at a path) with `args` and the kit's packages; return its stdout."""
    source = script if isinstance(script, Path) else SCRIPTS / script
    with tempfile.TemporaryDirectory(prefix="hookline-node-") as folder:
        here = Path(folder)
        (here / "node_modules").symlink_to(kit_modules())
        for module in source.parent.glob("*.mjs"):  # the script and the modules it imports beside it
            shutil.copy(module, here / module.name)
        done = subprocess.run(["node", str(here / source.name), *args], capture_output=True, text=True,
                              timeout=DEADLINE)
    assert done.returncode == 0, f"{source.name} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout
