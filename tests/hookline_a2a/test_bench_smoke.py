"""The A2A cost benchmark runs end to end (`--small`), and says what it measured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_a2a_small(tmp_path: Path) -> None:
    out = tmp_path / "a2a.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_a2a.py"), "--small", "--json", str(out)],
                          capture_output=True, text=True, timeout=180, cwd=ROOT)

    assert done.returncode == 0, done.stderr
    assert "A2A adds" in done.stdout
    figures = json.loads(out.read_text())
    assert figures["a2a_20"]["frames"] == 20 + 6 + 3  # the task, a working update per line, the answer, the end
    spent = [figures[f"{route}_{lines}"]["cpu_ms_per_run"] for route in ("sse", "a2a") for lines in (0, 20)]
    # /proc counts CPU in 10 ms ticks: five runs of one route may spend less than one; all four routes' runs do not
    assert min(spent) >= 0
    assert sum(spent) > 0
