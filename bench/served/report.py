"""The served figures as markdown: a table, and the 'Served' section of BENCHMARKS.md.

Imported by `run.py` (its stdout and `--markdown`) and by `bench/render.py`, which renders the
section from `bench/results/served.json` (`run.py --json`); nothing here measures.
"""

from __future__ import annotations

from typing import Any


def table(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """The figures as a markdown table."""
    lines = [
        f"Add-loop at T = 2 (3 model calls, 2 x 2 tool calls a run), a new session per run; latency: one client,"
        f" one kept-alive connection, {meta['latency_runs']} runs each way, model at once; throughput:"
        f" {meta['concurrency']} clients, model {meta['delay_s'] * 1000:g} ms a call, {meta['throughput_runs']} runs;"
        f" medians of {meta['rounds']} round(s); {meta['cpus']} CPUs.",
        "",
        "| server | version | JSON p50 / p99 | SSE p50 / p99 | CPU / run (sequential) | runs/s at"
        f" {meta['concurrency']} | CPU / run (server) | CPU / run (machine) | errors |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['target']} | {r['version']} | {r['json_p50_ms']:.1f} / {r['json_p99_ms']:.1f} ms |"
            f" {r['sse_p50_ms']:.1f} / {r['sse_p99_ms']:.1f} ms | {r['seq_cpu_ms_per_run']:.1f} ms |"
            f" {r['runs_per_s']:.1f} | {r['cpu_ms_per_run']:.1f} ms | {r['machine_cpu_ms_per_run']:.1f} ms |"
            f" {r['errors']} |")
    return "\n".join(lines)


def section(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """The table as a section of its own (for BENCHMARKS.md), with its command and what each server needs."""
    errors = [f"- {r['target']}: {r['errors']} errors, e.g. `{r['error_samples'][0][:200]}`"
              for r in results if r["errors"]]
    lines = [
        "## Served", "",
        "Agent servers as their users run them, over HTTP on 127.0.0.1, measured side by side"
        f" (`{meta['command']}`, {meta['date']}, load average {meta['load1_start']} at the start,"
        f" {meta['load1_end']} at the end). CPU per run is the server's process tree (its store's"
        " thread included; PostgreSQL's own processes are not), and the machine's (everything busy).",
        "", table(results, meta), "",
        "- `hookline serve` with `--db` a SQLite file, `:memory:`, or a PostgreSQL database;"
        " `adk api_server` with its session service on SQLite (`sqlite+aiosqlite`) or in memory;"
        " `langgraph dev` (its in-memory runtime) with `--n-jobs-per-worker` set to the concurrency.",
        "- LangGraph's in-memory queue polls for work, so each of its runs takes about a second"
        " whatever its model; its latency is that, not its CPU.",
        *errors, "",
    ]
    return "\n".join(lines)
