"""What A2A costs the server: CPU per run and per status line, A2A streaming against hookline's own SSE.

Run from the project root:

    .venv/bin/python bench/bench_a2a.py            # the measurement (a minute or so)
    .venv/bin/python bench/bench_a2a.py --small    # a smoke run (seconds)

The server runs in a child process (uvicorn on 127.0.0.1, one worker, a SQLite store), so the
CPU measured is its own: its user and system time, all threads (`/proc/<pid>/stat`, in clock
ticks of 10 ms), read before and after a batch of runs. Its agent's model calls one tool,
which writes `lines` status lines, then answers. The same runs go through both routes, one
after another, each on a session made beforehand (so neither pays for creating one):

- `sse`: `POST /v1/sessions/{id}/runs` with `Accept: text/event-stream`, every event a frame;
- `a2a`: `POST /a2a` `SendStreamingMessage` (context = that session), a working update per
  status line, then the answer's artifact and the final state.

Reported, for each route: server CPU per run with no tool lines and with `lines` of them, and
the CPU per status line (the difference over `lines`); then what A2A adds to each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from hookline import Agent, RunContext, ToolCallPart, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse

VERSION = {"A2A-Version": "1.0"}


# -- the server side (child process) ------------------------------------------------------


@tool
def lines(n: int, ctx: RunContext[None]) -> str:
    """Write `n` status lines."""
    for index in range(n):
        ctx.status(f"line {index}")
    return "written"


def script(request: ModelRequest) -> ModelResponse:
    """"lines <n>": call `lines(n)`; after it, answer."""
    last = request.messages[-1]
    if last.role == "tool":
        return ModelResponse(text="done")
    count = int(last.text.split()[-1])
    return ModelResponse(tool_calls=[ToolCallPart(id="call-1", name="lines", arguments={"n": count})])


def make_app(db: Path) -> Any:
    """The app under measurement, its sessions in the SQLite file `db`."""
    from hookline.server import create_app
    from hookline.sessions.sqlite import SQLiteSessionStore

    store = SQLiteSessionStore(db)
    agent = Agent("bench", model=FunctionModel(script, name="scripted"), tools=[lines], session_store=store)
    return create_app(agent, store, tokens={})


def serve(db: Path) -> None:
    """Serve the app under measurement; print the port on stdout."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(make_app(db), host="127.0.0.1", port=0, log_level="warning", ws="none"))

    async def run() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        print(f"PORT {server.servers[0].sockets[0].getsockname()[1]}", flush=True)
        await task

    asyncio.run(run())


# -- the client side ----------------------------------------------------------------------


async def sse_run(http: httpx.AsyncClient, session_id: str, lines: int) -> int:
    """One run through hookline's own SSE route; the frames it got."""
    frames = 0
    body = {"prompt": f"lines {lines}"}
    async with http.stream("POST", f"/v1/sessions/{session_id}/runs", json=body,
                           headers={"Accept": "text/event-stream"}) as answer:
        async for line in answer.aiter_lines():
            frames += line.startswith("data:")
    return frames


async def a2a_run(http: httpx.AsyncClient, session_id: str, lines: int) -> int:
    """One run as an A2A task (`SendStreamingMessage`); the frames it got (checked: it completed)."""
    message = {"messageId": f"m-{time.monotonic_ns()}", "contextId": session_id, "role": "ROLE_USER",
               "parts": [{"text": f"lines {lines}"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": message}}
    frames, last = 0, ""
    async with http.stream("POST", "/a2a", json=body, headers={**VERSION, "Accept": "text/event-stream"}) as answer:
        async for line in answer.aiter_lines():
            if line.startswith("data:"):
                frames, last = frames + 1, line
    assert "TASK_STATE_COMPLETED" in last, f"the A2A task did not complete: {last}"
    return frames


def cpu_seconds(pid: int) -> float:
    """The CPU time process `pid` has used so far, all its threads (user + system, Linux's `/proc`)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(url: str, pid: int, runs: int, lines: int) -> dict[str, Any]:
    """Server CPU per run of each route, with 0 and `lines` status lines per run."""
    figures: dict[str, Any] = {}
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        for route, one in (("sse", sse_run), ("a2a", a2a_run)):
            for count in (0, lines):
                sessions = [(await http.post("/v1/sessions", json={})).json()["id"] for _ in range(runs + 3)]
                for session_id in sessions[:3]:  # warm-up
                    await one(http, session_id, count)
                before = cpu_seconds(pid)
                frames = [await one(http, session_id, count) for session_id in sessions[3:]]
                spent = cpu_seconds(pid) - before
                figures[f"{route}_{count}"] = {"cpu_ms_per_run": 1000 * spent / runs, "frames": frames[0]}
    for route in ("sse", "a2a"):
        per_line = figures[f"{route}_{lines}"]["cpu_ms_per_run"] - figures[f"{route}_0"]["cpu_ms_per_run"]
        figures[f"{route}_us_per_line"] = 1000 * per_line / lines
    return figures


def report(figures: dict[str, Any], runs: int, lines: int) -> None:
    """Print the figures as a table."""
    print(f"server CPU, {runs} runs per figure (a tool writing 0 or {lines} status lines per run)")
    many_lines = f"ms/run, {lines} lines"
    print(f"{'route':6} {'ms/run, 0 lines':>16} {many_lines:>18} {'µs per line':>12} {'frames':>8}")
    for route in ("sse", "a2a"):
        zero, many = figures[f"{route}_0"], figures[f"{route}_{lines}"]
        print(f"{route:6} {zero['cpu_ms_per_run']:16.2f} {many['cpu_ms_per_run']:18.2f} "
              f"{figures[f'{route}_us_per_line']:12.1f} {many['frames']:8d}")
    added_run = figures["a2a_0"]["cpu_ms_per_run"] - figures["sse_0"]["cpu_ms_per_run"]
    added_line = figures["a2a_us_per_line"] - figures["sse_us_per_line"]
    print(f"A2A adds {added_run:.2f} ms per run and {added_line:.1f} µs per status line")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="a smoke run: few runs, few lines")
    parser.add_argument("--runs", type=int, default=100, help="runs per figure")
    parser.add_argument("--lines", type=int, default=200, help="status lines per run")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # the child: serve on this SQLite file
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    runs, lines = (5, 20) if args.small else (args.runs, args.lines)
    with tempfile.TemporaryDirectory() as folder:
        child = subprocess.Popen([sys.executable, __file__, "--serve", str(Path(folder) / "bench.db")],
                                 stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None
            port = child.stdout.readline().split()[1]
            figures = asyncio.run(measure(f"http://127.0.0.1:{port}", child.pid, runs, lines))
        finally:
            child.terminate()
            child.wait(30)
    report(figures, runs, lines)
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "lines": lines, **figures}, indent=2))


if __name__ == "__main__":
    main()
