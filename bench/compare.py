"""Comparing: records grouped by framework and configuration, medians across rounds, the targets, feature costs.

A figure is the median of the round medians, with their [min–max]. The targets are those of
the "Benchmarks" issue and of the later issue "A house that is easy to live in", which
tightened them; each is checked on the medians and, to show how stable it is, on every round
alone.
"""

# ruff: noqa: RUF001, RUF002

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from measure import BY_KEY, FRAMEWORKS

Spread = tuple[float, float, float]
"""(median, min, max) across rounds."""


def config_of(r: dict[str, Any]) -> str:
    """The configuration of a record (records of older runners have no `config` field)."""
    if r.get("config"):
        return str(r["config"])
    tool = r.get("tool", "sync")
    known = {("sync", 10): "t10", ("async", 10): "t10-async", ("sleep", 3): "t3-sleep"}
    return known.get((tool, r["T"]), f"t{r['T']}" if tool == "sync" else f"t{r['T']}-{tool}")


class Agg:
    """Records grouped by (framework, configuration); figures are medians across rounds."""

    def __init__(self, records: Iterable[dict[str, Any]]) -> None:
        self.groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for r in records:
            self.groups[(r["framework"], config_of(r))].append(r)

    def values(self, fw: str, cfg: str, key: str) -> list[float]:
        """The figure `key` of every round."""
        return [r[key] for r in self.groups.get((fw, cfg), []) if r.get(key) is not None]

    def med(self, fw: str, cfg: str, key: str) -> float | None:
        """The median across rounds, None when never measured."""
        vals = self.values(fw, cfg, key)
        return statistics.median(vals) if vals else None

    def spread(self, fw: str, cfg: str, key: str) -> Spread | None:
        """(median, min, max) across rounds."""
        vals = self.values(fw, cfg, key)
        return (statistics.median(vals), min(vals), max(vals)) if vals else None

    def frameworks(self) -> list[str]:
        """The frameworks measured: hookline, the floor, then the peers."""
        seen = {fw for fw, _ in self.groups}
        return [f.key for f in FRAMEWORKS if f.key in seen] + sorted(seen - set(BY_KEY))

    def peers(self) -> list[str]:
        """The peers measured."""
        return [fw for fw in self.frameworks() if is_peer(fw)]

    def fastest_peer(self, cfg: str, key: str) -> tuple[str, float] | None:
        """The peer with the lowest median of `key`, and that median."""
        found = [(v, fw) for fw in self.peers() if (v := self.med(fw, cfg, key)) is not None]
        if not found:
            return None
        value, fw = min(found)
        return fw, value

    def rounds(self) -> list[int]:
        """The rounds present."""
        return sorted({r.get("round", 1) for rs in self.groups.values() for r in rs})

    def version(self, fw: str) -> str:
        """The version the harness reported for `fw`."""
        return next((str(r["version"]) for (f, _), rs in self.groups.items() if f == fw for r in rs
                     if r.get("version")), "")


def is_peer(fw: str) -> bool:
    """Whether `fw` is a peer (a framework this file does not know counts as one)."""
    return fw not in BY_KEY or BY_KEY[fw].kind == "peer"


def label(fw: str) -> str:
    """How the report names `fw`."""
    return BY_KEY[fw].label if fw in BY_KEY else fw


# -- numbers as text --------------------------------------------------------------------------


def num(x: float | None) -> str:
    """A figure with as many digits as it deserves: 12,345 / 123 / 12.3 / 1.23."""
    if x is None:
        return "–"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"


def cell(s: Spread | None, scale: float = 1.0) -> str:
    """A median with its [min–max] across rounds."""
    if s is None:
        return "–"
    m, lo, hi = (v * scale for v in s)
    return num(m) if lo == hi else f"{num(m)} [{num(lo)}–{num(hi)}]"


def ratio(a: float | None, b: float | None) -> str:
    """a / b as "1.85×"."""
    if a is None or b is None or b == 0:
        return "–"
    r = a / b
    if r < 0.1:
        return f"{r:.2g}×"
    return f"{r:.2f}×" if r < 10 else f"{r:.0f}×"


# -- the targets of the issue -----------------------------------------------------------------

Measured = tuple[float, float, str]
"""(value, bound, how it was measured): the target is met when value <= bound."""


@dataclass(frozen=True)
class Target:
    """One target: its text, and how to measure it from the records."""

    text: str
    measure: Callable[[Agg], Measured | None]


def _vs_floor(key: str, factor: float, unit: str, note: str = "", cfg: str = "t10") -> Callable[[Agg], Measured | None]:
    def measure(a: Agg) -> Measured | None:
        hl, fl = a.med("hookline", cfg, key), a.med("baseline-loop", cfg, key)
        if hl is None or fl is None:
            return None
        against = f"{factor:g} × floor" if factor != 1 else "the floor's"
        return hl, factor * fl, f"{num(hl)} {unit} vs {against} {num(fl)} {unit}{note}"

    return measure


def _vs_fastest_peer(key: str, unit: str, cfg: str = "t10") -> Callable[[Agg], Measured | None]:
    """hookline's figure (in configuration `cfg`) against a fifth of the fastest peer's at T=10."""

    def measure(a: Agg) -> Measured | None:
        hl, fp = a.med("hookline", cfg, key), a.fastest_peer("t10", key)
        if hl is None or fp is None:
            return None
        return hl, fp[1] / 5, f"{num(hl)} {unit} vs {fp[0]} {num(fp[1])} {unit} / 5"

    return measure


def _growth(a: Agg) -> Measured | None:
    t10, t200 = a.med("hookline", "t10", "per_turn_us"), a.med("hookline", "t200", "per_turn_us")
    if t10 is None or t200 is None:
        return None
    return t200 / t10, 1.2, f"{num(t200)} / {num(t10)} µs"


def _growth_over_floor(a: Agg) -> Measured | None:
    """hookline's own per-turn cost (its time minus the floor's) at T=200 against T=10.

    The scenario's model counts the whole history on every call, so the floor grows too; what
    is over the floor is the framework's.
    """
    hl10, fl10, hl200, fl200 = (a.med(fw, cfg, "per_turn_us") for cfg in ("t10", "t200")
                                for fw in ("hookline", "baseline-loop"))
    if hl10 is None or fl10 is None or hl200 is None or fl200 is None or hl10 <= fl10:
        return None
    over10, over200 = hl10 - fl10, hl200 - fl200
    return over200 / over10, 1.15, f"{num(over200)} µs over the floor at T=200 vs {num(over10)} at T=10"


def _conc_wall(a: Agg) -> Measured | None:
    hl, fl = a.med("hookline", "t10", "conc_wall_s"), a.med("baseline-loop", "t10", "conc_wall_s")
    if hl is None or fl is None:
        return None
    return hl, 1.2 * fl, f"{hl:.2f} s vs 1.2 × floor {fl:.2f} s"


TARGETS = [
    Target("per-turn overhead ≤ 1/5 of the fastest peer's (T=10)", _vs_fastest_peer("per_turn_us", "µs")),
    Target("per-turn overhead ≤ 3× the floor's (T=10)", _vs_floor("per_turn_us", 3, "µs")),
    Target("per-turn cost at T=200 within 1.2× of T=10", _growth),
    Target("500-concurrent wall time ≤ 1.2× the floor's", _conc_wall),
    Target("CPU per turn (500 concurrent) ≤ 1/5 of the fastest peer's",
           _vs_fastest_peer("conc_cpu_us_per_turn", "µs")),
    Target("memory per concurrent run ≤ 2× the floor's (tracemalloc)",
           _vs_floor("tracemalloc_per_run_kib", 2, "KiB", " (tracemalloc peak per run)")),
    Target("memory per concurrent run ≤ 2× the floor's (peak RSS)",
           _vs_floor("rss_peak_growth_mib", 2, "MiB", " (peak RSS growth, 500 runs)")),
    Target("SQLite-persisted run no slower than the floor's sqlite3 run",
           _vs_floor("db_run_us_median", 1, "µs", " (stdlib sqlite3)")),
    Target("SQLite-persisted run ≥ 5× faster than the fastest peer's session store",
           _vs_fastest_peer("db_run_us_median", "µs")),
]


def _stream_status(a: Agg) -> Measured | None:
    on, plain = a.med("hookline", "f-stream", "per_turn_us"), a.med("hookline", "t10", "per_turn_us")
    if on is None or plain is None:
        return None
    return on, 2 * plain, f"{num(on)} µs vs 2 × plain {num(plain)} µs"


LIVE_TARGETS = [
    Target("streaming with status events (`.stream()`) ≤ 2× a plain `await` (T=10)", _stream_status),
]
"""The performance targets of the issue "The live stream is the product"."""


HOUSE_TARGETS = [
    Target("per-turn overhead ≤ 1.5× the floor's (T=10)", _vs_floor("per_turn_us", 1.5, "µs")),
    Target("per-turn overhead ≤ 1.5× the floor's (T=10, async tool)",
           _vs_floor("per_turn_us", 1.5, "µs", cfg="t10-async")),
    Target("history growth: cost over the floor at T=200 ≤ 1.15× that at T=10", _growth_over_floor),
    Target("memory per concurrent run ≤ 1.5× the floor's (tracemalloc)",
           _vs_floor("tracemalloc_per_run_kib", 1.5, "KiB", " (tracemalloc peak per run)")),
    Target("SQLite-persisted run ≥ 5× faster than the fastest peer's session store (synchronous=NORMAL)",
           _vs_fastest_peer("db_run_us_median", "µs")),
    Target("SQLite-persisted run ≥ 5× faster than the fastest peer's session store (synchronous=FULL)",
           _vs_fastest_peer("db_run_us_median", "µs", cfg="f-sqlite-full")),
]
"""The performance targets of the issue "A house that is easy to live in" (item 6)."""


def _margin(value: float, bound: float) -> str:
    if value <= bound:
        return f"{bound / value:.2f}× headroom" if value > 0 else "∞ headroom"
    if bound <= 0:
        return f"over a bound of {num(bound)}"
    return f"{value / bound:.2f}× over the bound (+{(value / bound - 1) * 100:.0f}%)"


def _rounds_met(target: Target, records: list[dict[str, Any]], rounds: list[int]) -> str:
    met = []
    for rnd in rounds:
        got = target.measure(Agg(r for r in records if r.get("round", 1) == rnd))
        if got is not None:
            met.append(got[0] <= got[1])
    return f"{sum(met)}/{len(met)}" if met else ""


def evaluate_targets(records: list[dict[str, Any]], targets: list[Target] = TARGETS) -> list[dict[str, Any]]:
    """Each target: status ("met", "missed", "not measured"), how it was measured, the margin, rounds met."""
    agg = Agg(records)
    out = []
    for target in targets:
        got = target.measure(agg)
        if got is None:
            out.append({"target": target.text, "status": "not measured", "detail": "", "margin": ""})
            continue
        value, bound, how = got
        out.append({"target": target.text, "status": "met" if value <= bound else "missed", "detail": how,
                    "margin": _margin(value, bound), "value": value, "bound": bound,
                    "rounds": _rounds_met(target, records, agg.rounds())})
    return out


# -- what each feature costs ------------------------------------------------------------------


@dataclass(frozen=True)
class FeatureRow:
    """A feature's cost: hookline's µs per turn without it (`off`) and with it (`on`), each (config, key)."""

    feature: str
    off: tuple[str, str]
    on: tuple[str, str]


PLAIN = ("t10", "per_turn_us")
DURABLE = ("t10", "db_per_turn_us")
FEATURE_ROWS = [
    FeatureRow("hooks: one no-op hook at each of the 7 points", PLAIN, ("f-hooks", "per_turn_us")),
    FeatureRow("streaming: `.stream()` instead of `await` (status events off)", PLAIN,
               ("f-stream-nostatus", "per_turn_us")),
    FeatureRow("status events, while streaming", ("f-stream-nostatus", "per_turn_us"), ("f-stream", "per_turn_us")),
    FeatureRow("streaming with status events, against a plain `await`", PLAIN, ("f-stream", "per_turn_us")),
    FeatureRow("streaming with status events, durable (SQLite): `.stream()` instead of `await`", DURABLE,
               ("f-stream-db", "db_per_turn_us")),
    FeatureRow("a session in memory (`InMemorySessionStore`, a fresh session per run)", PLAIN,
               ("f-memory", "per_turn_us")),
    FeatureRow("a durable session (`SQLiteSessionStore` file, a fresh session per run)", PLAIN, DURABLE),
    FeatureRow("status events, stored in the durable session", ("f-nostatus", "db_per_turn_us"), DURABLE),
    FeatureRow("durability: SQLite `synchronous=FULL` (an fsync per commit) instead of `NORMAL`", DURABLE,
               ("f-sqlite-full", "db_per_turn_us")),
    FeatureRow("tracing: OpenTelemetry SDK, in-memory exporter", PLAIN, ("f-tracing", "per_turn_us")),
    FeatureRow("tracing with content (`include_content=True`)", PLAIN, ("f-tracing-content", "per_turn_us")),
    FeatureRow("metrics: OpenTelemetry SDK `MeterProvider`, in-memory reader", PLAIN, ("f-metrics", "per_turn_us")),
    FeatureRow("instrumented, no SDK configured (`hookline.instrument()` alone)", PLAIN,
               ("f-tracing-nosdk", "per_turn_us")),
    FeatureRow("guardrails: an input, an output and a tool guardrail, each passing", PLAIN,
               ("f-guardrails", "per_turn_us")),
    FeatureRow("guardrails, the input one beside the model call (`parallel=True`)", PLAIN,
               ("f-guardrails-parallel", "per_turn_us")),
    FeatureRow("compaction: a `Compaction` hook that never fires", PLAIN, ("f-compaction", "per_turn_us")),
    FeatureRow("compaction, durable (SQLite)", DURABLE, ("f-compaction-db", "db_per_turn_us")),
    FeatureRow("the run as a sub-agent of a lead agent (two more model calls a run)", PLAIN,
               ("f-subagent", "per_turn_us")),
    FeatureRow("the run as a sub-agent, durable: in a child session of the lead's", DURABLE,
               ("f-subagent-db", "db_per_turn_us")),
    FeatureRow("a handoff to the agent that runs the scenario (`Team`), against a session in memory",
               ("f-memory", "per_turn_us"), ("f-handoff", "per_turn_us")),
    FeatureRow("a handoff, durable (SQLite)", DURABLE, ("f-handoff-db", "db_per_turn_us")),
]


def feature_costs(agg: Agg) -> list[dict[str, Any]]:
    """Each feature row: `off` and `on` spreads of hookline's µs per turn, and the cost (on − off medians)."""
    rows = []
    for row in FEATURE_ROWS:
        off, on = agg.spread("hookline", *row.off), agg.spread("hookline", *row.on)
        cost = on[0] - off[0] if off and on else None
        rows.append({"feature": row.feature, "off": off, "on": on, "cost": cost})
    return rows
