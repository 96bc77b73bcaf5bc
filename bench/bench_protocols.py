"""What each protocol surface costs the server: CPU per run and per event, beside hookline's own SSE.

Run from the project root:

    .venv/bin/python bench/bench_protocols.py            # 300 runs per route
    .venv/bin/python bench/bench_protocols.py --small    # a smoke run

The server is bench_server.py's (a child process: uvicorn on 127.0.0.1, a SQLite file; its model
streams `--deltas` stamped deltas a run, no pause between them). Each route gets the same runs,
one after another, read to the end by a bare HTTP client: hookline's `POST /v1/sessions/{id}/runs`
(SSE), AG-UI's `POST /v1/ag-ui` and the AI SDK's `POST /v1/ai-sdk/chat`. Reported per route:
the server's CPU time per run (user + system, from /proc), the frames per run, and the CPU per
frame over hookline's own route (the translation's cost per event).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import bench_server as served
import httpx


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _native(session_id: str, prompt: str) -> tuple[str, dict[str, Any]]:
    return f"/v1/sessions/{session_id}/runs", {"prompt": prompt}


def _ag_ui(session_id: str, prompt: str) -> tuple[str, dict[str, Any]]:
    message = {"id": uuid.uuid4().hex, "role": "user", "content": prompt}
    return "/v1/ag-ui", {"threadId": session_id, "runId": uuid.uuid4().hex, "messages": [message]}


def _ai_sdk(session_id: str, prompt: str) -> tuple[str, dict[str, Any]]:
    message = {"id": uuid.uuid4().hex, "role": "user", "parts": [{"type": "text", "text": prompt}]}
    return "/v1/ai-sdk/chat", {"id": session_id, "messages": [message], "trigger": "submit-message"}


ROUTES = {"hookline SSE": _native, "AG-UI": _ag_ui, "AI SDK": _ai_sdk}


async def measure_route(url: str, pid: int, build: Any, runs: int, deltas: int) -> dict[str, float]:
    """`runs` runs through one route, each in a session of its own: server CPU and frames per run."""
    client = served.Stream(url)
    frames = 0
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        sessions = [await served.new_session(http) for _ in range(runs)]
    before, started = cpu_seconds(pid), time.perf_counter()
    for session_id in sessions:
        path, body = build(session_id, f"stream {deltas}")
        frames += await _read(client, path, body)
    cpu = cpu_seconds(pid) - before
    return {"runs": runs, "cpu_ms_per_run": cpu / runs * 1000, "frames_per_run": frames / runs,
            "wall_ms_per_run": (time.perf_counter() - started) / runs * 1000}


async def _read(client: served.Stream, path: str, body: dict[str, Any]) -> int:
    reader, writer = await asyncio.open_connection(client.host, client.port)
    payload = json.dumps(body).encode()
    writer.write(f"POST {path} HTTP/1.1\r\nHost: {client.host}\r\nAccept: text/event-stream\r\nContent-Type: "
                 f"application/json\r\nContent-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode() + payload)
    data = await reader.read()
    writer.close()
    status = data.split(b" ", 2)[1]
    assert status == b"200", data[:300]
    return data.count(b"data: ")


async def measure(url: str, pid: int, runs: int, deltas: int) -> dict[str, dict[str, float]]:
    """Every route, twice over in alternation (the second pass is reported: warm)."""
    results: dict[str, dict[str, float]] = {}
    for _ in range(2):
        for name, build in ROUTES.items():
            results[name] = await measure_route(url, pid, build, runs, deltas)
    return results


def report(results: dict[str, dict[str, float]], deltas: int) -> str:
    """A markdown table, the translation's cost per frame against hookline's own route."""
    base = results["hookline SSE"]
    lines = [f"{deltas} deltas a run; server CPU per run (user + system); frames per run as the client read them.",
             "", "| route | server CPU / run | frames / run | extra CPU / frame vs hookline SSE |", "|---|---|---|---|"]
    for name, r in results.items():
        extra = (r["cpu_ms_per_run"] - base["cpu_ms_per_run"]) / max(r["frames_per_run"], 1) * 1000
        cell = "-" if name == "hookline SSE" else f"{extra:+.1f} µs"
        lines.append(f"| {name} | {r['cpu_ms_per_run']:.2f} ms | {r['frames_per_run']:.0f} | {cell} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--deltas", type=int, default=20)
    parser.add_argument("--small", action="store_true", help="a smoke run: 10 runs a route")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    runs = 10 if args.small else args.runs
    server_args = served.parse_args(["--interval", "0"])
    with tempfile.TemporaryDirectory(prefix="hookline_bench_") as workdir:
        child, url = served.start_server(server_args, Path(workdir) / "sessions.db")
        try:
            results = asyncio.run(measure(url, child.pid, runs, args.deltas))
        finally:
            child.terminate()
            child.wait(timeout=30)
    print(report(results, args.deltas))
    if args.json:
        args.json.write_text(json.dumps({"deltas": args.deltas, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
