"""The multi-process load test: N `hookline serve` processes behind one PostgreSQL.

Run from the project root (PostgreSQL on 127.0.0.1:5432, or HOOKLINE_BENCH_POSTGRES):

    .venv/bin/python bench/scaleout/run.py            # N = 1, 2, 4; 2,000 runs each (2-3 minutes)
    .venv/bin/python bench/scaleout/run.py --short    # 200 runs each (about 15 s)

For each N, a fresh database and N server processes (`hookline serve
bench/scaleout/agent.py:agent`: a 50 ms fake model, two tool turns a run). The runs go
round-robin over the processes, `--concurrency` at a time, each in a new session, over
HTTP: `POST /runs` as SSE on process i; as soon as its first event arrives, a follower
opens `/events/stream` (with that `Last-Event-ID`) on process i+1, so with N > 1 every
follower reads a run of another process (LISTEN/NOTIFY); with N = 1 it reads the
process's own run (the in-process channel).

Reported per N:
- runs/s: runs finished over the wall time from the first run's start to the last's end;
- commit -> follower latency of the live events (p50, p99, max): from the event's
  `created_at` (stamped in the server just before its append's transaction, so the figure
  includes the commit) to the follower's parsing of its frame; events already stored when
  the follower connected are not live and not counted;
- model -> follower latency of the answer's deltas (p50, p99): from the model's yielding a
  delta (its text is the `time.monotonic_ns()` of that moment) to the follower's parsing of
  its frame; with N > 1 they cross processes over PostgreSQL's NOTIFY (`live_bus.py`);
- checks: every session's log is seq 1..n without a gap, every event id once, every run
  the same number of events; every follower got every event after its Last-Event-ID
  (markers aside) once, in order, and its stream ended.

The client is bare asyncio HTTP/1.1 in this process, so that its cost stays small next
to the servers'; it shares the machine with them and with PostgreSQL. Each process holds
its pool (up to 10 connections), one connection for all its run locks and one listener:
keep 12 N (plus the checker's one) under the server's `max_connections`.
Results and their reading: RESULTS.md beside this file, and docs/scaling.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]

HERE = Path(__file__).resolve().parent
AGENT = HERE / "agent.py"
SERVER = os.environ.get("HOOKLINE_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432")


# -- a bare HTTP/1.1 client ----------------------------------------------------------------------


@dataclass
class Frame:
    """One server-sent event: its `id:` (None for deltas) and its JSON."""

    id: int | None
    data: dict[str, Any]
    at: float
    """time.time() when the client parsed it."""
    at_ns: int
    """time.monotonic_ns() when the client parsed it."""


async def _open(
    url: str, method: str, path: str, body: bytes = b"", headers: str = ""
) -> tuple[Any, Any, int, dict[str, str]]:
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    head = (f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {len(body)}\r\n"
            f"Content-Type: application/json\r\n{headers}\r\n")
    writer.write(head.encode() + body)
    status = int((await reader.readline()).split()[1])
    fields: dict[str, str] = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        fields[name.strip().lower()] = value.strip()
    return reader, writer, status, fields


async def _chunks(reader: Any, fields: dict[str, str]) -> Any:
    if fields.get("transfer-encoding") != "chunked":
        yield await reader.readexactly(int(fields.get("content-length", "0")))
        return
    while size := int((await reader.readline()).strip() or b"0", 16):
        yield await reader.readexactly(size)
        await reader.readexactly(2)


async def call(url: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """One request; answer its status and JSON body."""
    reader, writer, status, fields = await _open(url, method, path, json.dumps(body or {}).encode())
    try:
        data = b"".join([chunk async for chunk in _chunks(reader, fields)])
    finally:
        writer.close()
    return status, json.loads(data) if data else None


async def stream(url: str, method: str, path: str, body: Any = None, headers: str = "") -> Any:
    """Yield the frames of an SSE answer until it ends."""
    payload = json.dumps(body).encode() if body is not None else b""
    reader, writer, status, fields = await _open(url, method, path, payload,
                                                 "Accept: text/event-stream\r\n" + headers)
    if status != 200:
        writer.close()
        raise RuntimeError(f"{method} {path} answered {status}")
    buffer = b""
    try:
        async for chunk in _chunks(reader, fields):
            buffer += chunk
            while b"\n\n" in buffer:
                raw, buffer = buffer.split(b"\n\n", 1)
                frame = _parse(raw)
                if frame is not None:
                    yield frame
    finally:
        writer.close()


def _parse(raw: bytes) -> Frame | None:
    seq, data = None, None
    for line in raw.decode().split("\n"):
        if line.startswith("id: "):
            seq = int(line[4:])
        elif line.startswith("data: "):
            data = line[6:]
    return Frame(seq, json.loads(data), time.time(), time.monotonic_ns()) if data is not None else None


# -- one run and its follower ------------------------------------------------------------------


@dataclass
class Outcome:
    """What the clients of one run saw."""

    session_id: str
    start_seq: int = 0
    followed_at: float = 0.0
    run_frames: list[Frame] = field(default_factory=list)
    follower_frames: list[Frame] = field(default_factory=list)
    error: str = ""


async def one_run(runner: str, follower: str, index: int) -> Outcome:
    """Run in a new session on `runner`, followed from `follower`."""
    status, session = await call(runner, "POST", "/v1/sessions", {"id": f"bench-{index}-{uuid.uuid4().hex[:8]}"})
    outcome = Outcome(session["id"])
    if status != 201:
        outcome.error = f"create answered {status}"
        return outcome
    follow: asyncio.Task[None] | None = None
    async for frame in stream(runner, "POST", f"/v1/sessions/{outcome.session_id}/runs", {"prompt": f"run {index}"}):
        outcome.run_frames.append(frame)
        if follow is None and frame.id is not None:
            outcome.start_seq, outcome.followed_at = frame.id, time.time()
            follow = asyncio.create_task(_follow(follower, outcome))
    if follow is not None:
        await follow
    return outcome


async def _follow(url: str, outcome: Outcome) -> None:
    path = f"/v1/sessions/{outcome.session_id}/events/stream"
    async for frame in stream(url, "GET", path, headers=f"Last-Event-ID: {outcome.start_seq}\r\n"):
        outcome.follower_frames.append(frame)


async def load(urls: list[str], runs: int, concurrency: int) -> tuple[list[Outcome], float]:
    """Send `runs` runs round-robin over `urls`, `concurrency` at a time; return them and the wall time."""
    gate = asyncio.Semaphore(concurrency)

    async def guarded(index: int) -> Outcome:
        async with gate:
            runner, follower = urls[index % len(urls)], urls[(index + 1) % len(urls)]
            try:
                return await one_run(runner, follower, index)
            except (OSError, RuntimeError, asyncio.IncompleteReadError) as exc:
                return Outcome(f"failed-{index}", error=f"{type(exc).__name__}: {exc}")

    started = time.perf_counter()
    outcomes = await asyncio.gather(*(guarded(i) for i in range(runs)))
    return list(outcomes), time.perf_counter() - started


# -- checks and figures --------------------------------------------------------------------------


async def check_logs(dsn: str, outcomes: list[Outcome]) -> list[str]:
    """Every log gap-free and every event once; every follower complete, once, in order."""
    problems = [f"{o.session_id}: {o.error}" for o in outcomes if o.error]
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("SELECT session_id, array_agg(seq ORDER BY seq) AS seqs, count(DISTINCT id) AS ids,"
                                " array_agg(kind ORDER BY seq) AS kinds FROM hookline_events GROUP BY session_id")
    finally:
        await conn.close()
    logs = {r["session_id"]: r for r in rows}
    sizes = {len(r["seqs"]) for r in rows}
    if len(sizes) > 1:
        problems.append(f"runs stored different numbers of events: {sorted(sizes)}")
    for outcome in outcomes:
        if outcome.error:
            continue
        log = logs.get(outcome.session_id)
        if log is None:
            problems.append(f"{outcome.session_id}: nothing stored")
            continue
        seqs = list(log["seqs"])
        if seqs != list(range(1, len(seqs) + 1)) or log["ids"] != len(seqs):
            problems.append(f"{outcome.session_id}: seqs {seqs}, {log['ids']} distinct ids")
        shown = [s for s, k in zip(seqs, log["kinds"], strict=True) if k != "marker" and s > outcome.start_seq]
        got = [f.id for f in outcome.follower_frames if f.id is not None]
        if got != shown:
            problems.append(f"{outcome.session_id}: the follower got {got}, the log holds {shown}")
        ran = [f.id for f in outcome.run_frames if f.id is not None]
        if ran != [s for s, k in zip(seqs, log["kinds"], strict=True) if k != "marker"]:
            problems.append(f"{outcome.session_id}: the run's own stream got {ran}")
        problems += _delta_problems(outcome)
    return problems


def _deltas(frames: list[Frame]) -> list[str]:
    return [f.data["parts"][0]["text"] for f in frames if f.data.get("kind") == "delta"]


def _delta_problems(outcome: Outcome) -> list[str]:
    """The follower's deltas: the run's, from the first, in order, none twice (the stored answer may overtake
    the last ones across processes: then they are dropped, and the answer holds them)."""
    ran, followed = _deltas(outcome.run_frames), _deltas(outcome.follower_frames)
    if followed != ran[:len(followed)]:
        return [f"{outcome.session_id}: the follower's deltas {followed} are not the run's {ran} from the first"]
    return []


def latencies(outcomes: list[Outcome]) -> list[float]:
    """Milliseconds from each live event's `created_at` to its follower's frame."""
    found = []
    for outcome in outcomes:
        for frame in outcome.follower_frames:
            if frame.id is None or "created_at" not in frame.data:  # a delta, or a live event's "stored" frame
                continue
            created = datetime.fromisoformat(frame.data["created_at"]).timestamp()
            if created >= outcome.followed_at:
                found.append((frame.at - created) * 1000)
    return found


def delta_latencies(outcomes: list[Outcome]) -> list[float]:
    """Milliseconds from the model's yielding each delta to its follower's frame."""
    return [(frame.at_ns - int(frame.data["parts"][0]["text"].rstrip("|"))) / 1e6
            for outcome in outcomes for frame in outcome.follower_frames if frame.data.get("kind") == "delta"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# -- the servers ---------------------------------------------------------------------------------


class Servers:
    """N `hookline serve` processes on one database, on free ports of 127.0.0.1 (stderr in `workdir`)."""

    def __init__(self, count: int, dsn: str, workdir: Path) -> None:
        hookline = shutil.which("hookline", path=str(Path(sys.executable).parent)) or "hookline"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HOOKLINE_", "OPENAI_"))}
        self.logs = [workdir / f"serve-{index}.log" for index in range(count)]
        self.processes = []
        for log in self.logs:
            with log.open("w") as stderr:
                self.processes.append(subprocess.Popen(
                    [hookline, "serve", f"{AGENT}:agent", "--port", "0", "--db", dsn], cwd=workdir, env=env,
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr))
        self.urls = [self._url(p, log) for p, log in zip(self.processes, self.logs, strict=True)]

    @staticmethod
    def _url(process: subprocess.Popen[bytes], log: Path) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            found = re.search(r"on (http://127\.0\.0\.1:\d+)", log.read_text())
            if found and _answers(found.group(1)):  # listening, but is the app up yet?
                return found.group(1)
            time.sleep(0.05)
        raise RuntimeError(f"hookline serve did not start: {log.read_text()[-2000:]}")

    def stop(self) -> None:
        """SIGTERM every server; kill one that takes more than 10 s."""
        for process in self.processes:
            process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _answers(url: str) -> bool:
    try:
        status, _ = asyncio.run(call(url, "GET", "/healthz"))
    except OSError:
        return False
    return status == 200


def cpu_seconds(servers: list[subprocess.Popen[bytes]]) -> dict[str, float]:
    """CPU seconds used so far by the servers, PostgreSQL's processes, and this client (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")

    def used(pid: int) -> float:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / tick

    postgres = [int(p) for p in os.listdir("/proc") if p.isdigit() and _command(int(p)).startswith("postgres")]
    busy = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return {"servers": sum(used(p.pid) for p in servers), "postgres": sum(used(p) for p in postgres),
            "client": time.process_time(), "machine": (sum(busy) - busy[3] - busy[4]) / tick}


def _command(pid: int) -> str:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""
    return command.split(":", 1)[0].rsplit("/", 1)[-1]  # a backend's is "postgres: 15/main: user db ..."


async def _admin(statement: str) -> None:
    conn = await asyncpg.connect(f"{SERVER}/postgres")
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


async def measure(count: int, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """One N: a fresh database, N servers, a warm-up, the two loads, the checks."""
    workdir.mkdir(parents=True, exist_ok=True)
    name = f"hookline_scaleout_{uuid.uuid4().hex[:10]}"
    await _admin(f'CREATE DATABASE "{name}"')
    dsn = f"{SERVER}/{name}"
    servers = await asyncio.to_thread(Servers, count, dsn, workdir)
    try:
        warm, _ = await load(servers.urls, 4 * count, 4 * count)  # pools, schema, imports
        if any(o.error for o in warm):
            raise RuntimeError(f"the warm-up failed: {[o.error for o in warm if o.error][:3]}")
        # No cyclic collection in this process while it measures: one over the outcomes kept
        # for the checks paused it 0.1-0.3 s, every stream with it, and counted as latency.
        gc.disable()
        try:
            before = cpu_seconds(servers.processes)
            outcomes, seconds = await load(servers.urls, args.runs, args.concurrency)
            cpu = {k: v - before[k] for k, v in cpu_seconds(servers.processes).items()}
            light, _ = await load(servers.urls, args.light_runs, args.light_concurrency)
        finally:
            gc.enable()
        problems = await check_logs(dsn, outcomes + light)
    finally:
        await asyncio.to_thread(servers.stop)
        await _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return {
        "processes": count, "runs": len(outcomes) + len(light), "seconds": round(seconds, 2),
        "runs_per_s": round(len(outcomes) / seconds, 1),
        "run_events": sum(len([f for f in o.run_frames if f.id is not None]) for o in outcomes + light),
        "saturated": figures(latencies(outcomes)), "light": figures(latencies(light)),
        "deltas_saturated": figures(delta_latencies(outcomes)), "deltas_light": figures(delta_latencies(light)),
        "machine_cores": round(cpu["machine"] / seconds, 2), "server_cores": round(cpu["servers"] / seconds, 2),
        "server_ms_per_run": round(cpu["servers"] / len(outcomes) * 1000, 1),
        "machine_ms_per_run": round(cpu["machine"] / len(outcomes) * 1000, 1),
        "postgres_ms_per_run": round(cpu["postgres"] / len(outcomes) * 1000, 1),
        "client_ms_per_run": round(cpu["client"] / len(outcomes) * 1000, 1),
        "problems": problems[:10], "problem_count": len(problems),
    }


def figures(live: list[float]) -> dict[str, float]:
    """Count, p50, p99 and max of latencies in ms."""
    return {"events": len(live), "p50_ms": round(percentile(live, 0.5), 1), "p99_ms": round(percentile(live, 0.99), 1),
            "max_ms": round(max(live, default=float("nan")), 1)}


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    """The figures as a markdown table."""
    delay = os.environ.get("SCALEOUT_MODEL_DELAY", "0.05")
    lines = [
        f"{args.runs} runs per N at {args.concurrency} in flight (saturated), then {args.light_runs} at"
        f" {args.light_concurrency} in flight (light); model {delay} s a call, 3 calls and 2 tool turns a run;"
        f" {os.cpu_count()} CPUs shared by the servers, PostgreSQL and the client",
        "",
        "| N | runs/s | scaling | CPU busy (cores) | server CPU / run | follower p50 / p99 (saturated) |"
        " follower p50 / p99 (light) | follower delta p50 / p99 (light) | checks |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    base = results[0]["runs_per_s"] if results else 1.0
    for r in results:
        checks = f"{r['runs']} runs, all passed" if not r["problem_count"] else f"{r['problem_count']} problems"
        hot, light, deltas = r["saturated"], r["light"], r["deltas_light"]
        lines.append(
            f"| {r['processes']} | {r['runs_per_s']} | {r['runs_per_s'] / base:.2f}x | {r['machine_cores']} |"
            f" {r['server_ms_per_run']} ms | {hot['p50_ms']} / {hot['p99_ms']} ms | {light['p50_ms']} /"
            f" {light['p99_ms']} ms | {deltas['p50_ms']} / {deltas['p99_ms']} ms | {checks} |")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", action="store_true", help="200 runs per N instead of 2,000")
    parser.add_argument("--runs", type=int, help="runs per N (default 2,000; --short: 200)")
    parser.add_argument("--processes", default="1,2,4", help="the values of N, comma-separated")
    parser.add_argument("--concurrency", type=int, default=32,
                        help="runs in flight at once (saturating)")
    parser.add_argument("--light-concurrency", type=int, default=4, help="runs in flight in the light phase")
    parser.add_argument("--light-runs", type=int, help="runs of the light phase (default: a tenth of --runs)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    args.runs = args.runs or (200 if args.short else 2_000)
    args.light_runs = args.light_runs or max(20, args.runs // 10)
    return args


async def main_async(args: argparse.Namespace) -> list[dict[str, Any]]:
    results = []
    with tempfile.TemporaryDirectory(prefix="hookline-scaleout-") as workdir:  # the servers' logs
        for count in (int(n) for n in args.processes.split(",")):
            result = await measure(count, args, Path(workdir) / f"n{count}")
            print(json.dumps(result), file=sys.stderr, flush=True)
            results.append(result)
    return results


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load_start = os.getloadavg()[0]
    results = asyncio.run(main_async(args))
    print(report(results, args))
    for result in results:
        for problem in result["problems"]:
            print(f"N={result['processes']}: {problem}")
    if args.json:
        meta = describe_run(args, sys.argv[1:] if argv is None else argv, load_start)
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    return 1 if any(r["problem_count"] for r in results) else 0


def describe_run(args: argparse.Namespace, argv: list[str], load_start: float) -> dict[str, Any]:
    """What the run was, for the report beside its figures (bench/render.py)."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True)
    return {
        "command": " ".join(["bench/scaleout/run.py", *argv]),
        "date": datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "commit": commit.stdout.strip() or None,
        "runs": args.runs, "concurrency": args.concurrency,
        "light_runs": args.light_runs, "light_concurrency": args.light_concurrency,
        "model_delay_s": float(os.environ.get("SCALEOUT_MODEL_DELAY", "0.05")), "cpus": os.cpu_count(),
        "load1_start": round(load_start, 2), "load1_end": round(os.getloadavg()[0], 2),
    }


if __name__ == "__main__":
    sys.exit(main())
