"""Measuring: which frameworks and configurations run, and running them, alternated, round after round.

Each benchmark is one `bench/harness.py ADAPTER ...` process (which starts one more per phase):
hookline and the floor with hookline's interpreter, the peers with the peers' venv
(`bench/peers/setup.sh`). Every round runs, for each configuration, every framework once, in
an order rotated from round to round, so that a noisy minute hurts all frameworks alike. Each
record is the harness's JSON line plus `config`, `round`, `label`, `kind`, `load1` (the 1-minute
load average when it started), `bench_wall_s` and `ts`, appended to the results file as it comes.
"""

# ruff: noqa: RUF001

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_PEERS_VENV = Path(os.environ.get("PEERS_VENV", Path.home() / ".cache" / "hookline-peers"))


@dataclass(frozen=True)
class Framework:
    """One framework measured: its adapter, and how the report names it."""

    key: str
    """The `framework` field of the harness's JSON line."""
    label: str
    adapter: str
    """The harness's ADAPTER argument."""
    kind: str
    """"hookline", "floor" or "peer" (peers run in the peers' venv)."""


FRAMEWORKS = [
    Framework("hookline", "hookline", "hookline", "hookline"),
    Framework("baseline-loop", "floor (hand-written loop)", "floor", "floor"),
    Framework("pydantic-ai", "pydantic-ai", "pydantic_ai", "peer"),
    Framework("openai-agents", "openai-agents", "openai_agents", "peer"),
    Framework("haystack", "haystack", "haystack", "peer"),
    Framework("google-adk", "google-adk", "google_adk", "peer"),
    Framework("langgraph", "langgraph create_react_agent", "langgraph", "peer"),
    Framework("langchain-create_agent", "langchain create_agent", "langchain", "peer"),
]
BY_KEY = {f.key: f for f in FRAMEWORKS}


@dataclass(frozen=True)
class Config:
    """One configuration of the scenario: T, the tool's variant, the phases and their sizes."""

    key: str
    T: int
    tool: str
    phases: str
    runs: int
    warmup: int
    conc: int = 500
    db_runs: int = 50
    db_warmup: int = 5
    peer_runs: int | None = None
    """Fewer runs for the peers, where one run takes 0.1–1 s."""
    peer_warmup: int | None = None
    features: str = ""
    """`BENCH_FEATURES` for hookline; a configuration with features runs hookline alone."""

    def sizes(self, fw: Framework) -> tuple[int, int]:
        """(runs, warm-up runs) of `fw` in this configuration."""
        if fw.kind == "peer" and self.peer_runs is not None:
            return self.peer_runs, self.peer_warmup if self.peer_warmup is not None else self.warmup
        return self.runs, self.warmup

    def runs_for(self, fw: Framework) -> bool:
        """Whether `fw` runs in this configuration."""
        return not self.features or fw.kind == "hookline"


FEATURES = [  # (configuration, BENCH_FEATURES, phase): hookline with one feature on, T=10, sync tool
    ("f-hooks", "hooks", "seq"),
    ("f-stream-nostatus", "stream,nostatus", "seq"),
    ("f-stream", "stream", "seq"),
    ("f-stream-db", "stream", "seqdb"),
    ("f-memory", "memory", "seq"),
    ("f-nostatus", "nostatus", "seqdb"),
    ("f-sqlite-full", "sqlite-full", "seqdb"),
    ("f-tracing", "tracing", "seq"),
    ("f-tracing-content", "tracing-content", "seq"),
    ("f-metrics", "metrics", "seq"),
    ("f-tracing-nosdk", "tracing-nosdk", "seq"),
    ("f-guardrails", "guardrails", "seq"),
    ("f-guardrails-parallel", "guardrails-parallel", "seq"),
    ("f-compaction", "compaction", "seq"),
    ("f-compaction-db", "compaction", "seqdb"),
    ("f-subagent", "subagent", "seq"),
    ("f-subagent-db", "subagent", "seqdb"),
    ("f-handoff", "handoff", "seq"),
    ("f-handoff-db", "handoff", "seqdb"),
]


def _feature_configs(runs: int, warmup: int, db_runs: int, db_warmup: int) -> list[Config]:
    return [
        Config(key, 10, "sync", phase, runs, warmup, db_runs=db_runs, db_warmup=db_warmup, features=features)
        for key, features, phase in FEATURES
    ]


FULL = [
    Config("t10", 10, "sync", "seq,conc,tm,seqdb", 300, 30),
    Config("t10-async", 10, "async", "seq", 200, 20),
    Config("t3-sleep", 3, "sleep", "seq", 30, 3),
    Config("t50", 50, "sync", "seq", 100, 10, peer_runs=60, peer_warmup=6),
    Config("t200", 200, "sync", "seq", 100, 10, peer_runs=12, peer_warmup=2),
    *_feature_configs(300, 30, 50, 5),
]
QUICK = [  # smoke-test sizes: every phase and configuration runs, nothing is measured
    Config("t10", 10, "sync", "seq,conc,tm,seqdb", 3, 1, conc=5, db_runs=3, db_warmup=1),
    Config("t10-async", 10, "async", "seq", 3, 1),
    Config("t3-sleep", 3, "sleep", "seq", 2, 1),
    Config("t50", 50, "sync", "seq", 3, 1),
    Config("t200", 200, "sync", "seq", 2, 1),
    *_feature_configs(3, 1, 3, 1),
]


@dataclass(frozen=True)
class Context:
    """Where and how the benchmarks of one session run."""

    python: str
    """hookline's (and the floor's) interpreter."""
    peers_python: str | None
    tmp: str
    """TMPDIR of the benchmarks (their SQLite files)."""
    timeout: int = 3600
    """Seconds per benchmark process."""


def log(message: str) -> None:
    """Progress on stderr."""
    print(message, file=sys.stderr, flush=True)


def ensure_peers_venv(venv: Path) -> str:
    """The peers' python, after building their venv if it is missing or its pins changed (a minute or two)."""
    log(f"the peers' venv: {venv} (bench/peers/setup.sh; pip-installs the peers when missing or outdated)")
    done = subprocess.run(["bash", str(HERE / "peers" / "setup.sh"), str(venv)], capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise SystemExit(f"bench/peers/setup.sh could not build {venv} (exit status {done.returncode}):\n{tail}\n"
                         "Fix the cause, or run without the peers: --skip-peers")
    return done.stdout.strip().splitlines()[-1]


def command(fw: Framework, cfg: Config, ctx: Context) -> list[str]:
    """The harness command that measures `fw` in `cfg`."""
    runs, warmup = cfg.sizes(fw)
    python = ctx.peers_python if fw.kind == "peer" else ctx.python
    if python is None:
        raise RuntimeError(f"{fw.key} needs the peers' venv")
    sizes = {"T": cfg.T, "tool": cfg.tool, "phases": cfg.phases, "runs": runs, "warmup": warmup, "conc": cfg.conc,
             "db-runs": cfg.db_runs, "db-warmup": cfg.db_warmup}
    return [python, str(HERE / "harness.py"), fw.adapter, *(a for k, v in sizes.items() for a in (f"--{k}", str(v)))]


def _execute(cmd: list[str], env: dict[str, str], timeout: int) -> dict[str, Any]:
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": f"exit status {done.returncode}: " + " | ".join(done.stderr.strip().splitlines()[-3:])}
    record: dict[str, Any] = json.loads(lines[-1])
    return record


def run_one(fw: Framework, cfg: Config, rnd: int, ctx: Context) -> dict[str, Any]:
    """Measure `fw` in `cfg` once: the harness's record, annotated."""
    env = {**os.environ, "TMPDIR": ctx.tmp, "PYTHONWARNINGS": "ignore", "BENCH_FEATURES": cfg.features}
    load1 = round(os.getloadavg()[0], 2)
    started = time.perf_counter()
    record = {"framework": fw.key, "T": cfg.T, "tool": cfg.tool}
    record.update(_execute(command(fw, cfg, ctx), env, ctx.timeout))
    record.update(config=cfg.key, round=rnd, label=fw.label, kind=fw.kind, load1=load1,
                  bench_wall_s=round(time.perf_counter() - started, 1),
                  ts=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
    if cfg.features:
        record["features"] = cfg.features
    for key in [k for k in record if k == "error" or k.endswith("_error")]:
        log(f"   ! {fw.key} {cfg.key}: {key} {record[key]}")
    return record


def schedule(
    frameworks: list[Framework], configs: list[Config], rounds: int, tm_rounds: int
) -> Iterator[tuple[int, Config, Framework]]:
    """(round, configuration, framework) in the order they run: frameworks rotated from round to round.

    The tracemalloc phase runs in the first `tm_rounds` rounds only: traced memory barely varies,
    and under tracemalloc the peers' concurrent runs take minutes.
    """
    for rnd in range(1, rounds + 1):
        shift = (rnd - 1) % len(frameworks)
        order = frameworks[shift:] + frameworks[:shift]
        for cfg in configs:
            if rnd > tm_rounds and "tm" in cfg.phases.split(","):
                cfg = replace(cfg, phases=",".join(p for p in cfg.phases.split(",") if p != "tm"))
            yield from ((rnd, cfg, fw) for fw in order if cfg.runs_for(fw))


@dataclass
class Session:
    """One measuring session: what runs, where records go."""

    frameworks: list[Framework]
    configs: list[Config]
    rounds: int
    ctx: Context
    results: Path
    tm_rounds: int = 1
    records: list[dict[str, Any]] = field(default_factory=list)

    def run(self) -> list[dict[str, Any]]:
        """Run everything, appending each record to `results` as it comes."""
        plan = list(schedule(self.frameworks, self.configs, self.rounds, self.tm_rounds))
        started = time.perf_counter()
        with self.results.open("a") as sink:
            for done, (rnd, cfg, fw) in enumerate(plan, 1):
                log(f"[{done}/{len(plan)}] round {rnd} {cfg.key:17s} {fw.key} ...")
                record = run_one(fw, cfg, rnd, self.ctx)
                if "per_turn_us" in record or "db_per_turn_us" in record:
                    figure = record.get("per_turn_us", record.get("db_per_turn_us"))
                    so_far = time.perf_counter() - started
                    log(f"   {figure} µs/turn ({record['bench_wall_s']} s; {so_far:.0f} s so far)")
                self.records.append(record)
                sink.write(json.dumps(record) + "\n")
                sink.flush()
        return self.records
