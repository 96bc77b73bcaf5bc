"""The multi-process load test runs end to end on a few runs, and its checks pass."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_scaleout_bench_runs_and_checks_every_event(tmp_path: Path) -> None:
    out, temp = tmp_path / "scaleout.json", tmp_path / "temp"
    temp.mkdir()
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "scaleout" / "run.py"), "--processes", "2", "--runs", "12",
         "--light-runs", "4", "--concurrency", "6", "--json", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env={**os.environ, "TMPDIR": str(temp)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not list(temp.iterdir()), "the servers' directory is left behind"
    written = json.loads(out.read_text())
    assert written["meta"]["runs"] == 12
    assert written["meta"]["command"].startswith("bench/scaleout/run.py --processes 2")
    (figures,) = written["results"]
    assert figures["processes"] == 2
    assert figures["runs"] == 16
    assert figures["problem_count"] == 0
    assert figures["run_events"] == 16 * 17, "each run streamed its 17 stored events (markers aside)"
    assert figures["saturated"]["events"] > 0, "followers in the other process saw events live"
    assert "| 2 |" in done.stdout
