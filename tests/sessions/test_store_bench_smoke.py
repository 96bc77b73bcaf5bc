"""The store benchmark still runs: bench/bench_store.py --small, as a separate process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).parents[2] / "bench" / "bench_store.py"


def test_bench_store_small_run_prints_its_table(postgres_server: str) -> None:
    done = subprocess.run(
        [sys.executable, "-W", "error", str(BENCH), "--small", "--postgres", postgres_server],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "| store | operation | log events | returned | p50 ms | p99 ms |"
    rows = [line.split(" | ") for line in lines[2:]]
    assert [(r[0].strip("| "), r[1]) for r in rows if r[1] == "append_event"] == [
        ("sqlite", "append_event"),
        ("postgres", "append_event"),
    ]
    prompt_sizes = [r[3] for r in rows if r[1] == "events(view='prompt')"]
    assert prompt_sizes == ["100", "1,000", "100"] * 2
    assert all(float(r[4]) > 0 for r in rows)
