#!/usr/bin/env python3
"""The one benchmark command: hookline, the floor and every peer, alternated; writes BENCHMARKS.md.

    .venv/bin/python bench/run.py                 # full: 2 rounds, every framework (~25 min)
    .venv/bin/python bench/run.py --rounds 1      # one round
    .venv/bin/python bench/run.py --skip-peers    # hookline and the floor only (~3 min)
    .venv/bin/python bench/run.py --quick --out /tmp/x   # smoke sizes: does every adapter run?
    .venv/bin/python bench/run.py --report bench/results/latest.jsonl   # re-render from raw results
    .venv/bin/python bench/run.py --profile       # docs/perf/profile*.txt, memory.txt

Everything it needs is in this repository: the scenario (bench/SCENARIO.md), the harness
(bench/harness.py), hookline's adapter (bench/bench_hookline.py) and the floor's and peers'
(bench/peers/). The peers run in their own venv, built from bench/peers/requirements.txt by
bench/peers/setup.sh on first use. The work is split in three: measure.py runs the benchmarks,
compare.py turns records into medians, targets and feature costs, render.py writes the report.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from compare import HOUSE_TARGETS, TARGETS, evaluate_targets
from machine import machine_info
from measure import FRAMEWORKS, FULL, QUICK, ROOT, Config, Context, Framework, Session, ensure_peers_venv, log
from render import ScaleOut, load_scaleout, render, served

DEFAULT_SCALEOUT = ROOT / "bench" / "results" / "scaleout.json"
SERVED = ROOT / "bench" / "results" / "served.json"  # bench/served/run.py --json: the server's figures


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line (see the module's docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, help="rounds, each running every framework once per configuration"
                    " (default 2; --quick: 1)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test, not a measurement)")
    ap.add_argument("--skip-peers", action="store_true", help="hookline and the floor only")
    ap.add_argument("--only", default="", help="comma-separated frameworks: " + ",".join(f.key for f in FRAMEWORKS))
    ap.add_argument("--configs", default="", help="comma-separated configurations: " + ",".join(c.key for c in FULL))
    ap.add_argument("--out", type=Path, default=ROOT,
                    help="root to write into: OUT/BENCHMARKS.md, OUT/docs/perf/*.png, OUT/bench/results/")
    ap.add_argument("--peers-venv", type=Path, default=Path(os.environ.get(
        "PEERS_VENV", Path.home() / ".cache" / "hookline-peers")), help="the peers' venv (built when missing)")
    ap.add_argument("--tm-rounds", type=int, default=1, help="rounds that run the tracemalloc phase (default 1:"
                    " traced memory barely varies, and it is the peers' slowest phase)")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per benchmark process")
    ap.add_argument("--report", type=Path, nargs="+", help="only render the report from these JSONL files")
    ap.add_argument("--scaleout", type=Path, default=DEFAULT_SCALEOUT,
                    help="the scale-out load test's results (bench/scaleout/run.py --json ...)")
    ap.add_argument("--profile", action="store_true", help="write OUT/docs/perf/profile*.txt, memory.txt and exit")
    ap.add_argument("--profile-runs", type=int, default=2000)
    return ap.parse_args(argv)


def select(args: argparse.Namespace) -> tuple[list[Framework], list[Config]]:
    """The frameworks and configurations asked for; an unknown name stops here."""
    frameworks = [f for f in FRAMEWORKS if not (args.skip_peers and f.kind == "peer")]
    configs = QUICK if args.quick else FULL
    for option, known in (("only", {f.key for f in FRAMEWORKS}), ("configs", {c.key for c in FULL})):
        asked = set(filter(None, getattr(args, option).split(",")))
        if unknown := asked - known:
            raise SystemExit(f"--{option}: unknown {', '.join(sorted(unknown))}; expected: {', '.join(sorted(known))}")
    if args.only:
        frameworks = [f for f in frameworks if f.key in args.only.split(",")]
    if args.configs:
        configs = [c for c in configs if c.key in args.configs.split(",")]
    return frameworks, configs


def read_records(paths: list[Path]) -> list[dict[str, Any]]:
    """Every JSON line of `paths`."""
    return [json.loads(line) for p in paths for line in p.read_text().splitlines() if line.startswith("{")]


def measure(args: argparse.Namespace, out: Path, tmp: str, command: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run the benchmarks; write the raw results and their sidecar; return the records and the meta."""
    started = time.perf_counter()
    frameworks, configs = select(args)
    peers_python = ensure_peers_venv(args.peers_venv) if any(f.kind == "peer" for f in frameworks) else None
    results_dir = out / "bench" / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    results = results_dir / f"results_{dt.datetime.now():%Y%m%d_%H%M%S}.jsonl"
    machine = machine_info(sys.executable, peers_python, tmp)  # before: src/ may change meanwhile
    rounds = args.rounds or (1 if args.quick else 2)
    session = Session(frameworks, configs, rounds, Context(sys.executable, peers_python, tmp, args.timeout), results,
                      args.tm_rounds)
    records = session.run()
    shutil.copyfile(results, results_dir / "latest.jsonl")
    meta = {"command": command, "quick": args.quick, "rounds": rounds,
            "elapsed_min": round((time.perf_counter() - started) / 60, 1), "machine": machine}
    for path in (results, results_dir / "latest.jsonl"):
        path.with_suffix(".meta.json").write_text(json.dumps(meta) + "\n")
    return records, {**meta, "results": os.path.relpath(results_dir / "latest.jsonl", out)}


def report_only(paths: list[Path], tmp: str, command: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The records of `paths`, and the meta saved beside the first (or this machine's, when there is none)."""
    records = read_records(paths)
    sidecar = paths[0].with_suffix(".meta.json")
    saved = json.loads(sidecar.read_text()) if sidecar.exists() else {}
    meta = {"command": command, "quick": False, "rounds": max((r.get("round", 1) for r in records), default=1),
            "elapsed_min": 0.0, **saved, "results": str(paths[0])}
    meta.setdefault("machine", machine_info(sys.executable, None, tmp))
    return records, meta


def draw(records: list[dict[str, Any]], out: Path, scaleout_path: Path) -> tuple[dict[str, str], ScaleOut | None]:
    """The charts (none without matplotlib), and the scale-out results with theirs."""
    scaleout = load_scaleout(scaleout_path)
    try:
        import charts
    except ImportError as exc:
        log(f"no charts: {exc}")
        return {}, scaleout
    perf = out / "docs" / "perf"
    drawn = {title: os.path.relpath(p, out) for title, p in charts.draw_all(records, perf).items()}
    if scaleout is not None and (chart := charts.scaleout_chart(scaleout.results, perf / "scaleout.png")):
        scaleout = ScaleOut(scaleout.results, scaleout.meta, os.path.relpath(chart, out))
    return drawn, scaleout


def main(argv: list[str] | None = None) -> int:
    """Measure (or read) the records, then write BENCHMARKS.md and the charts."""
    args = parse_args(argv)
    out: Path = args.out.resolve()
    if args.profile:
        import profiling

        profiling.profile_all(out / "docs" / "perf", args.profile_runs)
        return 0
    command = " ".join(["bench/run.py", *(argv if argv is not None else sys.argv[1:])])
    with tempfile.TemporaryDirectory(prefix="hookline-bench-") as tmp:
        if args.report:
            records, meta = report_only(args.report, tmp, command)
        else:
            records, meta = measure(args, out, tmp, command)
    charts, scaleout = draw(records, out, args.scaleout)
    (out / "BENCHMARKS.md").write_text(render(records, meta, charts, scaleout, served(SERVED)))
    log(f"wrote {out / 'BENCHMARKS.md'}")
    for t in evaluate_targets(records, TARGETS + HOUSE_TARGETS):
        log(f"  {t['status']:12s} {t['target']}: {t['detail']} {t['margin']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
