"""The benchmarks must not rot: run them at tiny sizes, and render reports from known records.

- `bench/bench_hookline.py` (hookline's adapter, through bench/harness.py) in every phase;
- every adapter of bench/peers: the floor always, the peers when their venv is built
  (`bench/peers/setup.sh`; `PEERS_VENV`, default ~/.cache/hookline-peers);
- `bench/run.py --quick --skip-peers` into a temporary folder (report, charts, raw JSONL);
- `bench/run.py --report` on the committed results, and the report on made-up figures
  (peers, features, scale-out).
"""

# ruff: noqa: RUF001

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import compare  # noqa: E402
import harness  # noqa: E402
import measure  # noqa: E402
import render  # noqa: E402

PEERS_PYTHON = Path(os.environ.get("PEERS_VENV", Path.home() / ".cache" / "hookline-peers")) / "bin" / "python"
SECTIONS = ("## Machine", "## Headline", "## T=10, sync tool", "### Ratios", "## History length",
            "## What each feature costs", "## Scale-out", "## Targets", "## Reproduce")
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def _harness(python: str | Path, *args: str, features: str = "") -> dict[str, Any]:
    env = {**os.environ, "BENCH_FEATURES": features}
    done = subprocess.run([str(python), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    record: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return record


@pytest.mark.slow
def test_hookline_adapter_runs_every_phase() -> None:
    sizes = ["--T", "2", "--runs", "3", "--warmup", "1", "--conc", "5", "--db-runs", "3", "--db-warmup", "1"]
    result = _harness(sys.executable, "bench/bench_hookline.py", *sizes)
    assert not [k for k in result if k.endswith("_error")], result
    assert (result["framework"], result["T"], result["tool"], result["runs"]) == ("hookline", 2, "sync", 3)
    assert result["run_us_median"] > 0
    assert result["per_turn_us"] == pytest.approx(result["run_us_median"] / 3, abs=0.1)
    assert result["conc_n"] == 5
    assert result["conc_wall_s"] >= result["conc_ideal_s"] == 0.15
    assert result["tracemalloc_per_run_kib"] > 0
    assert result["db_runs"] == 3
    assert result["db_run_us_median"] > 0


def test_an_unknown_feature_is_named() -> None:
    result = _harness(sys.executable, "bench/harness.py", "hookline", "--phases", "seq", features="hooks,bogus")
    assert "per_turn_us" not in result
    assert "unknown BENCH_FEATURES bogus" in result["seq_error"]
    assert "tracing" in result["seq_error"]


@pytest.mark.slow
@pytest.mark.parametrize("adapter", harness.PEERS)
def test_peer_adapter_plays_the_scenario(adapter: str) -> None:
    if adapter == "floor":
        python: str | Path = sys.executable
    elif PEERS_PYTHON.exists():
        python = PEERS_PYTHON
    else:
        pytest.skip(f"the peers' venv is not built: bench/peers/setup.sh (expected {PEERS_PYTHON})")
    args = ["bench/harness.py", adapter, "--T", "2", "--tool", "async", "--runs", "2", "--warmup", "1",
            "--phases", "seq,seqdb", "--db-runs", "2", "--db-warmup", "1"]
    result = _harness(python, *args)
    assert not [k for k in result if k.endswith("_error")], result
    assert result["framework"] == next(f.key for f in measure.FRAMEWORKS if f.adapter == adapter)
    assert result["tool"] == "async"
    assert result["runs"] == 2
    assert result["run_us_median"] > 0
    persists = adapter in ("floor", "openai_agents", "google_adk")
    assert (result.get("db_runs") == 2) is persists


@pytest.mark.slow
def test_run_quick_writes_report(tmp_path: Path) -> None:
    own_report = ROOT / "BENCHMARKS.md"
    before = own_report.stat().st_mtime_ns
    cmd = [sys.executable, "bench/run.py", "--quick", "--skip-peers", "--out", str(tmp_path),
           "--scaleout", str(tmp_path / "none.json")]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = (tmp_path / "BENCHMARKS.md").read_text()
    for heading in SECTIONS:
        assert heading in report
    assert "smoke-test sizes" in report
    assert "## Errors" not in report, report
    assert "Not measured in this report" in report
    records = [json.loads(line) for line in (tmp_path / "bench" / "results" / "latest.jsonl").read_text().splitlines()]
    measured = {(r["framework"], r["config"]) for r in records if "per_turn_us" in r or "db_per_turn_us" in r}
    plain = {(fw, c) for fw in ("hookline", "baseline-loop") for c in ("t10", "t10-async", "t3-sleep", "t50", "t200")}
    assert measured == plain | {("hookline", key) for key, _, _ in measure.FEATURES}
    sleep = next(r for r in records if r["framework"] == "hookline" and r["config"] == "t3-sleep")
    assert sleep["tool"] == "sleep"
    assert sleep["run_us_median"] < 110_000, "the two sleeping calls of a turn should overlap"
    assert next(r for r in records if r["config"] == "f-tracing")["features"] == "tracing"
    if HAS_MATPLOTLIB:
        assert (tmp_path / "docs" / "perf" / "per_turn_overhead.png").stat().st_size > 1000
        assert (tmp_path / "docs" / "perf" / "per_turn_vs_history.png").stat().st_size > 1000
    assert own_report.stat().st_mtime_ns == before, "--out was not honoured"


def test_an_unknown_framework_is_named() -> None:
    done = subprocess.run([sys.executable, "bench/run.py", "--only", "hookline,nope"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0
    assert "--only: unknown nope; expected:" in done.stderr
    assert "baseline-loop" in done.stderr


@pytest.mark.slow
def test_report_from_the_committed_results_keeps_every_section(tmp_path: Path) -> None:
    cmd = [sys.executable, "bench/run.py", "--report", "bench/results/latest.jsonl", "--out", str(tmp_path)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    report = (tmp_path / "BENCHMARKS.md").read_text()
    for heading in SECTIONS:
        assert heading in report
    for fw in measure.FRAMEWORKS:
        assert f"| {fw.label} |" in report or f"| **{fw.label}** |" in report
    assert "Raw results: `bench/results/latest.jsonl`" in report


def _record(fw: str, config: str, rnd: int, **figures: Any) -> dict[str, Any]:
    T = {"t10": 10, "t10-async": 10, "t3-sleep": 3, "t50": 50, "t200": 200}.get(config, 10)
    return {"framework": fw, "config": config, "round": rnd, "T": T, "version": "1", "runs": 300, **figures}


T10 = {
    "hookline": dict(per_turn_us=40, run_us_median=440, conc_wall_s=0.60, conc_cpu_us_per_turn=80,
                     rss_peak_growth_mib=15, tracemalloc_per_run_kib=30, db_run_us_median=5000, db_per_turn_us=455),
    "baseline-loop": dict(per_turn_us=20, run_us_median=220, conc_wall_s=0.55, conc_cpu_us_per_turn=40,
                          rss_peak_growth_mib=10, tracemalloc_per_run_kib=20, db_run_us_median=18000),
    "haystack": dict(per_turn_us=650, run_us_median=7150, conc_wall_s=4.6, conc_cpu_us_per_turn=700,
                     rss_peak_growth_mib=22, tracemalloc_per_run_kib=44),
    "openai-agents": dict(per_turn_us=2400, run_us_median=26000, conc_wall_s=32, conc_cpu_us_per_turn=5500,
                          rss_peak_growth_mib=73, tracemalloc_per_run_kib=140, db_run_us_median=110000),
}


def _made_up_records() -> list[dict[str, Any]]:
    records = []
    for rnd in (1, 2):
        jitter = 1 + 0.02 * rnd
        for fw, figures in T10.items():
            records.append(_record(fw, "t10", rnd, **{**figures, "per_turn_us": figures["per_turn_us"] * jitter}))
            records.append(_record(fw, "t50", rnd, per_turn_us=figures["per_turn_us"] * 1.1))
            records.append(_record(fw, "t200", rnd, per_turn_us=figures["per_turn_us"] * 1.3))
            records.append(_record(fw, "t3-sleep", rnd, per_turn_us=16000, run_us_median=64000))
        records.append(_record("hookline", "f-hooks", rnd, per_turn_us=50))
        records.append(_record("hookline", "f-stream", rnd, per_turn_us=100 + rnd))
        records.append(_record("hookline", "f-nostatus", rnd, db_per_turn_us=400))
        records.append(_record("hookline", "f-sqlite-full", rnd, db_run_us_median=9000, db_per_turn_us=818))
        records.append(_record("hookline", "t10-async", rnd, per_turn_us=45))
        records.append(_record("baseline-loop", "t10-async", rnd, per_turn_us=20))
    return records


MACHINE = {"cpu": "cpu", "cores": "2", "memory": "1 GiB", "kernel": "k", "python": "CPython 3.11", "date": "today",
           "tmp_fs": "ext4"}
META = {"command": "bench/run.py", "rounds": 2, "elapsed_min": 1.0, "results": "x.jsonl", "quick": False,
        "machine": MACHINE}


def test_targets_on_made_up_figures() -> None:
    targets = {t["target"]: t for t in compare.evaluate_targets(_made_up_records())}
    assert len(targets) == len(compare.TARGETS)
    assert targets["per-turn overhead ≤ 1/5 of the fastest peer's (T=10)"]["status"] == "met"  # 41 <= 650/5
    assert targets["per-turn overhead ≤ 3× the floor's (T=10)"]["status"] == "met"
    assert targets["per-turn cost at T=200 within 1.2× of T=10"]["status"] == "missed"  # 1.3
    assert targets["500-concurrent wall time ≤ 1.2× the floor's"]["status"] == "met"
    assert targets["CPU per turn (500 concurrent) ≤ 1/5 of the fastest peer's"]["status"] == "met"  # 80 <= 140
    assert targets["SQLite-persisted run ≥ 5× faster than the fastest peer's session store"]["status"] == "met"
    assert targets["SQLite-persisted run no slower than the floor's sqlite3 run"]["rounds"] == "2/2"
    assert targets["memory per concurrent run ≤ 2× the floor's (tracemalloc)"]["margin"] == "1.33× headroom"


def test_the_later_issues_targets_on_made_up_figures() -> None:
    targets = {t["target"]: t for t in compare.evaluate_targets(_made_up_records(), compare.HOUSE_TARGETS)}
    assert len(targets) == len(compare.HOUSE_TARGETS)
    assert targets["per-turn overhead ≤ 1.5× the floor's (T=10)"]["detail"] == "41.2 µs vs 1.5 × floor 20.6 µs"
    assert targets["per-turn overhead ≤ 1.5× the floor's (T=10, async tool)"]["status"] == "missed"  # 45 > 30
    growth = targets["history growth: cost over the floor at T=200 ≤ 1.15× that at T=10"]
    assert growth["detail"] == "26.0 µs over the floor at T=200 vs 20.6 at T=10"  # 52 - 26, 41.2 - 20.6
    assert growth["status"] == "missed"
    assert targets["memory per concurrent run ≤ 1.5× the floor's (tracemalloc)"]["status"] == "met"  # 30 <= 30
    full = targets["SQLite-persisted run ≥ 5× faster than the fastest peer's session store (synchronous=FULL)"]
    assert full["detail"] == "9,000 µs vs openai-agents 110,000 µs / 5"


def test_the_live_stream_target_on_made_up_figures() -> None:
    (target,) = compare.evaluate_targets(_made_up_records(), compare.LIVE_TARGETS)
    assert target["detail"] == "102 µs vs 2 × plain 41.2 µs"  # the medians of 101, 102 (rounded) and of the t10 runs
    assert target["status"] == "missed"
    assert target["rounds"] == "0/2"


def test_feature_costs_on_made_up_figures() -> None:
    rows = {r["feature"]: r for r in compare.feature_costs(compare.Agg(_made_up_records()))}
    assert len(rows) == len(compare.FEATURE_ROWS)
    hooks = rows["hooks: one no-op hook at each of the 7 points"]
    assert hooks["off"] == pytest.approx((41.2, 40.8, 41.6))
    assert hooks["cost"] == pytest.approx(50 - 41.2)
    stored = rows["status events, stored in the durable session"]
    assert stored["cost"] == pytest.approx(55)
    assert rows["tracing: OpenTelemetry SDK, in-memory exporter"]["on"] is None
    assert rows["tracing: OpenTelemetry SDK, in-memory exporter"]["cost"] is None


SCALEOUT = [
    {"processes": n, "runs": 220, "seconds": 3.0, "runs_per_s": rate, "run_events": 3740,
     "saturated": {"events": 3000, "p50_ms": 20.0 * n, "p99_ms": 90.0 * n, "max_ms": 300.0},
     "light": {"events": 300, "p50_ms": 3.0, "p99_ms": 12.0, "max_ms": 20.0},
     "deltas_light": {"events": 100, "p50_ms": 1.5, "p99_ms": 9.0, "max_ms": 9.5}, "machine_cores": 1.8,
     "server_cores": 0.7, "server_ms_per_run": 10.0 + n, "machine_ms_per_run": 25.0, "problems": problems,
     "problem_count": len(problems)}
    for n, rate, problems in ((1, 60.0, []), (2, 75.0, []), (4, 66.0, ["s-1: seqs [1, 3]"]))
]


def test_report_on_made_up_figures(tmp_path: Path) -> None:
    path = tmp_path / "scaleout.json"
    path.write_text(json.dumps({"meta": {"runs": 200, "concurrency": 32, "date": "today"}, "results": SCALEOUT}))
    report = render.render(_made_up_records(), META, {}, render.load_scaleout(path))
    for heading in SECTIONS:
        assert heading in report
    assert "| **hookline** |" in report
    assert "fastest peer haystack" in report
    assert "❌ missed" in report
    assert "✅ met" in report
    assert "| hooks: one no-op hook at each of the 7 points | 41.2 [40.8–41.6] | 50.0 | 8.80 | 1.21× |" in report
    assert "200 runs per N at 32 in flight (saturated)" in report
    row = ("| 2 | 75.0 | 1.25× | 1.8 | 12.0 ms | 25.0 ms | 40.0 / 180.0 ms | 3.0 / 12.0 ms | 1.5 / 9.0 ms |"
           " 220 runs, all passed |")
    assert row in report
    assert "| **1 problems** |" in report


def test_scaleout_results_as_the_load_test_writes_them(tmp_path: Path) -> None:
    path = tmp_path / "scaleout.json"
    path.write_text(json.dumps(SCALEOUT))  # bench/scaleout/run.py --json: the bare list
    results = render.load_scaleout(path)
    assert results is not None
    assert results.meta == {}
    section = "\n".join(render.scaleout(results))
    assert "Written by `.venv/bin/python bench/scaleout/run.py --json bench/results/scaleout.json`." in section
    assert section.count("\n| ") == 4  # header and one row per N
    assert render.load_scaleout(tmp_path / "missing.json") is None
    if HAS_MATPLOTLIB:
        import charts

        chart = charts.scaleout_chart(results.results, tmp_path / "scaleout.png")
        assert chart is not None
        assert chart.stat().st_size > 1000
