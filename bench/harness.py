#!/usr/bin/env python3
"""The timing harness of the add-loop benchmark: one adapter, its phases, one JSON line on stdout.

    python bench/harness.py ADAPTER [--T 10] [--tool sync|async|sleep] [--phases seq,conc,tm,seqdb]
                                    [--runs 300] [--warmup 30] [--conc 500] [--db-runs 50] [--db-warmup 5]

ADAPTER is `hookline` (bench_hookline.py) or a module of bench/peers (`floor`, `pydantic_ai`,
`openai_agents`, `haystack`, `google_adk`, `langgraph`, `langchain`). Each phase runs in a
fresh process, so that the memory one phase leaves behind weighs on no other's figures:

- `seq`: `warmup` runs, then `runs` runs one after another, each timed with `perf_counter_ns`;
  per-turn overhead = median run time / (T + 1).
- `conc`: 3 warm-up runs and a `gc.collect()`, then `conc` runs gathered at once while the model
  sleeps 50 ms a call: wall time against the ideal (T + 1) x 50 ms, CPU time, and the growth of
  the peak RSS (VmHWM, reset through /proc/self/clear_refs just before).
- `tm`: the same gather under tracemalloc (started after the warm-up): the traced peak's growth.
- `seqdb`: `seq` with the framework's own SQLite session store on a file, a fresh session per run
  (adapters with `PERSISTS = True` only).

An adapter module defines `NAME` (the framework's key in the results), `PERSISTS`,
`version() -> str` and `async build(setup: Setup) -> Runner`. The adapter object is built once
per phase and never timed. Standard library only: the peers' venv runs this file too.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from scenario import MODEL_SLEEP_S, TOOL_MODES, make_tool

PEERS = ("floor", "pydantic_ai", "openai_agents", "haystack", "google_adk", "langgraph", "langchain")
ADAPTERS = {"hookline": "bench_hookline", **{name: f"peers.{name}" for name in PEERS}}
PHASES = ("seq", "conc", "tm", "seqdb")


@dataclass(frozen=True)
class Setup:
    """What an adapter builds its agent for (one phase)."""

    T: int
    """Tool turns per run: T + 1 model calls, 2T tool calls."""
    tool: Callable[..., Any]
    """The `add` tool to register, in the variant asked for."""
    model_sleep_s: float = 0.0
    """How long the fake model sleeps per call (0 in the sequential phases)."""
    db_path: Path | None = None
    """The SQLite file to persist sessions to (`seqdb` only); None: no store."""


@dataclass(frozen=True)
class Runner:
    """An adapter built for one phase: `run_once()` plays one whole run and checks it."""

    run_once: Callable[[], Awaitable[None]]
    close: Callable[[], Awaitable[None]] | None = None


def load_adapter(name: str) -> ModuleType:
    """The adapter module called `name`."""
    if name not in ADAPTERS:
        raise SystemExit(f"unknown adapter {name!r}; expected one of: {', '.join(ADAPTERS)}")
    return importlib.import_module(ADAPTERS[name])


# -- the phases, each in its own process -------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """The q-quantile of `values`, interpolated linearly between the two nearest ranks."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


async def _timed(runner: Runner, runs: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        await runner.run_once()
    clock = time.perf_counter_ns
    times = []
    for _ in range(runs):
        started = clock()
        await runner.run_once()
        times.append((clock() - started) / 1000)
    return times


async def sequential(adapter: ModuleType, setup: Setup, runs: int, warmup: int) -> dict[str, Any]:
    """The `seq` (or, with `setup.db_path`, `seqdb`) phase: run times in µs."""
    runner = await adapter.build(setup)
    try:
        times = await _timed(runner, runs, warmup)
    finally:
        if runner.close is not None:
            await runner.close()
    median = statistics.median(times)
    return {
        "run_us_median": round(median, 1),
        "run_us_p90": round(percentile(times, 0.9), 1),
        "run_us_min": round(min(times), 1),
        "per_turn_us": round(median / (setup.T + 1), 1),
        "runs": runs,
    }


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def _reset_peak_rss() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


async def _gathered(runner: Runner, n: int) -> tuple[float, float]:
    """Gather `n` runs: (wall seconds, CPU seconds)."""
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(runner.run_once() for _ in range(n)))
    return time.perf_counter() - wall, time.process_time() - cpu


async def _warm(adapter: ModuleType, setup: Setup) -> Runner:
    runner = await adapter.build(setup)
    for _ in range(3):  # also imports what a framework loads lazily
        await runner.run_once()
    gc.collect()
    return runner


async def concurrent(adapter: ModuleType, setup: Setup, n: int) -> dict[str, Any]:
    """The `conc` phase: `n` runs at once, the model sleeping; time, CPU and peak RSS."""
    runner = await _warm(adapter, setup)
    reset = _reset_peak_rss()
    rss = _status_kib("VmRSS")
    wall, cpu = await _gathered(runner, n)
    peak = _status_kib("VmHWM")
    if runner.close is not None:
        await runner.close()
    ideal = (setup.T + 1) * setup.model_sleep_s
    return {
        "conc_n": n,
        "conc_wall_s": round(wall, 3),
        "conc_ideal_s": round(ideal, 3),
        "conc_wall_over_ideal": round(wall / ideal, 2),
        "conc_cpu_s": round(cpu, 3),
        "conc_cpu_us_per_turn": round(cpu * 1e6 / (n * (setup.T + 1)), 1),
        "rss_peak_growth_mib": round((peak - rss) / 1024, 1) if reset else None,
        "rss_base_mib": round(rss / 1024, 1),
    }


async def traced(adapter: ModuleType, setup: Setup, n: int) -> dict[str, Any]:
    """The `tm` phase: `n` runs at once under tracemalloc; the traced peak's growth."""
    runner = await _warm(adapter, setup)
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    await _gathered(runner, n)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    if runner.close is not None:
        await runner.close()
    return {
        "tracemalloc_peak_growth_mib": round((peak - base) / 2**20, 1),
        "tracemalloc_per_run_kib": round((peak - base) / 1024 / n, 1),
    }


def run_phase(args: argparse.Namespace) -> dict[str, Any]:
    """Run one phase in this process."""
    adapter = load_adapter(args.adapter)
    tool = make_tool(args.tool)
    if args.phase_only == "seq":
        return asyncio.run(sequential(adapter, Setup(args.T, tool), args.runs, args.warmup))
    if args.phase_only == "conc":
        return asyncio.run(concurrent(adapter, Setup(args.T, tool, MODEL_SLEEP_S), args.conc))
    if args.phase_only == "tm":
        return asyncio.run(traced(adapter, Setup(args.T, tool, MODEL_SLEEP_S), args.conc))
    with tempfile.TemporaryDirectory(prefix="bench-db-") as folder:
        setup = Setup(args.T, tool, db_path=Path(folder) / "sessions.db")
        figures = asyncio.run(sequential(adapter, setup, args.db_runs, args.db_warmup))
    return {f"db_{key}": value for key, value in figures.items()}


# -- the parent: one process per phase ---------------------------------------------------------


def _phase_command(args: argparse.Namespace, phase: str) -> list[str]:
    sizes = ["--runs", args.runs, "--warmup", args.warmup, "--conc", args.conc]
    sizes += ["--db-runs", args.db_runs, "--db-warmup", args.db_warmup]
    rest = [str(v) for v in ["--T", args.T, "--tool", args.tool, *sizes, "--phase-only", phase]]
    return [sys.executable, str(Path(__file__).resolve()), args.adapter, *rest]


def run_phases(args: argparse.Namespace) -> dict[str, Any]:
    """Every phase asked for, each in a fresh process; one record of all their figures."""
    adapter = load_adapter(args.adapter)
    record: dict[str, Any] = {"framework": adapter.NAME, "version": adapter.version(), "T": args.T, "tool": args.tool}
    for phase in args.phases.split(","):
        if phase == "seqdb" and not adapter.PERSISTS:
            continue
        done = subprocess.run(_phase_command(args, phase), capture_output=True, text=True)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode != 0 or not lines:
            record[f"{phase}_error"] = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            sys.stderr.write(done.stderr[-4000:])
            continue
        record.update(json.loads(lines[-1]))
    return record


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module's docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("adapter", choices=list(ADAPTERS))
    parser.add_argument("--T", type=int, default=10, help="tool turns per run (default 10)")
    parser.add_argument("--tool", choices=TOOL_MODES, default="sync", help="the add tool's variant")
    parser.add_argument("--phases", default="seq,conc,tm,seqdb", help="comma-separated: " + ",".join(PHASES))
    parser.add_argument("--runs", type=int, default=300, help="timed sequential runs")
    parser.add_argument("--warmup", type=int, default=30, help="untimed sequential runs first")
    parser.add_argument("--conc", type=int, default=500, help="runs gathered at once (conc, tm)")
    parser.add_argument("--db-runs", type=int, default=50, help="timed runs of seqdb")
    parser.add_argument("--db-warmup", type=int, default=5, help="untimed runs of seqdb first")
    parser.add_argument("--phase-only", choices=PHASES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    unknown = set(args.phases.split(",")) - set(PHASES)
    if unknown:
        parser.error(f"unknown phase(s) {', '.join(sorted(unknown))}; expected: {', '.join(PHASES)}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Print one JSON line: the adapter's figures in every phase asked for."""
    args = parse_args(argv)
    print(json.dumps(run_phase(args) if args.phase_only else run_phases(args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
