"""The `a2a` extra: nothing loads the SDK until A2A is used, and without it the server has no A2A routes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("statement", ["import hookline.server", "import hookline.a2a"])
def test_importing_hookline_s_a2a_surfaces_loads_no_sdk(statement: str) -> None:
    loaded = json.loads(run(f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"))

    assert [m for m in loaded if m == "a2a" or m.startswith(("a2a.", "sse_starlette"))] == []


def test_the_server_serves_a2a_only_when_the_sdk_is_installed() -> None:
    code = """
import sys
with_sdk = sys.argv[-1] == "with"
if not with_sdk:
    sys.modules["a2a"] = None  # as if the extra were not installed
from hookline import Agent
from hookline.server import create_app
paths = {getattr(route, "path", "") for route in create_app(Agent("x"), tokens={}).routes}
print(sorted(p for p in paths if p in ("/a2a", "/.well-known/agent-card.json")))
try:
    from hookline.a2a import A2AAgent
    print("imported")
except ImportError as exc:
    print(exc)
"""
    with_sdk = subprocess.run([sys.executable, "-c", code, "with"], capture_output=True, text=True, timeout=120)
    without = subprocess.run([sys.executable, "-c", code, "without"], capture_output=True, text=True, timeout=120)

    assert with_sdk.stdout.splitlines() == ["['/.well-known/agent-card.json', '/a2a']", "imported"], with_sdk.stderr
    assert without.stdout.splitlines()[0] == "[]", without.stderr
    assert "needs the A2A SDK: pip install 'hookline[a2a]'" in without.stdout.splitlines()[1]
