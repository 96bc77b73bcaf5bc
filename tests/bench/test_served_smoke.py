"""`bench/served/run.py` must not rot: one round at tiny sizes on `hookline serve --db :memory:`,
and on the peers' servers when their venv is built (`~/.cache/hookline-served-peers`); nor
must `bench/served/viewer.py`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVED = ROOT / "bench" / "served" / "run.py"
VIEWER = ROOT / "bench" / "served" / "viewer.py"
PEERS = Path.home() / ".cache" / "hookline-served-peers" / "bin" / "adk"
TINY = ["--rounds", "1", "--latency-runs", "3", "--throughput-runs", "6", "--concurrency", "3", "--warmup", "2"]


def _served(tmp_path: Path, *args: str) -> dict[str, object]:
    out = tmp_path / "served.json"
    done = subprocess.run([sys.executable, str(SERVED), *TINY, *args, "--json", str(out), "--markdown",
                           str(tmp_path / "served.md")], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| server |" in done.stdout
    assert (tmp_path / "served.md").read_text().startswith("## Served")
    figures: dict[str, object] = json.loads(out.read_text())
    return figures


def test_the_served_benchmark_measures_hookline_serve(tmp_path: Path) -> None:
    figures = _served(tmp_path, "--only", "hookline-memory")
    (result,) = figures["results"]  # type: ignore[misc]
    assert result["errors"] == 0
    assert result["runs_per_s"] > 0
    assert result["json_p50_ms"] > 0


@pytest.mark.skipif(not PEERS.exists(), reason="the peers' servers' venv is not built (bench/peers/setup.sh)")
def test_the_served_benchmark_runs_the_peers_servers(tmp_path: Path) -> None:
    figures = _served(tmp_path, "--peers", "--only", "adk-memory")
    (result,) = figures["results"]  # type: ignore[misc]
    assert result["runs_per_s"] > 0


def test_the_viewer_benchmark_measures_the_streams_of_hookline_serve() -> None:
    done = subprocess.run([sys.executable, str(VIEWER), "--only", "hookline-memory", "--requests", "20"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "hookline-memory: " in done.stdout
    assert "µs of server CPU per viewer stream (20 streams)" in done.stdout
