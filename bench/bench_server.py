"""The HTTP server under load: added streaming latency, and many SSE clients at once.

Run from the project root:

    .venv/bin/python bench/bench_server.py            # the full measurement
    .venv/bin/python bench/bench_server.py --small    # a smoke run (seconds)

The server runs in a child process (uvicorn on 127.0.0.1, one worker), so its RSS is
its own and the client does not share its event loop. Its model is a `FunctionModel`
whose `stream()` yields deltas stamped with `time.monotonic_ns()` (one system-wide clock
on Linux), so a client can tell how long each delta took from the model to its socket:

1. latency: one client, runs one after another; for every delta, the time from the
   model yielding it to the client parsing its SSE frame (p50, p99, max);
2. fan-in: N clients, each running its own session at once, each checking that it got
   every event of its run in order (seq 1..n without a gap, every delta, in order);
3. fan-out: N readers of one run through `/events/stream`, each checking the same.
Reported: events per second delivered to clients, and the server's RSS (now and peak).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

SSE = {"Accept": "text/event-stream"}


# -- the server side (child process) ------------------------------------------------------


def make_app(store_kind: str, interval: float, db: Path | None = None) -> Any:
    """The app under measurement: an agent whose model streams stamped deltas, `interval` s apart.

    `store_kind` "sqlite" keeps the sessions in the file `db`, which the measuring process made.
    """
    from hookline import Agent
    from hookline.models import FunctionModel, ModelRequest, ModelResponse, ModelStreamEvent, ResponseDone, TextDelta
    from hookline.server import create_app
    from hookline.sessions.memory import InMemorySessionStore
    from hookline.sessions.sqlite import SQLiteSessionStore

    class StampedModel(FunctionModel):
        """Streams `deltas` fragments `"<index>:<monotonic ns>|"`, `interval` s apart."""

        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
            deltas = int(request.messages[-1].text.split()[-1])
            for index in range(deltas):
                await asyncio.sleep(interval)
                yield TextDelta(f"{index}:{time.monotonic_ns()}|")
            yield ResponseDone(await self.request(request))

    def answer(request: ModelRequest) -> ModelResponse:
        return ModelResponse(text="done")

    store: Any = InMemorySessionStore()
    if store_kind == "sqlite":
        if db is None:
            raise ValueError("a SQLite store needs db: the file to keep the sessions in")
        store = SQLiteSessionStore(db)
    agent = Agent("bench", model=StampedModel(answer, name="stamped"), session_store=store)
    return create_app(agent, store, tokens={})


def serve(args: argparse.Namespace) -> None:
    """Serve the app under measurement; print the port on stdout."""
    import uvicorn

    config = uvicorn.Config(make_app(args.store, args.interval, args.db), host="127.0.0.1", port=0, log_level="warning",
                            ws="none", backlog=4096, timeout_keep_alive=30)
    server = uvicorn.Server(config)

    async def run() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        print(f"PORT {server.servers[0].sockets[0].getsockname()[1]}", flush=True)
        await task

    asyncio.run(run())


# -- the client side ----------------------------------------------------------------------


@dataclass
class Received:
    """What one SSE client got from one run."""

    seqs: list[int] = field(default_factory=list)
    deltas: list[int] = field(default_factory=list)
    latencies_ns: list[int] = field(default_factory=list)
    events: int = 0
    last_status: str = ""

    def check(self, deltas: int, *, from_start: bool = True) -> None:
        """Fail unless every stored event came in seq order without a gap, and every delta in order."""
        first = self.seqs[0] if self.seqs else 1
        assert self.seqs == list(range(first, first + len(self.seqs))), f"seq gap or disorder: {self.seqs}"
        # A reader that joined mid-run gets the deltas from then on (they are never stored).
        expected = list(range(deltas)) if from_start else list(range(deltas - len(self.deltas), deltas))
        assert self.deltas == expected, f"deltas missing or out of order: {self.deltas}"
        assert self.last_status == "run completed", f"the stream ended early: {self.last_status!r}"


class Stream:
    """A bare HTTP/1.1 request over asyncio streams, its answer read as SSE.

    httpx costs the client more CPU per event than the server spends, and one shared
    pool of 200 connections makes it the bottleneck; a load generator has to be lighter
    than what it loads.
    """

    def __init__(self, url: str) -> None:
        host, _, port = url.removeprefix("http://").partition(":")
        self.host, self.port = host, int(port)

    async def events(self, method: str, path: str, body: bytes = b"") -> AsyncIterator[tuple[int, dict[str, Any]]]:
        """Yield `(arrival ns, event)` for every SSE frame of the answer."""
        reader, writer = await asyncio.open_connection(self.host, self.port)
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nAccept: text/event-stream\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n")
        writer.write(head.encode() + body)
        try:
            status = (await reader.readline()).split()[1]
            assert status == b"200", f"{method} {path} answered {status!r}"
            while (await reader.readline()) not in (b"\r\n", b""):
                pass  # the headers: chunked text/event-stream
            buffer = b""
            while size := int((await reader.readline()).strip() or b"0", 16):
                buffer += await reader.readexactly(size + 2)
                *frames, buffer = buffer.replace(b"\r\n\r\n", b"\n\n").split(b"\n\n")
                now = time.monotonic_ns()
                for frame in frames:
                    data = frame.split(b"data: ", 1)
                    if len(data) == 2:
                        yield now, json.loads(data[1])
        finally:
            writer.close()


async def read_stream(
    events: AsyncIterator[tuple[int, dict[str, Any]]], into: Received, begun: asyncio.Event | None = None
) -> None:
    """Record every event of a stream, stamping every delta on arrival; set `begun` at its first event (or end)."""
    try:
        async for now, event in events:
            if begun is not None:
                begun.set()
            into.events += 1
            text = "".join(p.get("text", "") for p in event["parts"])
            if event["kind"] == "delta":
                index, stamp = text.rstrip("|").split(":")
                into.deltas.append(int(index))
                into.latencies_ns.append(now - int(stamp))
            else:
                into.seqs.append(event["seq"])
                if event["kind"] == "status":
                    into.last_status = text
    finally:
        if begun is not None:
            begun.set()  # a stream that failed before its first event must not leave a waiter hanging


async def run_once(client: Stream, session_id: str, deltas: int, begun: asyncio.Event | None = None) -> Received:
    """Start a run streaming `deltas` deltas and read it to the end; `begun` is set once the run has begun."""
    received = Received()
    body = json.dumps({"prompt": f"stream {deltas}"}).encode()
    await read_stream(client.events("POST", f"/v1/sessions/{session_id}/runs", body), received, begun)
    return received


async def new_session(http: httpx.AsyncClient) -> str:
    """Create a session; return its id."""
    response = await http.post("/v1/sessions", json={})
    response.raise_for_status()
    session_id: str = response.json()["id"]
    return session_id


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) of `values`, by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


async def measure_latency(http: httpx.AsyncClient, client: Stream, runs: int, deltas: int) -> dict[str, Any]:
    """One client, runs one after another: model-to-client time of every delta."""
    session_id = await new_session(http)
    samples: list[float] = []
    for _ in range(runs):
        received = await run_once(client, session_id, deltas)
        received.check(deltas)
        samples.extend(ns / 1e6 for ns in received.latencies_ns)
    return {"deltas": len(samples), "p50_ms": percentile(samples, 50), "p99_ms": percentile(samples, 99),
            "max_ms": max(samples), "mean_ms": statistics.fmean(samples)}


async def measure_fan_in(
    http: httpx.AsyncClient, client: Stream, clients: int, deltas: int, pid: int
) -> dict[str, Any]:
    """`clients` clients, each running its own session at once; every one must get everything."""
    sessions = await asyncio.gather(*(new_session(http) for _ in range(clients)))
    started = time.perf_counter()
    results = await asyncio.gather(*(run_once(client, s, deltas) for s in sessions))
    elapsed = time.perf_counter() - started
    rss = server_memory(pid)
    for received in results:
        received.check(deltas)
    events = sum(r.events for r in results)
    latencies = [ns / 1e6 for r in results for ns in r.latencies_ns]
    return {"clients": clients, "events": events, "seconds": elapsed, "events_per_s": events / elapsed,
            "delta_p50_ms": percentile(latencies, 50), "delta_p99_ms": percentile(latencies, 99), **rss}


async def measure_fan_out(
    http: httpx.AsyncClient, client: Stream, readers: int, deltas: int, pid: int
) -> dict[str, Any]:
    """`readers` clients following one (longer) run through `/events/stream`; each must get every event."""
    session_id = await new_session(http)
    deltas *= 4
    begun = asyncio.Event()
    owner = asyncio.create_task(run_once(client, session_id, deltas, begun))
    joined: list[Received] = [Received() for _ in range(readers)]

    async def follow(into: Received) -> None:
        await read_stream(client.events("GET", f"/v1/sessions/{session_id}/events/stream"), into)

    # Readers join the run mid-way, as reconnecting clients do: once its first event is out.
    # A reader that came before the run began would find nothing to follow, and its stream
    # would end at once, empty.
    await begun.wait()
    started = time.perf_counter()
    await asyncio.gather(*(follow(r) for r in joined))
    first = await owner
    elapsed = time.perf_counter() - started
    first.check(deltas)
    for received in joined:
        received.check(deltas, from_start=False)
        assert received.seqs[0] == 1, "a reader joining mid-run still gets the stored events from the start"
    events = sum(r.events for r in joined)
    return {"readers": readers, "events": events, "seconds": elapsed, "events_per_s": events / elapsed,
            **server_memory(pid)}


def server_memory(pid: int) -> dict[str, float]:
    """The server's resident memory now and at its peak, in MiB (from /proc)."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return {"rss_mib": round(fields["VmRSS"], 1), "peak_rss_mib": round(fields["VmHWM"], 1)}


def start_server(args: argparse.Namespace, db: Path) -> tuple[subprocess.Popen[str], str]:
    """Start the server process (its SQLite file: `db`); return it and its base URL."""
    command = [sys.executable, __file__, "--serve", "--store", args.store, "--interval", str(args.interval),
               "--db", str(db)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert child.stdout is not None
    line = child.stdout.readline()
    if not line.startswith("PORT "):
        child.kill()
        raise RuntimeError(f"the server did not start: {line!r}")
    return child, f"http://127.0.0.1:{line.split()[1]}"


async def measure(args: argparse.Namespace, url: str, pid: int) -> dict[str, Any]:
    """Run the three measurements against the server at `url`."""
    client = Stream(url)
    async with httpx.AsyncClient(base_url=url, timeout=120) as http:
        idle = server_memory(pid)
        latency = await measure_latency(http, client, args.runs, args.deltas)
        fan_in = await measure_fan_in(http, client, args.clients, args.deltas, pid)
        fan_out = await measure_fan_out(http, client, args.clients, args.deltas, pid)
    return {"store": args.store, "interval_ms": args.interval * 1000, "idle": idle, "latency": latency,
            "fan_in": fan_in, "fan_out": fan_out}


def report(results: dict[str, Any]) -> None:
    """Print the figures for people (the JSON goes to --json)."""
    lat, fan_in, fan_out = results["latency"], results["fan_in"], results["fan_out"]
    print(f"store={results['store']}  model delta every {results['interval_ms']:g} ms")
    print(f"added latency, model token -> SSE client: p50 {lat['p50_ms']:.2f} ms, p99 {lat['p99_ms']:.2f} ms, "
          f"max {lat['max_ms']:.2f} ms ({lat['deltas']} deltas)")
    print(f"{fan_in['clients']} clients, one run each: {fan_in['events']} events in {fan_in['seconds']:.2f} s = "
          f"{fan_in['events_per_s']:.0f} events/s; delta p50 {fan_in['delta_p50_ms']:.1f} ms, "
          f"p99 {fan_in['delta_p99_ms']:.1f} ms; all in order")
    print(f"{fan_out['readers']} readers of one run: {fan_out['events']} events in {fan_out['seconds']:.2f} s = "
          f"{fan_out['events_per_s']:.0f} events/s; all in order")
    print(f"server RSS: idle {results['idle']['rss_mib']} MiB, after fan-in {fan_in['rss_mib']} MiB, "
          f"peak {fan_out['peak_rss_mib']} MiB")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description="Measure the hookline HTTP server.")
    parser.add_argument("--small", action="store_true", help="a smoke run: few clients, few deltas")
    parser.add_argument("--clients", type=int, default=200, help="concurrent SSE clients (fan-in and fan-out)")
    parser.add_argument("--deltas", type=int, default=50, help="deltas per run")
    parser.add_argument("--runs", type=int, default=20, help="runs of the latency measurement")
    parser.add_argument("--interval", type=float, default=0.005, help="seconds between model deltas")
    parser.add_argument("--store", choices=("sqlite", "memory"), default="sqlite")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)  # the server's SQLite file, in the client's temp dir
    args = parser.parse_args(argv)
    if args.small:
        args.clients, args.deltas, args.runs = 10, 10, 3
    return args


def main(argv: list[str] | None = None) -> None:
    """Start the server, measure, report, stop the server."""
    args = parse_args(argv)
    if args.serve:
        serve(args)
        return
    with tempfile.TemporaryDirectory(prefix="hookline_bench_") as workdir:  # gone with the server
        child, url = start_server(args, Path(workdir) / "sessions.db")
        try:
            results = asyncio.run(measure(args, url, child.pid))
        finally:
            child.terminate()
            child.wait(timeout=30)
    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
