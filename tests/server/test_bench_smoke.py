"""The server benchmark runs end to end (`--small`), and its checks pass."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_server_small(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_server.py"), "--small", "--json", str(out)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "added latency" in done.stdout
    assert "all in order" in done.stdout
    figures = json.loads(out.read_text())
    assert figures["latency"]["deltas"] == 30
    assert figures["fan_in"]["clients"] == 10
    assert figures["fan_in"]["events"] == 150
    assert figures["fan_out"]["readers"] == 10
    assert figures["fan_in"]["rss_mib"] > 0
