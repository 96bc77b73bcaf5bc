"""The benchmarks must not rot: run them at tiny sizes (~15 s in all).

- `bench/bench_hookline.py` (the adapter for the shared harness) through every phase;
- `bench/run.py --quick --skip-peers` into a temporary folder (report, charts, raw JSONL);
- the report and the target checks on made-up figures that include peers.

They need the shared harness (`../shared/bench/peers/bench_common.py`, or `HOOKLINE_PEERS`).
"""

# ruff: noqa: RUF001

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PEERS = Path(os.environ.get("HOOKLINE_PEERS", ROOT.parent / "shared" / "bench" / "peers"))

needs_harness = pytest.mark.skipif(
    not (PEERS / "bench_common.py").exists(), reason=f"the shared harness is not at {PEERS}"
)


def _has_sqlite_store() -> bool:
    try:
        from hookline.sessions import SQLiteSessionStore  # noqa: F401
    except ImportError:
        return False
    return True


def _env() -> dict[str, str]:
    return {**os.environ, "HOOKLINE_PEERS": str(PEERS), "BENCH_TOOL": "sync"}


@pytest.mark.slow
@needs_harness
def test_adapter_runs_every_phase() -> None:
    phases = "seq,conc,tm" + (",seqdb" if _has_sqlite_store() else "")
    cmd = [
        sys.executable,
        "bench/bench_hookline.py",
        "--T",
        "2",
        "--runs",
        "3",
        "--warmup",
        "1",
        "--conc",
        "5",
        "--phases",
        phases,
    ]
    p = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    result = json.loads(p.stdout.strip().splitlines()[-1])
    assert not [k for k in result if k.endswith("_error")], p.stderr[-2000:]
    assert result["framework"] == "hookline"
    assert result["T"] == 2
    assert result["runs"] == 3
    assert result["run_us_median"] > 0
    assert result["conc_n"] == 5
    assert result["tracemalloc_per_run_kib"] > 0
    if "seqdb" in phases:
        assert result["db_runs"] == 50
        assert result["db_run_us_median"] > 0


@pytest.mark.slow
@needs_harness
def test_run_quick_writes_report(tmp_path: Path) -> None:
    own_report = ROOT / "BENCHMARKS.md"
    before = own_report.stat().st_mtime_ns if own_report.exists() else None
    cmd = [sys.executable, "bench/run.py", "--quick", "--skip-peers", "--out", str(tmp_path)]
    p = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stderr[-3000:]
    report = (tmp_path / "BENCHMARKS.md").read_text()
    for heading in ("## Machine", "## T=10, sync tool", "## History length", "## Targets"):
        assert heading in report
    assert "smoke-test sizes" in report
    assert "Errors" not in report, report
    records = [json.loads(line) for line in (tmp_path / "bench" / "results" / "latest.jsonl").read_text().splitlines()]
    seen = {(r["framework"], r["config"]) for r in records if "per_turn_us" in r}
    configs = {"t10", "t10-async", "t3-sleep", "t50", "t200"}
    assert seen == {(fw, c) for fw in ("hookline", "baseline-loop") for c in configs}
    sleep = next(r for r in records if r["framework"] == "hookline" and r["config"] == "t3-sleep")
    assert sleep["tool"] == "sleep"
    assert sleep["run_us_median"] < 110_000, "the two sleeping calls of a turn should overlap"
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "docs" / "perf" / "per_turn_overhead.png").stat().st_size > 1000
        assert (tmp_path / "docs" / "perf" / "per_turn_vs_history.png").stat().st_size > 1000
    assert (own_report.stat().st_mtime_ns if own_report.exists() else None) == before, "--out was not honoured"


def _load_run_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hookline_bench_run", ROOT / "bench" / "run.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _record(fw: str, config: str, rnd: int, **figures: Any) -> dict[str, Any]:
    T = {"t10": 10, "t10-async": 10, "t3-sleep": 3, "t50": 50, "t200": 200}[config]
    return {"framework": fw, "config": config, "round": rnd, "T": T, "version": "1", "runs": 300, **figures}


def test_report_and_targets_on_made_up_figures() -> None:
    run = _load_run_module()
    records = []
    for rnd in (1, 2):
        jitter = 1 + 0.02 * rnd
        t10 = {
            "hookline": dict(
                per_turn_us=40 * jitter,
                run_us_median=440,
                conc_wall_s=0.60,
                conc_cpu_us_per_turn=80,
                rss_peak_growth_mib=15,
                tracemalloc_per_run_kib=30,
                db_run_us_median=5000,
            ),
            "baseline-loop": dict(
                per_turn_us=20,
                run_us_median=220,
                conc_wall_s=0.55,
                conc_cpu_us_per_turn=40,
                rss_peak_growth_mib=10,
                tracemalloc_per_run_kib=20,
                db_run_us_median=18000,
            ),
            "haystack": dict(
                per_turn_us=650,
                run_us_median=7150,
                conc_wall_s=4.6,
                conc_cpu_us_per_turn=700,
                rss_peak_growth_mib=22,
                tracemalloc_per_run_kib=44,
            ),
            "openai-agents": dict(
                per_turn_us=2400,
                run_us_median=26000,
                conc_wall_s=32,
                conc_cpu_us_per_turn=5500,
                rss_peak_growth_mib=73,
                tracemalloc_per_run_kib=140,
                db_run_us_median=110000,
            ),
        }
        for fw, figures in t10.items():
            records.append(_record(fw, "t10", rnd, **figures))
            records.append(_record(fw, "t50", rnd, per_turn_us=figures["per_turn_us"] * 1.1))
            records.append(_record(fw, "t200", rnd, per_turn_us=figures["per_turn_us"] * 1.3))
            records.append(_record(fw, "t3-sleep", rnd, per_turn_us=16000, run_us_median=64000))
    targets = {t["target"]: t for t in run.evaluate_targets(records)}
    assert len(targets) == len(run.TARGETS)
    assert targets["per-turn overhead ≤ 1/5 of the fastest peer's (T=10)"]["status"] == "met"  # 41 <= 650/5
    assert targets["per-turn overhead ≤ 3× the floor's (T=10)"]["status"] == "met"
    assert targets["per-turn cost at T=200 within 1.2× of T=10"]["status"] == "missed"  # 1.3
    assert targets["500-concurrent wall time ≤ 1.2× the floor's"]["status"] == "met"
    assert targets["CPU per turn (500 concurrent) ≤ 1/5 of the fastest peer's"]["status"] == "met"  # 80 <= 140
    assert targets["SQLite-persisted run ≥ 5× faster than the fastest peer's session store"]["status"] == "met"
    assert targets["SQLite-persisted run no slower than the floor's sqlite3 run"]["rounds"] == "2/2"
    meta = {
        "command": "bench/run.py",
        "rounds": 2,
        "elapsed_min": 1.0,
        "results": "x.jsonl",
        "quick": False,
        "machine": {
            "cpu": "cpu",
            "cores": "2",
            "memory": "1 GiB",
            "kernel": "k",
            "python": "CPython 3.11",
            "date": "today",
            "tmp_fs": "ext4",
        },
    }
    report = run.render(records, meta, {})
    assert "haystack" in report
    assert "| **hookline** |" in report
    assert "fastest peer haystack" in report
    assert "❌ missed" in report
    assert "✅ met" in report
