"""The process side: programs that never close their toolsets, and what importing hookline loads."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.waiting import DEADLINE

from .harness import alive, server_pid

PROGRAM = Path(__file__).with_name("never_closed.py")
PROMPT_EXIT = 15.0
"""Seconds a finished program may take to exit, interpreter start included (its server stops in well under 1 s)."""


@pytest.mark.parametrize("mode", ["done", "inflight", "sync"])
def test_a_program_that_never_closes_its_toolset_exits_and_leaves_no_server(tmp_path: Path, mode: str) -> None:
    started = time.monotonic()
    finished = subprocess.run([sys.executable, str(PROGRAM), str(tmp_path), mode], capture_output=True, text=True,
                              timeout=DEADLINE, check=False)
    took = time.monotonic() - started
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.strip() == "3"
    assert took < PROMPT_EXIT, f"the program took {took:.1f} s to exit"
    assert not alive(server_pid(tmp_path)), "the MCP server outlived the program"
    for noise in ("Traceback", "cancel scope", "was destroyed but it is pending", "Exception ignored"):
        assert noise not in finished.stderr, finished.stderr


@pytest.mark.parametrize("module", ["hookline", "hookline.mcp", "hookline.toolsets"])
def test_importing_hookline_does_not_load_the_mcp_sdk(module: str) -> None:
    check = (f"import sys, {module}; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))")
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=DEADLINE, check=True)
    assert out.stdout.strip() == "[]"


def test_the_sdk_loads_when_mcp_toolset_is_used() -> None:
    check = "import sys; from hookline.mcp import MCPToolset; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=DEADLINE, check=True)
    assert out.stdout.strip() == "True"
