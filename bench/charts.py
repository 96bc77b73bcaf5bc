#!/usr/bin/env python3
"""Charts of the benchmark results (PNG, matplotlib's Agg backend), embedded in BENCHMARKS.md.

    .venv/bin/python bench/charts.py bench/results/latest.jsonl [--out docs/perf]

`bench/run.py` calls `draw_all(records, out_dir)` and `scaleout_chart(results, path)` itself;
this CLI redraws the first two from raw JSONL.
"""

# ruff: noqa: RUF002

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from compare import config_of
from matplotlib.ticker import FuncFormatter

HOOKLINE = "hookline"
FLOOR = "baseline-loop"
COLORS = {HOOKLINE: "#d62728", FLOOR: "#7f7f7f"}
PEER_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]


def _per_turn(records: list[dict[str, Any]]) -> tuple[dict[tuple[str, str], list[float]], dict[str, str], list[str]]:
    vals: dict[tuple[str, str], list[float]] = defaultdict(list)
    labels: dict[str, str] = {}
    order: list[str] = []
    for r in records:
        if r.get("per_turn_us") is None:
            continue
        fw = r["framework"]
        vals[(fw, config_of(r))].append(float(r["per_turn_us"]))
        labels.setdefault(fw, r.get("label") or fw)
        if fw not in order:
            order.append(fw)
    return vals, labels, order


def _plain(value: float, _pos: int) -> str:
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def _color(fw: str, order: list[str]) -> str:
    if fw in COLORS:
        return COLORS[fw]
    peers = [f for f in order if f not in COLORS]
    return PEER_COLORS[peers.index(fw) % len(PEER_COLORS)]


def per_turn_bars(records: list[dict[str, Any]], path: Path) -> Path | None:
    """Per-turn overhead at T=10 by framework: log-scale horizontal bars, min–max whiskers."""
    vals, labels, order = _per_turn(records)
    rows = [(statistics.median(v), min(v), max(v), fw) for (fw, cfg), v in vals.items() if cfg == "t10"]
    if not rows:
        return None
    rows.sort()
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(rows) + 1.4), dpi=110)
    ys = range(len(rows))
    meds = [r[0] for r in rows]
    err = [[r[0] - r[1] for r in rows], [r[2] - r[0] for r in rows]]
    ax.barh(list(ys), meds, xerr=err, color=[_color(r[3], order) for r in rows], capsize=3, height=0.6)
    ax.set_yticks(list(ys), [labels[r[3]] for r in rows])
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(_plain))
    for y, m in zip(ys, meds, strict=True):
        ax.text(m * 1.08, y, f"{m:,.0f} µs" if m >= 100 else f"{m:.1f} µs", va="center", fontsize=8)
    ax.set_xlim(min(r[1] for r in rows) / 2, max(r[2] for r in rows) * 4)
    ax.set_xlabel("µs per model turn (median run / (T+1)), log scale — lower is better")
    ax.set_title("Framework overhead per turn, add-loop scenario, T=10, sync tool")
    ax.grid(axis="x", which="both", alpha=0.25)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def growth_lines(records: list[dict[str, Any]], path: Path) -> Path | None:
    """Per-turn cost against history length (T=10/50/200), one line per framework."""
    vals, labels, order = _per_turn(records)
    ts = [(10, "t10"), (50, "t50"), (200, "t200")]
    fig, ax = plt.subplots(figsize=(8, 4.8), dpi=110)
    drawn = 0
    for fw in order:
        pts = [(t, statistics.median(vals[(fw, c)])) for t, c in ts if vals.get((fw, c))]
        if len(pts) < 2:
            continue
        xs, ys = zip(*pts, strict=True)
        lw = 2.6 if fw == HOOKLINE else 1.4
        ax.plot(xs, ys, marker="o", lw=lw, color=_color(fw, order), label=labels[fw])
        drawn += 1
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks([10, 50, 200], ["10", "50", "200"])
    ax.yaxis.set_major_formatter(FuncFormatter(_plain))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, p: _plain(v, p) if f"{v:.0e}"[0] in "25" else ""))
    ax.set_xlabel("T (tool turns per run; history grows to 2 + 3T messages)")
    ax.set_ylabel("µs per model turn (log)")
    ax.set_title("Per-turn cost against history length (flat = linear-time runs)")
    ax.grid(which="both", alpha=0.25)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def scaleout_chart(results: list[dict[str, Any]], path: Path) -> Path | None:
    """The scale-out load test by N: runs per second (bars), and follower latency p50/p99 (lines, log scale)."""
    if not results:
        return None
    ns = [str(r["processes"]) for r in results]
    fig, (rate, latency) = plt.subplots(1, 2, figsize=(10, 3.8), dpi=110)
    bars = rate.bar(ns, [r["runs_per_s"] for r in results], color=COLORS[HOOKLINE], width=0.6)
    rate.bar_label(bars, fmt="%.1f", fontsize=8)
    rate.set_xlabel("N server processes")
    rate.set_ylabel("runs per second (saturated)")
    rate.set_title("Throughput")
    for phase, color in (("saturated", COLORS[HOOKLINE]), ("light", PEER_COLORS[0])):
        for q, style in (("p50_ms", "-o"), ("p99_ms", "--^")):
            latency.plot(ns, [r[phase][q] for r in results], style, color=color, label=f"{q[:3]} {phase}")
    latency.set_yscale("log")
    latency.yaxis.set_major_formatter(FuncFormatter(_plain))
    latency.set_xlabel("N server processes")
    latency.set_ylabel("commit → follower, ms (log)")
    latency.set_title("Follower latency")
    latency.grid(which="both", alpha=0.25)
    latency.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def draw_all(records: list[dict[str, Any]], out_dir: Path) -> dict[str, Path]:
    """Draw every chart into `out_dir`; return {title: path} of those drawn."""
    out = {}
    if p := per_turn_bars(records, out_dir / "per_turn_overhead.png"):
        out["Per-turn overhead by framework (T=10, log scale)"] = p
    if p := growth_lines(records, out_dir / "per_turn_vs_history.png"):
        out["Per-turn cost against history length"] = p
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jsonl", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "perf")
    args = ap.parse_args()
    records = [json.loads(ln) for f in args.jsonl for ln in f.read_text().splitlines() if ln.startswith("{")]
    for title, p in draw_all(records, args.out).items():
        print(f"{title}: {p}")


if __name__ == "__main__":
    main()
