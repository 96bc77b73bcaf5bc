#!/usr/bin/env python3
"""The one benchmark command: hookline, the floor and every peer, alternated; writes BENCHMARKS.md.

    .venv/bin/python bench/run.py                 # full: 2 rounds, every framework (~20–30 min)
    .venv/bin/python bench/run.py --rounds 1      # one round
    .venv/bin/python bench/run.py --skip-peers    # hookline and the floor only (~2 min)
    .venv/bin/python bench/run.py --quick --skip-peers --out /tmp/x   # smoke sizes (~15 s)
    .venv/bin/python bench/run.py --report bench/results/latest.jsonl # re-render from raw results
    .venv/bin/python bench/run.py --profile       # docs/perf/profile.txt (+ .html)

The scenario is ../shared/bench/SCENARIO.md; the harness (`bench_common.py`) and the peer
adapters live in ../shared/bench/peers and are used from there, never copied. Peers run with
the peers' virtual environment (built with `peers/setup.sh` when missing); hookline and the
floor run with this interpreter (the same CPython build; the floor needs only the stdlib).

Every round runs, for each configuration, every framework once, in an order rotated from
round to round, so that a noisy minute hurts all frameworks alike. Raw JSON lines go to
`bench/results/results_<stamp>.jsonl` (and `latest.jsonl`) as they come; figures in the
report are medians across rounds with the [min–max] spread.
"""

# ruff: noqa: RUF001, RUF002

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_PEERS_DIR = Path(os.environ.get("HOOKLINE_PEERS", ROOT.parent / "shared" / "bench" / "peers"))
DEFAULT_PEERS_VENV = Path(os.environ.get("PEERS_VENV", Path.home() / ".cache" / "hookline-peers"))

# -- what runs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Framework:
    key: str  # the "framework" field of the harness's JSON line
    label: str
    script: str
    kind: str  # "hookline" | "floor" | "peer"
    env: dict[str, str] = field(default_factory=dict)


FRAMEWORKS = [
    Framework("hookline", "hookline", "bench_hookline.py", "hookline"),
    Framework("baseline-loop", "floor (hand-written loop)", "bench_baseline.py", "floor"),
    Framework("pydantic-ai", "pydantic-ai", "bench_pydantic_ai.py", "peer"),
    Framework("openai-agents", "openai-agents", "bench_openai_agents.py", "peer"),
    Framework("haystack", "haystack", "bench_haystack.py", "peer"),
    Framework("google-adk", "google-adk", "bench_google_adk.py", "peer"),
    Framework(
        "langgraph", "langgraph create_react_agent", "bench_langgraph.py", "peer", {"LG_AGENT": "create_react_agent"}
    ),
    Framework(
        "langchain-create_agent", "langchain create_agent", "bench_langgraph.py", "peer", {"LG_AGENT": "create_agent"}
    ),
]
BY_KEY = {f.key: f for f in FRAMEWORKS}


@dataclass(frozen=True)
class Config:
    key: str
    T: int
    tool: str
    phases: str
    runs: int
    warmup: int
    conc: int = 500
    peer_runs: int | None = None  # fewer runs for the (slow) peers
    peer_warmup: int | None = None
    title: str = ""

    def sizes(self, fw: Framework) -> tuple[int, int]:
        if fw.kind == "peer" and self.peer_runs is not None:
            return self.peer_runs, self.peer_warmup if self.peer_warmup is not None else self.warmup
        return self.runs, self.warmup


FULL = [
    Config("t10", 10, "sync", "seq,conc,tm,seqdb", 300, 30, title="T=10, sync tool: all phases"),
    Config("t10-async", 10, "async", "seq", 200, 20, title="T=10, async tool"),
    Config("t3-sleep", 3, "sleep", "seq", 30, 3, title="T=3, tool sleeps 20 ms (parallelism probe)"),
    Config("t50", 50, "sync", "seq", 100, 10, peer_runs=60, peer_warmup=6, title="T=50 (history growth)"),
    Config("t200", 200, "sync", "seq", 100, 10, peer_runs=12, peer_warmup=2, title="T=200 (long history)"),
]
QUICK = [
    # seqdb is left out: the harness fixes it at 55 runs, seconds of fsync for the floor
    Config("t10", 10, "sync", "seq,conc,tm", 3, 1, conc=5, title="T=10, sync tool: all phases"),
    Config("t10-async", 10, "async", "seq", 3, 1, title="T=10, async tool"),
    Config("t3-sleep", 3, "sleep", "seq", 2, 1, title="T=3, tool sleeps 20 ms (parallelism probe)"),
    Config("t50", 50, "sync", "seq", 3, 1, title="T=50 (history growth)"),
    Config("t200", 200, "sync", "seq", 2, 1, title="T=200 (long history)"),
]

# -- running ---------------------------------------------------------------------------------


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def ensure_peers_venv(venv: Path, peers_dir: Path) -> Path:
    python = venv / "bin" / "python"
    if python.exists():
        return python
    log(f"building the peers' venv in {venv} (pip-installs several frameworks; a few minutes) ...")
    subprocess.run(["bash", str(peers_dir / "setup.sh"), str(venv)], check=True, stdout=subprocess.DEVNULL)
    return python


def run_one(fw: Framework, cfg: Config, rnd: int, ctx: dict[str, Any]) -> dict[str, Any]:
    runs, warmup = cfg.sizes(fw)
    env = {
        **os.environ,
        **fw.env,
        "BENCH_TOOL": cfg.tool,
        "HOOKLINE_PEERS": str(ctx["peers_dir"]),
        "TMPDIR": ctx["tmp"],
        "PYTHONWARNINGS": "ignore",
    }
    args = [
        "--T",
        str(cfg.T),
        "--runs",
        str(runs),
        "--warmup",
        str(warmup),
        "--conc",
        str(cfg.conc),
        "--phases",
        cfg.phases,
    ]
    if fw.kind == "hookline":
        cmd, cwd = [ctx["python"], str(HERE / fw.script), *args], ROOT
    elif fw.kind == "floor":
        cmd, cwd = [ctx["python"], fw.script, *args], ctx["peers_dir"]
    else:
        cmd, cwd = [ctx["peers_python"], fw.script, *args], ctx["peers_dir"]
    load1 = round(os.getloadavg()[0], 2)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=ctx["timeout"])
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
        if p.returncode != 0 or not lines:
            tail = (p.stderr or "").strip().splitlines()[-3:]
            rec: dict[str, Any] = {
                "framework": fw.key,
                "T": cfg.T,
                "tool": cfg.tool,
                "error": f"rc={p.returncode}: " + " | ".join(tail),
            }
        else:
            rec = json.loads(lines[-1])
    except subprocess.TimeoutExpired:
        rec = {"framework": fw.key, "T": cfg.T, "tool": cfg.tool, "error": f"timeout after {ctx['timeout']} s"}
    rec.update(
        {
            "config": cfg.key,
            "round": rnd,
            "label": fw.label,
            "kind": fw.kind,
            "load1": load1,
            "bench_wall_s": round(time.perf_counter() - t0, 1),
            "ts": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
    )
    for k in [k for k in rec if k.endswith("_error")]:
        log(f"   ! {fw.key} {cfg.key}: {k} {rec[k]}")
    if "error" in rec:
        log(f"   ! {fw.key} {cfg.key}: {rec['error']}")
    return rec


def run_all(
    frameworks: list[Framework],
    configs: list[Config],
    rounds: int,
    ctx: dict[str, Any],
    out_jsonl: Path,
    jobs: int = 1,
    tm_rounds: int = 1,
) -> list[dict[str, Any]]:
    """Every round: every configuration, every framework (order rotated by round). `jobs` > 1 runs the
    frameworks of one configuration side by side: for smoke tests only, never for figures."""
    records: list[dict[str, Any]] = []
    total = rounds * len(configs) * len(frameworks)
    done, t_start = 0, time.perf_counter()

    def one(fw: Framework, cfg: Config, rnd: int) -> dict[str, Any]:
        nonlocal done
        done += 1
        log(f"[{done}/{total}] round {rnd} {cfg.key:9s} {fw.key} ...")
        rec = run_one(fw, cfg, rnd, ctx)
        if "per_turn_us" in rec:
            log(
                f"   {fw.key} {cfg.key}: {rec['per_turn_us']} µs/turn ({rec['bench_wall_s']} s,"
                f" {time.perf_counter() - t_start:.0f} s so far)"
            )
        return rec

    with out_jsonl.open("a") as sink, ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for rnd in range(1, rounds + 1):
            for cfg in configs:
                if rnd > tm_rounds and "tm" in cfg.phases.split(","):  # traced memory barely varies
                    cfg = replace(cfg, phases=",".join(p for p in cfg.phases.split(",") if p != "tm"))
                shift = (rnd - 1) % len(frameworks)
                order = frameworks[shift:] + frameworks[:shift]
                if jobs > 1:
                    batch = list(pool.map(lambda fw: one(fw, cfg, rnd), order))  # noqa: B023 - consumed at once
                else:
                    batch = [one(fw, cfg, rnd) for fw in order]
                for rec in batch:
                    records.append(rec)
                    sink.write(json.dumps(rec) + "\n")
                    sink.flush()
    return records


# -- aggregating -----------------------------------------------------------------------------


class Agg:
    """Records grouped by (framework, config); values are medians across rounds."""

    def __init__(self, records: Iterable[dict[str, Any]]):
        self.groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for r in records:
            self.groups[(r["framework"], r.get("config") or _config_of(r))].append(r)

    def values(self, fw: str, cfg: str, key: str) -> list[float]:
        return [r[key] for r in self.groups.get((fw, cfg), []) if r.get(key) is not None]

    def med(self, fw: str, cfg: str, key: str) -> float | None:
        vals = self.values(fw, cfg, key)
        return statistics.median(vals) if vals else None

    def spread(self, fw: str, cfg: str, key: str) -> tuple[float, float, float] | None:
        vals = self.values(fw, cfg, key)
        return (statistics.median(vals), min(vals), max(vals)) if vals else None

    def frameworks(self) -> list[str]:
        seen = {fw for fw, _ in self.groups}
        return [f.key for f in FRAMEWORKS if f.key in seen] + sorted(seen - set(BY_KEY))

    def peers(self) -> list[str]:
        return [fw for fw in self.frameworks() if BY_KEY.get(fw, Framework(fw, fw, "", "peer")).kind == "peer"]

    def fastest_peer(self, cfg: str, key: str) -> tuple[str, float] | None:
        cands = [(v, fw) for fw in self.peers() if (v := self.med(fw, cfg, key)) is not None]
        if not cands:
            return None
        v, fw = min(cands)
        return fw, v

    def rounds(self) -> list[int]:
        return sorted({r.get("round", 1) for rs in self.groups.values() for r in rs})


def _config_of(r: dict[str, Any]) -> str:  # results from run_all.sh have no "config" field
    tool = r.get("tool", "sync")
    return {("sync", 10): "t10", ("async", 10): "t10-async", ("sleep", 3): "t3-sleep"}.get(
        (tool, r["T"]), f"t{r['T']}" if tool == "sync" else f"t{r['T']}-{tool}"
    )


def num(x: float | None) -> str:
    if x is None:
        return "–"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def cell(s: tuple[float, float, float] | None, scale: float = 1.0) -> str:
    if s is None:
        return "–"
    m, lo, hi = (v * scale for v in s)
    return num(m) if lo == hi else f"{num(m)} [{num(lo)}–{num(hi)}]"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "–"
    r = a / b
    if r < 0.1:
        return f"{r:.2g}×"
    return f"{r:.2f}×" if r < 10 else f"{r:.0f}×"


# -- the targets of the issue ----------------------------------------------------------------


@dataclass
class Target:
    text: str
    measure: Callable[[Agg], tuple[float, float, str] | None]  # -> (value, bound, how) ; ok iff value <= bound


def _per_turn_vs_peer(a: Agg) -> tuple[float, float, str] | None:
    hl, fp = a.med("hookline", "t10", "per_turn_us"), a.fastest_peer("t10", "per_turn_us")
    if hl is None or fp is None:
        return None
    return hl, fp[1] / 5, f"{num(hl)} µs vs {fp[0]} {num(fp[1])} µs / 5"


def _per_turn_vs_floor(a: Agg) -> tuple[float, float, str] | None:
    hl, fl = a.med("hookline", "t10", "per_turn_us"), a.med("baseline-loop", "t10", "per_turn_us")
    if hl is None or fl is None:
        return None
    return hl, 3 * fl, f"{num(hl)} µs vs 3 × floor {num(fl)} µs"


def _growth(a: Agg) -> tuple[float, float, str] | None:
    t10, t200 = a.med("hookline", "t10", "per_turn_us"), a.med("hookline", "t200", "per_turn_us")
    if t10 is None or t200 is None:
        return None
    return t200 / t10, 1.2, f"{num(t200)} / {num(t10)} µs"


def _conc_wall(a: Agg) -> tuple[float, float, str] | None:
    hl, fl = a.med("hookline", "t10", "conc_wall_s"), a.med("baseline-loop", "t10", "conc_wall_s")
    if hl is None or fl is None:
        return None
    return hl, 1.2 * fl, f"{hl:.2f} s vs 1.2 × floor {fl:.2f} s"


def _cpu_vs_peer(a: Agg) -> tuple[float, float, str] | None:
    hl, fp = a.med("hookline", "t10", "conc_cpu_us_per_turn"), a.fastest_peer("t10", "conc_cpu_us_per_turn")
    if hl is None or fp is None:
        return None
    return hl, fp[1] / 5, f"{num(hl)} µs vs {fp[0]} {num(fp[1])} µs / 5"


def _mem_traced(a: Agg) -> tuple[float, float, str] | None:
    hl, fl = (
        a.med("hookline", "t10", "tracemalloc_per_run_kib"),
        a.med("baseline-loop", "t10", "tracemalloc_per_run_kib"),
    )
    if hl is None or fl is None:
        return None
    return hl, 2 * fl, f"{num(hl)} KiB vs 2 × floor {num(fl)} KiB (tracemalloc peak per run)"


def _mem_rss(a: Agg) -> tuple[float, float, str] | None:
    hl, fl = a.med("hookline", "t10", "rss_peak_growth_mib"), a.med("baseline-loop", "t10", "rss_peak_growth_mib")
    if hl is None or fl is None:
        return None
    return hl, 2 * fl, f"{num(hl)} MiB vs 2 × floor {num(fl)} MiB (peak RSS growth, 500 runs)"


def _db_vs_floor(a: Agg) -> tuple[float, float, str] | None:
    hl, fl = a.med("hookline", "t10", "db_run_us_median"), a.med("baseline-loop", "t10", "db_run_us_median")
    if hl is None or fl is None:
        return None
    return hl, fl, f"{num(hl)} µs vs floor's sqlite3 {num(fl)} µs"


def _db_vs_peer(a: Agg) -> tuple[float, float, str] | None:
    hl, fp = a.med("hookline", "t10", "db_run_us_median"), a.fastest_peer("t10", "db_run_us_median")
    if hl is None or fp is None:
        return None
    return hl, fp[1] / 5, f"{num(hl)} µs vs {fp[0]} {num(fp[1])} µs / 5"


TARGETS = [
    Target("per-turn overhead ≤ 1/5 of the fastest peer's (T=10)", _per_turn_vs_peer),
    Target("per-turn overhead ≤ 3× the floor's (T=10)", _per_turn_vs_floor),
    Target("per-turn cost at T=200 within 1.2× of T=10", _growth),
    Target("500-concurrent wall time ≤ 1.2× the floor's", _conc_wall),
    Target("CPU per turn (500 concurrent) ≤ 1/5 of the fastest peer's", _cpu_vs_peer),
    Target("memory per concurrent run ≤ 2× the floor's (tracemalloc)", _mem_traced),
    Target("memory per concurrent run ≤ 2× the floor's (peak RSS)", _mem_rss),
    Target("SQLite-persisted run no slower than the floor's sqlite3 run", _db_vs_floor),
    Target("SQLite-persisted run ≥ 5× faster than the fastest peer's session store", _db_vs_peer),
]


def evaluate_targets(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    agg = Agg(records)
    out = []
    for t in TARGETS:
        got = t.measure(agg)
        row: dict[str, Any] = {"target": t.text}
        if got is None:
            row.update(status="not measured", detail="", margin="")
            out.append(row)
            continue
        value, bound, how = got
        ok = value <= bound
        if ok:
            margin = f"{bound / value:.2f}× headroom" if value > 0 else "∞ headroom"
        else:
            margin = f"{value / bound:.2f}× over the bound (+{(value / bound - 1) * 100:.0f}%)"
        per_round = []
        for rnd in agg.rounds():
            g = t.measure(Agg(r for r in records if r.get("round", 1) == rnd))
            if g is not None:
                per_round.append(g[0] <= g[1])
        row.update(
            status="met" if ok else "missed",
            detail=how,
            margin=margin,
            value=value,
            bound=bound,
            rounds=f"{sum(per_round)}/{len(per_round)}" if per_round else "",
        )
        out.append(row)
    return out


# -- the report ------------------------------------------------------------------------------

MAIN_METRICS = [  # (key, column title, scale)
    ("run_us_median", "run µs", 1.0),
    ("per_turn_us", "µs/turn", 1.0),
    ("conc_wall_s", "500-conc wall s (ideal 0.55)", 1.0),
    ("conc_cpu_us_per_turn", "conc CPU µs/turn", 1.0),
    ("rss_peak_growth_mib", "peak RSS growth MiB", 1.0),
    ("tracemalloc_per_run_kib", "tracemalloc KiB/run", 1.0),
    ("db_run_us_median", "SQLite run µs", 1.0),
]
RATIO_METRICS = [
    ("per_turn_us", "µs/turn"),
    ("conc_wall_s", "conc wall"),
    ("conc_cpu_us_per_turn", "CPU/turn"),
    ("tracemalloc_per_run_kib", "KiB/run"),
    ("rss_peak_growth_mib", "RSS growth"),
    ("db_run_us_median", "SQLite run"),
]


def machine_info(python: str, peers_python: str | None, tmp: str) -> dict[str, str]:
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = ""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    info = {
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "memory": mem,
        "kernel": platform.release(),
        "python": _python_version(python),
        "date": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "tmp_fs": _fs_of(tmp),
    }
    if peers_python:
        info["peers_python"] = _python_version(peers_python)
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "src"], cwd=ROOT, capture_output=True, text=True
        )
        info["commit"] = head.stdout.strip() + (" + uncommitted changes in src/" if dirty.stdout.strip() else "")
    except OSError:
        pass
    return info


def _python_version(python: str) -> str:
    p = subprocess.run(
        [python, "-c", "import platform; print(platform.python_implementation(), platform.python_version())"],
        capture_output=True,
        text=True,
    )
    return p.stdout.strip() or "?"


def _fs_of(path: str) -> str:
    best, fs = "", "?"
    try:
        with open("/proc/mounts") as f:
            for line in f:
                dev, mnt, typ = line.split()[:3]
                if os.path.realpath(path).startswith(mnt) and len(mnt) > len(best):
                    best, fs = mnt, f"{typ} ({dev} on {mnt})"
    except OSError:
        pass
    return fs


def _runs(records: list[dict[str, Any]], cfg: str, peers: bool, key: str = "runs") -> str:
    """The run counts used for `cfg`, e.g. "300" or "60/100", for the peers or for hookline and the floor."""
    found = {
        r[key]
        for r in records
        if r.get("config") == cfg
        and r.get(key)
        and (BY_KEY.get(r["framework"], FRAMEWORKS[-1]).kind == "peer") == peers
    }
    return "/".join(str(n) for n in sorted(found)) or "–"


def render(records: list[dict[str, Any]], meta: dict[str, Any], charts: dict[str, str]) -> str:  # noqa: C901
    agg = Agg(records)
    fws = agg.frameworks()
    label = {fw: BY_KEY[fw].label if fw in BY_KEY else fw for fw in fws}
    version = {}
    for (fw, _), rs in agg.groups.items():
        version.setdefault(fw, rs[0].get("version", ""))
    m = meta["machine"]
    L: list[str] = []
    w = L.append
    w("# Benchmarks")
    w("")
    w("<!-- generated by bench/run.py; do not edit by hand -->")
    w("")
    w(
        "Framework overhead of one agent run on the shared *add-loop* scenario"
        " ([SCENARIO.md](../shared/bench/SCENARIO.md), spec v1): a fake model answers instantly with two `add`"
        " tool calls per turn for T turns, then `done`, so every microsecond measured is the framework's."
        " The *floor* is a ~30-line hand-written asyncio loop doing the same work."
    )
    w("")
    w(
        f"Command: `{meta['command']}` — {meta['rounds']} round(s), frameworks alternated within each round;"
        f" took {meta['elapsed_min']:.0f} min. Raw results: `{meta['results']}`."
    )
    w("")
    if meta.get("quick"):
        w("> **--quick: smoke-test sizes (a handful of runs), not a measurement.**")
        w("")
    w("## Machine")
    w("")
    w(f"- CPU: {m['cpu']}, {m['cores']} cores, {m['memory']} RAM; Linux {m['kernel']}")
    w(
        f"- Python: {m['python']} (hookline and floor)"
        + (f"; {m['peers_python']} (peers' venv)" if m.get("peers_python") else "")
    )
    w(f"- SQLite files on: {m['tmp_fs']}")
    loads = [r["load1"] for r in records if r.get("load1") is not None]
    if loads:
        w(
            f"- 1-minute load average when each benchmark started: median {statistics.median(loads):.1f}"
            f" [{min(loads):.1f}–{max(loads):.1f}] on {m['cores']} cores (other work shared the machine)"
        )
    w(f"- Date: {m['date']}" + (f"; hookline at {m['commit']}" if m.get("commit") else ""))
    w("- Versions: " + ", ".join(f"{label[fw]} {version[fw]}" for fw in fws if version.get(fw)))
    w("")
    w(
        "The machine is a shared 2-vCPU VM with noisy neighbours: compare figures from the same run only;"
        " each figure is the median across rounds with the [min–max] of the round medians."
    )
    w("")

    hl = agg.med("hookline", "t10", "per_turn_us")
    fl = agg.med("baseline-loop", "t10", "per_turn_us")
    fp = agg.fastest_peer("t10", "per_turn_us")
    if hl is not None:
        w("## Headline")
        w("")
        parts = [f"hookline **{num(hl)} µs/turn**"]
        if fl is not None:
            parts.append(f"floor {num(fl)} µs/turn ({ratio(hl, fl)} the floor)")
        if fp is not None:
            parts.append(
                f"fastest peer {label.get(fp[0], fp[0])} {num(fp[1])} µs/turn"
                f" (hookline is {ratio(hl, fp[1])} of it, 1/{fp[1] / hl:.0f})"
            )
        w("T=10, sync tool, median of sequential runs: " + "; ".join(parts) + ".")
        hdb, fdb = agg.med("hookline", "t10", "db_run_us_median"), agg.med("baseline-loop", "t10", "db_run_us_median")
        pdb = agg.fastest_peer("t10", "db_run_us_median")
        if hdb is not None:
            s = f"A run persisted to SQLite: hookline {num(hdb)} µs"
            if fdb is not None:
                s += f", floor (stdlib sqlite3, commit per message) {num(fdb)} µs"
            if pdb is not None:
                s += f", fastest peer store ({label.get(pdb[0], pdb[0])}) {num(pdb[1])} µs"
            w("")
            w(s + ".")
        w("")

    if charts:
        for title, path in charts.items():
            w(f"![{title}]({path})")
            w("")

    w("## T=10, sync tool (the spec)")
    w("")
    w("| framework | " + " | ".join(t for _, t, _ in MAIN_METRICS) + " |")
    w("|---|" + "---|" * len(MAIN_METRICS))
    for fw in fws:
        cells = [cell(agg.spread(fw, "t10", k), s) for k, _, s in MAIN_METRICS]
        name = f"**{label[fw]}**" if fw == "hookline" else label[fw]
        w(f"| {name} | " + " | ".join(cells) + " |")
    w("")
    n_conc = "/".join(sorted({str(r["conc_n"]) for r in records if r.get("conc_n")})) or "500"
    tm_rounds = sorted({r.get("round", 1) for r in records if "tracemalloc_per_run_kib" in r})
    tm_note = ""
    if tm_rounds and len(tm_rounds) < len(agg.rounds()):
        tm_note = (
            f" tracemalloc: round {', '.join(map(str, tm_rounds))} only (traced memory barely varies, and it"
            " is the peers' slowest phase)."
        )
    w(
        f"µs/turn = median run time / (T+1) over {_runs(records, 't10', False)} sequential runs per round"
        f" ({_runs(records, 't10', True)} for the peers). The concurrency columns"
        f" gather {n_conc} runs whose model sleeps 50 ms per call. SQLite: 50 runs (5 warm-up), one fresh session per"
        " run, through the framework's own store (the floor: stdlib sqlite3, one INSERT+COMMIT per message);"
        " only the floor, hookline, openai-agents and google-adk have one." + tm_note
    )
    w("")
    w("### Ratios (medians): to the floor, and to the fastest peer for that figure")
    w("")
    w("| framework | " + " | ".join(f"{t} ×floor | {t} ×fastest peer" for _, t in RATIO_METRICS) + " |")
    w("|---|" + "---|---|" * len(RATIO_METRICS))
    for fw in fws:
        cells = []
        for k, _ in RATIO_METRICS:
            v = agg.med(fw, "t10", k)
            fpk = agg.fastest_peer("t10", k)
            cells += [ratio(v, agg.med("baseline-loop", "t10", k)), ratio(v, fpk[1] if fpk else None)]
        name = f"**{label[fw]}**" if fw == "hookline" else label[fw]
        w(f"| {name} | " + " | ".join(cells) + " |")
    fastest = [f"{t}: {label.get(f[0], f[0])}" for k, t in RATIO_METRICS if (f := agg.fastest_peer("t10", k))]
    if fastest:
        w("")
        w("Fastest peer per figure: " + "; ".join(fastest) + ".")
    w("")

    w("## History length, tool variants")
    w("")
    w(
        "| framework | µs/turn T=10 | µs/turn T=10 async tool | µs/turn T=50 | µs/turn T=200 | T=50 / T=10 |"
        " T=200 / T=10 | T=3 sleeping tool: run ms | tool calls of a turn |"
    )
    w("|---|---|---|---|---|---|---|---|---|")
    for fw in fws:
        a, b = agg.med(fw, "t10", "per_turn_us"), agg.med(fw, "t50", "per_turn_us")
        c = agg.med(fw, "t200", "per_turn_us")
        sl = agg.spread(fw, "t3-sleep", "run_us_median")
        verdict = "–" if sl is None else ("concurrently" if sl[0] < 90_000 else "one after another")
        name = f"**{label[fw]}**" if fw == "hookline" else label[fw]
        turns = " | ".join(cell(agg.spread(fw, c, "per_turn_us")) for c in ("t10", "t10-async", "t50", "t200"))
        w(
            f"| {name} | {turns}"
            f" | {ratio(b, a).rstrip('×')} | {ratio(c, a).rstrip('×')} | {cell(sl, 1e-3)} | {verdict} |"
        )
    w("")
    sizes = ", ".join(
        f"{name} {_runs(records, c, False)}" + (f" (peers {_runs(records, c, True)})" if agg.peers() else "")
        for c, name in (("t10-async", "T=10 async"), ("t3-sleep", "T=3 sleep"), ("t50", "T=50"), ("t200", "T=200"))
    )
    w(
        f"Sequential runs per round: {sizes}; the peers get fewer runs at T=50 and T=200, where one run takes"
        " 0.1–1 s."
        " The fake model itself counts the tool results of the whole history on every call (the scenario's"
        " policy), so part of any growth with T is the scenario's own: the floor's ratio shows how much."
        " Sleeping tool: each call sleeps 20 ms, so a run takes ≈ 60 ms plus overhead when the two calls of a"
        " turn overlap, ≈ 120 ms when they run one after another."
    )
    w("")

    hlg, flg = agg.med("hookline", "t200", "per_turn_us"), agg.med("baseline-loop", "t200", "per_turn_us")
    if None not in (hl, fl, hlg, flg) and hl > fl:  # type: ignore[operator]
        w(
            f"Over the floor (hookline minus floor, µs/turn): {num(hl - fl)} at T=10, {num(hlg - flg)} at T=200"  # type: ignore[operator]
            f" ({ratio(hlg - flg, hl - fl)}): the framework's own per-turn cost"  # type: ignore[operator]
            f" {'barely grows' if (hlg - flg) <= 1.2 * (hl - fl) else 'grows'} with history"
            " ([docs/perf/README.md](docs/perf/README.md) splits the T=200 profile between the fake model and"
            " hookline)."
        )  # type: ignore[operator]
        w("")

    w('## Targets (issue "Benchmarks")')
    w("")
    w("| target | measured (medians) | status | margin | rounds met |")
    w("|---|---|---|---|---|")
    for t in evaluate_targets(records):
        status = {"met": "✅ met", "missed": "❌ missed"}.get(t["status"], t["status"])
        w(f"| {t['target']} | {t['detail']} | {status} | {t['margin']} | {t.get('rounds', '')} |")
    w("")
    w(
        "SQLite commit latency depends on the disk's fsync: the SQLite figures compare only within this run."
        " The floor commits with the default rollback journal; hookline's store runs WAL with synchronous=NORMAL."
    )
    w("")

    errs = [r for r in records if "error" in r or any(k.endswith("_error") for k in r)]
    if errs:
        w("## Errors")
        w("")
        for r in errs:
            msg = r.get("error") or "; ".join(f"{k}: {v}" for k, v in r.items() if k.endswith("_error"))
            w(f"- round {r.get('round')} {r['framework']} {r.get('config')}: {msg}")
        w("")
    w("## Reproduce")
    w("")
    w("```sh")
    w(".venv/bin/python bench/run.py                # everything (builds the peers' venv on first use)")
    w(".venv/bin/python bench/run.py --skip-peers   # hookline and the floor only")
    w(".venv/bin/pytest bench/micro --benchmark-only  # hot-path microbenchmarks")
    w("```")
    w("")
    w("See [bench/README.md](bench/README.md) and [docs/perf/README.md](docs/perf/README.md) (profile).")
    w("")
    return "\n".join(L)


# -- profile ---------------------------------------------------------------------------------


PROFILES = {  # file name -> (BENCH_TOOL, T, share of --profile-runs, persisted to SQLite)
    "profile.txt": ("sync", 10, 1.0, False),
    "profile_async.txt": ("async", 10, 1.0, False),
    "profile_t200.txt": ("sync", 200, 0.05, False),
    "profile_seqdb.txt": ("sync", 10, 0.05, True),
    "memory.txt": ("sync", 10, 0.25, False),  # 500 concurrent runs, a tracemalloc snapshot mid-flight
}


def profile_all(out_dir: Path, runs: int, peers_dir: Path) -> None:
    """Each profile in a fresh process (the harness reads BENCH_TOOL when imported)."""
    for name, (tool, T, share, persist) in PROFILES.items():
        env = {**os.environ, "BENCH_TOOL": tool, "HOOKLINE_PEERS": str(peers_dir)}
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--_profile-one",
                f"{name}:{T}:{max(20, int(runs * share))}:{int(persist)}",
                "--out",
                str(out_dir.parents[1]),
            ],
            env=env,
            check=True,
        )


def profile(out_dir: Path, name: str, T: int, runs: int, peers_dir: Path, persist: bool) -> None:  # noqa: C901
    """Profile sequential runs (cProfile table + pyinstrument tree) into out_dir/name."""
    import asyncio
    import cProfile
    import io
    import pstats

    os.environ.setdefault("HOOKLINE_PEERS", str(peers_dir))
    sys.path.insert(0, str(HERE))
    import bench_hookline

    tool = os.environ.get("BENCH_TOOL", "sync")

    async def build() -> Any:
        run_once, _ = await bench_hookline.factory(T, 0.0, persist)
        return run_once

    async def many(run_once: Any, n: int) -> None:
        for _ in range(n):
            await run_once()

    loop = asyncio.new_event_loop()
    run_once = loop.run_until_complete(build())
    loop.run_until_complete(many(run_once, max(10, runs // 10)))  # warm-up
    t0 = time.perf_counter()
    loop.run_until_complete(many(run_once, runs))
    plain_us = (time.perf_counter() - t0) / runs * 1e6

    prof = cProfile.Profile()
    prof.enable()
    loop.run_until_complete(many(run_once, runs))
    prof.disable()
    buf = io.StringIO()
    st = pstats.Stats(prof, stream=buf)
    total = st.total_tt  # type: ignore[attr-defined]
    rows = []
    for (file, line, fn), (_cc, nc, tt, ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
        rows.append((tt, ct, nc, file, line, fn))
    rows.sort(reverse=True)

    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0001, async_mode="disabled")
    profiler.start()
    loop.run_until_complete(many(run_once, runs))
    profiler.stop()
    loop.close()

    def short(file: str) -> str:
        for marker in ("/src/hookline/", "/site-packages/", "/lib/python3.11/"):
            if marker in file:
                return (
                    file.split(marker, 1)[1] if marker != "/src/hookline/" else "hookline/" + file.split(marker, 1)[1]
                )
        return file

    out_dir.mkdir(parents=True, exist_ok=True)
    lines = [
        f"# Profile of {runs} sequential runs of the add-loop scenario (T={T}, {tool} tool,"
        + (" persisted through SQLiteSessionStore, one fresh session per run)" if persist else " no session)"),
        f"# generated by `bench/run.py --profile` on {dt.date.today()}; CPython {platform.python_version()};"
        f" load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
        f"# unprofiled: {plain_us:.0f} µs/run = {plain_us / (T + 1):.1f} µs/turn; cProfile total {total:.2f} s"
        f" ({total / runs * 1e6:.0f} µs/run with profiling overhead)",
        "",
        "## cProfile: top 45 functions by own time (tottime), share of the total",
        "",
        f"{'own %':>6} {'cum %':>6} {'calls/run':>9}  function",
    ]
    for tt, ct, nc, file, line, fn in rows[:45]:
        lines.append(f"{tt / total * 100:6.1f} {ct / total * 100:6.1f} {nc / runs:9.1f}  {short(file)}:{line}({fn})")
    lines += [
        "",
        "## cProfile: hookline's own functions by cumulative time",
        "",
        f"{'own %':>6} {'cum %':>6} {'calls/run':>9}  function",
    ]
    own = sorted((r for r in rows if "/src/hookline/" in r[3] or "bench_hookline" in r[3]), key=lambda r: -r[1])
    if persist:
        hops = sum(nc for _tt, _ct, nc, file, _line, fn in rows if file.endswith("sqlite.py") and fn == "_submit")
        lines[3:3] = [f"# round trips to the store thread (SQLiteSessionStore._submit): {hops / runs:.1f} per run"]
    for tt, ct, nc, file, line, fn in own[:45]:
        lines.append(f"{tt / total * 100:6.1f} {ct / total * 100:6.1f} {nc / runs:9.1f}  {short(file)}:{line}({fn})")
    lines += ["", "## pyinstrument call tree (interval 0.1 ms, async_mode=disabled)", ""]
    lines.append(profiler.output_text(unicode=True, color=False, show_all=False, short_mode=False))
    (out_dir / name).write_text("\n".join(lines) + "\n")
    html = profiler.output_html()
    if len(html) < 1_000_000:
        (out_dir / name.replace(".txt", ".html")).write_text(html)
    log(f"wrote {out_dir / name} ({plain_us:.0f} µs/run unprofiled, html {len(html) // 1024} KiB)")


def memory_profile(out_dir: Path, name: str, T: int, n: int, peers_dir: Path) -> None:
    """Where the memory of `n` concurrent runs lives: a tracemalloc snapshot when the first of them
    ends (all are then at their last turn, near the peak), each block charged to the innermost hookline
    line on the stack that allocated it."""
    import asyncio
    import gc
    import tracemalloc

    os.environ.setdefault("HOOKLINE_PEERS", str(peers_dir))
    sys.path.insert(0, str(HERE))
    import bench_hookline

    from hookline.loop import Run

    taken: list[Any] = []  # the snapshot, when the first run reaches its end: every run is then at its last turn
    real_end = Run._end

    async def end(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not taken and tracemalloc.is_tracing():
            taken.append((tracemalloc.take_snapshot(), tracemalloc.get_traced_memory()[0]))
        return await real_end(self, *args, **kwargs)

    async def measure() -> tuple[Any, int, int]:
        run_once, _ = await bench_hookline.factory(T, 0.05, False)
        for _ in range(3):
            await run_once()
        gc.collect()
        Run._end = end  # type: ignore[method-assign]
        tracemalloc.start(25)
        base, _ = tracemalloc.get_traced_memory()
        await asyncio.gather(*(run_once() for _ in range(n)))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        Run._end = real_end  # type: ignore[method-assign]
        snap, cur = taken[0]
        return snap, cur - base, peak - base

    snap, live, peak = asyncio.run(measure())
    snap = snap.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    by_line: dict[str, int] = defaultdict(int)
    by_alloc: dict[str, int] = defaultdict(int)
    for stat in snap.statistics("traceback"):
        frames = list(stat.traceback)  # oldest first
        mine = next((f for f in reversed(frames) if "/hookline/" in f.filename or "bench_hookline" in f.filename), None)
        key = f"{_short_path(mine.filename)}:{mine.lineno}" if mine else "(outside hookline)"
        by_line[key] += stat.size
        by_alloc[f"{_short_path(frames[-1].filename)}:{frames[-1].lineno}"] += stat.size
    lines = [
        f"# Memory of {n} concurrent add-loop runs (T={T}, model sleeps 50 ms): tracemalloc snapshot when the"
        " first run ends (Run._end), when every run holds its whole conversation",
        f"# generated by `bench/run.py --profile` on {dt.date.today()}; CPython {platform.python_version()}",
        f"# traced growth at the snapshot: {live / 1024 / n:.1f} KiB per run; peak growth: {peak / 1024 / n:.1f} KiB"
        " per run (the harness's tracemalloc figure)",
        "",
        "## by the innermost hookline (or adapter) line on the allocating stack, KiB per run",
        "",
    ]
    total = sum(by_line.values())
    for key, size in sorted(by_line.items(), key=lambda kv: -kv[1])[:30]:
        lines.append(f"{size / 1024 / n:8.2f} KiB {size / total * 100:5.1f}%  {key}")
    lines += ["", "## by the allocating line itself, KiB per run", ""]
    for key, size in sorted(by_alloc.items(), key=lambda kv: -kv[1])[:20]:
        lines.append(f"{size / 1024 / n:8.2f} KiB {size / total * 100:5.1f}%  {key}")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / name).write_text("\n".join(lines) + "\n")
    log(f"wrote {out_dir / name} ({live / 1024 / n:.1f} KiB per live run)")


def _short_path(file: str) -> str:
    for marker in ("/src/hookline/", "/site-packages/", "/lib/python3.11/"):
        if marker in file:
            rest = file.split(marker, 1)[1]
            return "hookline/" + rest if marker == "/src/hookline/" else rest
    return os.path.basename(file)


# -- main ------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:  # noqa: C901
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="rounds, each running every framework once per configuration (default 2; --quick: 1)",
    )
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test, not a measurement)")
    ap.add_argument("--skip-peers", action="store_true", help="hookline and the floor only")
    ap.add_argument("--only", default="", help="comma-separated framework keys (e.g. hookline,baseline-loop)")
    ap.add_argument("--configs", default="", help="comma-separated configurations: t10,t10-async,t3-sleep,t50,t200")
    ap.add_argument(
        "--out",
        type=Path,
        default=ROOT,
        help="root to write into: OUT/BENCHMARKS.md, OUT/docs/perf/*.png, OUT/bench/results/",
    )
    ap.add_argument("--peers-dir", type=Path, default=DEFAULT_PEERS_DIR)
    ap.add_argument("--peers-venv", type=Path, default=DEFAULT_PEERS_VENV)
    ap.add_argument(
        "--jobs", type=int, default=None, help="benchmarks run side by side (default 1; --quick: 2). Figures need 1."
    )
    ap.add_argument(
        "--tm-rounds",
        type=int,
        default=1,
        help="rounds that run the tracemalloc phase (default 1: traced memory barely varies, and it is the"
        " slowest phase of the peers)",
    )
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per benchmark process")
    ap.add_argument("--report", type=Path, nargs="*", help="only render the report from these JSONL files")
    ap.add_argument("--profile", action="store_true", help="write OUT/docs/perf/profile.txt and exit")
    ap.add_argument("--profile-runs", type=int, default=2000)
    ap.add_argument("--_profile-one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    out: Path = args.out.resolve()
    peers_dir: Path = args.peers_dir.resolve()
    if args._profile_one:
        name, T, runs, persist = args._profile_one.split(":")
        if name == "memory.txt":
            memory_profile(out / "docs" / "perf", name, int(T), int(runs), peers_dir)
        else:
            profile(out / "docs" / "perf", name, int(T), int(runs), peers_dir, persist == "1")
        return 0
    if args.profile:
        profile_all(out / "docs" / "perf", args.profile_runs, peers_dir)
        return 0
    if not (peers_dir / "bench_common.py").exists():
        log(f"the shared harness is missing: {peers_dir / 'bench_common.py'} (set HOOKLINE_PEERS)")
        return 2

    t_start = time.perf_counter()
    results_dir = out / "bench" / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    tmp_root = tempfile.mkdtemp(prefix="hookline-bench-")
    peers_python = None
    command = " ".join(["bench/run.py", *(argv if argv is not None else sys.argv[1:])])
    try:
        if args.report is not None:
            records = [json.loads(ln) for f in args.report for ln in f.read_text().splitlines() if ln.startswith("{")]
            results_path = args.report[0]
            rounds = max((r.get("round", 1) for r in records), default=1)
            sidecar = results_path.with_suffix(".meta.json")
            saved = json.loads(sidecar.read_text()) if sidecar.exists() else {}
            machine = saved.get("machine") or machine_info(sys.executable, None, tmp_root)
            command = saved.get("command", command)
            args.quick = saved.get("quick", False)
            if "elapsed_min" in saved:
                t_start -= saved["elapsed_min"] * 60
        else:
            frameworks = [f for f in FRAMEWORKS if not (args.skip_peers and f.kind == "peer")]
            if args.only:
                keep = set(args.only.split(","))
                frameworks = [f for f in frameworks if f.key in keep]
            configs = QUICK if args.quick else FULL
            if args.rounds is None:
                args.rounds = 1 if args.quick else 2
            if args.configs:
                keep = set(args.configs.split(","))
                configs = [c for c in configs if c.key in keep]
            if any(f.kind == "peer" for f in frameworks):
                peers_python = str(ensure_peers_venv(args.peers_venv, peers_dir))
            stamp = dt.datetime.now().strftime("%Y%m%d_%H%M%S")
            results_path = results_dir / f"results_{stamp}.jsonl"
            ctx = {
                "python": sys.executable,
                "peers_python": peers_python,
                "peers_dir": peers_dir,
                "tmp": tmp_root,
                "timeout": args.timeout,
            }
            jobs = args.jobs if args.jobs is not None else (2 if args.quick else 1)
            machine = machine_info(sys.executable, peers_python, tmp_root)  # before: src/ may change meanwhile
            records = run_all(frameworks, configs, args.rounds, ctx, results_path, jobs, args.tm_rounds)
            shutil.copyfile(results_path, results_dir / "latest.jsonl")
            rounds = args.rounds
            saved = {
                "command": command,
                "quick": args.quick,
                "rounds": rounds,
                "elapsed_min": round((time.perf_counter() - t_start) / 60, 1),
                "machine": machine,
            }
            for p in (results_path, results_dir / "latest.jsonl"):
                p.with_suffix(".meta.json").write_text(json.dumps(saved) + "\n")
        elapsed_min = (time.perf_counter() - t_start) / 60
        charts_dir = out / "docs" / "perf"
        charts: dict[str, str] = {}
        try:
            sys.path.insert(0, str(HERE))
            import charts as chartmod

            charts = {title: os.path.relpath(p, out) for title, p in chartmod.draw_all(records, charts_dir).items()}
        except ImportError as exc:  # matplotlib missing: the report goes without charts
            log(f"no charts: {exc}")
        meta = {
            "command": command.strip(),
            "quick": args.quick,
            "rounds": rounds,
            "elapsed_min": elapsed_min,
            "results": os.path.relpath(results_dir / "latest.jsonl", out) if args.report is None else str(results_path),
            "machine": machine,
        }
        report = render(records, meta, charts)
        (out / "BENCHMARKS.md").write_text(report)
        log(f"wrote {out / 'BENCHMARKS.md'} ({elapsed_min:.1f} min)")
        for t in evaluate_targets(records):
            log(f"  {t['status']:12s} {t['target']}: {t['detail']} {t['margin']}")
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
