"""The served benchmark: agent servers as their users run them, measured over HTTP side by side.

Run from the project root:

    .venv/bin/python bench/served/run.py                          # hookline's three stores
    .venv/bin/python bench/served/run.py --peers                  # and the peers' servers
    .venv/bin/python bench/served/run.py --quick --only hookline-sqlite

The workload is the add-loop scenario at T = 2 (`bench/SCENARIO.md`): a run is three model
calls, the first two asking for two `add` calls each; each run in a session of its own,
made just before it. For each server (`targets.py`), in `--rounds` rounds, targets rotated:

1. **latency**: one client on one kept-alive connection, runs one after another, the model
   answering at once: the time of each run's request, JSON (`--latency-runs`) then SSE (as
   many); and the server's CPU per run over them (its whole process tree, session creation
   included);
2. **throughput**: `--concurrency` clients (one connection each) with the model waiting
   `--delay` s a call, `--throughput-runs` runs in all: runs/s, the server's CPU per run,
   the machine's CPU per run (everything busy: the server, its database, the client).

Every run is checked (its answer is "done" after its tool calls); a run that fails or is not
checked counts as an error and is left out of the latencies. The figures go to stdout as a
markdown table (`report.py`), and with `--json` to a file: `bench/results/served.json` is the
'Served' section of BENCHMARKS.md (`bench/render.py` reads it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from datetime import datetime
from itertools import count
from pathlib import Path
from statistics import median
from typing import Any

from client import Connection, machine_cpu_seconds, percentile, tree_cpu_seconds
from report import section, table
from targets import Server, Target, hookline_targets

HERE = Path(__file__).resolve().parent


async def timed_runs(target: Target, url: str, runs: int, *, sse: bool) -> tuple[list[float], list[str]]:
    """`runs` runs one after another on one connection: each run's request time (ms), and the errors."""
    conn, times, errors = Connection(url), [], []
    try:
        for _ in range(runs):
            try:
                session_id = await target.new_session(conn)
                started = time.perf_counter()
                await target.run(conn, session_id, sse=sse)
                times.append((time.perf_counter() - started) * 1000)
            except Exception as exc:  # a failing server's answer is an error to count, whatever it is
                errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        conn.close()
    return times, errors


async def concurrent_runs(target: Target, url: str, runs: int, concurrency: int) -> tuple[float, list[str]]:
    """`runs` runs by `concurrency` clients at once, each on its own connection: the wall time and the errors."""
    numbers, errors = count(), []

    async def client() -> None:
        conn = Connection(url)
        try:
            while next(numbers) < runs:
                try:
                    await target.run(conn, await target.new_session(conn), sse=False)
                except Exception as exc:  # a failing server's answer is an error to count, whatever it is
                    errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            conn.close()

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    return time.perf_counter() - started, errors


def measure_latency(target: Target, server: Server, args: argparse.Namespace) -> dict[str, Any]:
    """The latency phase on a started server (its model answering at once)."""
    asyncio.run(timed_runs(target, server.url, args.warmup, sse=False))
    before = tree_cpu_seconds(server.process.pid)
    json_ms, json_errors = asyncio.run(timed_runs(target, server.url, args.latency_runs, sse=False))
    sse_ms, sse_errors = asyncio.run(timed_runs(target, server.url, args.latency_runs, sse=True))
    cpu = tree_cpu_seconds(server.process.pid) - before
    return {
        "json_p50_ms": percentile(json_ms, 50), "json_p99_ms": percentile(json_ms, 99),
        "sse_p50_ms": percentile(sse_ms, 50), "sse_p99_ms": percentile(sse_ms, 99),
        "seq_cpu_ms_per_run": cpu / (2 * args.latency_runs) * 1000,
        "latency_errors": len(json_errors) + len(sse_errors), "latency_error_samples": (json_errors + sse_errors)[:3],
    }


def measure_throughput(target: Target, server: Server, args: argparse.Namespace) -> dict[str, Any]:
    """The throughput phase on a started server (its model waiting `--delay` s a call)."""
    asyncio.run(concurrent_runs(target, server.url, args.warmup, min(args.warmup, args.concurrency)))
    before_tree, before_machine = tree_cpu_seconds(server.process.pid), machine_cpu_seconds()
    seconds, errors = asyncio.run(concurrent_runs(target, server.url, args.throughput_runs, args.concurrency))
    tree, machine = tree_cpu_seconds(server.process.pid) - before_tree, machine_cpu_seconds() - before_machine
    done = args.throughput_runs - len(errors)
    return {
        "runs_per_s": done / seconds, "wall_s": seconds,
        "cpu_ms_per_run": tree / max(done, 1) * 1000, "machine_cpu_ms_per_run": machine / max(done, 1) * 1000,
        "throughput_errors": len(errors), "throughput_error_samples": errors[:3],
    }


def measure(target: Target, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """One round of one target: the latency phase on one server, the throughput phase on another."""
    figures: dict[str, Any] = {"target": target.name, "server": target.server, "version": target.version()}
    server = target.start(0.0, workdir)
    try:
        figures |= measure_latency(target, server, args)
    finally:
        server.stop()
    server = target.start(args.delay, workdir)
    try:
        figures |= measure_throughput(target, server, args)
    finally:
        server.stop()
    return figures


_FIGURES = ("json_p50_ms", "json_p99_ms", "sse_p50_ms", "sse_p99_ms", "seq_cpu_ms_per_run", "runs_per_s",
            "cpu_ms_per_run", "machine_cpu_ms_per_run")


def summarise(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of each figure over a target's rounds, the errors summed, and every round's figures."""
    first = rounds[0]
    summary = {key: first[key] for key in ("target", "server", "version")}
    summary |= {key: round(median(r[key] for r in rounds), 2) for key in _FIGURES}
    summary["errors"] = sum(r["latency_errors"] + r["throughput_errors"] for r in rounds)
    samples = [s for r in rounds for s in r["latency_error_samples"] + r["throughput_error_samples"]]
    return summary | {"error_samples": samples[:3], "rounds": rounds}


def targets(args: argparse.Namespace) -> list[Target]:
    """The targets to measure: hookline's, the peers' with `--peers`, narrowed by `--only`."""
    chosen: list[Target] = hookline_targets()
    if args.peers:
        from peers import peer_targets

        chosen += peer_targets(args.peers_venv, args.concurrency)
    if args.only:
        names = set(args.only.split(","))
        chosen = [t for t in chosen if t.name in names]
        if missing := names - {t.name for t in chosen}:
            raise SystemExit(f"unknown target(s) {', '.join(sorted(missing))}")
    return chosen


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peers", action="store_true", help="also measure the peers' servers (their venv)")
    parser.add_argument("--peers-venv", type=Path, help="their venv (default: ~/.cache/hookline-served-peers)")
    parser.add_argument("--only", help="comma-separated target names, e.g. hookline-sqlite,adk-sqlite")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-runs", type=int, default=200)
    parser.add_argument("--throughput-runs", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds a model call takes in the throughput phase")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="smoke sizes: 1 round, 20 + 100 runs")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--markdown", type=Path, help="also write the table, as a section of its own, to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.latency_runs, args.throughput_runs, args.warmup = 1, 20, 100, 5
    return args


def main(argv: list[str] | None = None) -> int:
    """Measure every target in rotated rounds; print the table; write the JSON."""
    args = parse_args(argv)
    chosen = targets(args)
    meta = {"date": datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"), "cpus": os.cpu_count(),
            "command": " ".join(["bench/served/run.py", *(sys.argv[1:] if argv is None else argv)]),
            "rounds": args.rounds, "latency_runs": args.latency_runs, "throughput_runs": args.throughput_runs,
            "concurrency": args.concurrency, "delay_s": args.delay, "load1_start": round(os.getloadavg()[0], 2)}
    by_target: dict[str, list[dict[str, Any]]] = {t.name: [] for t in chosen}
    with tempfile.TemporaryDirectory(prefix="hookline-served-") as workdir:
        for number in range(args.rounds):
            for target in chosen[number % len(chosen):] + chosen[:number % len(chosen)]:
                figures = measure(target, args, Path(workdir))
                print(json.dumps(figures), file=sys.stderr, flush=True)
                by_target[target.name].append(figures)
    meta["load1_end"] = round(os.getloadavg()[0], 2)
    results = [summarise(rounds) for rounds in by_target.values()]
    print(table(results, meta))
    if args.markdown:
        args.markdown.write_text(section(results, meta))
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    return 1 if any(r["errors"] for r in results if r["target"].startswith("hookline")) else 0


if __name__ == "__main__":
    sys.exit(main())
