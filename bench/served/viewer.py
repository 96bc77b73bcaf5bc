"""The server's CPU per viewer: `GET /v1/sessions/{id}/events/stream` on a session whose run has ended.

Run from the project root:

    .venv/bin/python bench/served/viewer.py                       # hookline's three stores
    .venv/bin/python bench/served/viewer.py --only hookline-sqlite --requests 4000

A viewer (the page, a follower in another process, a client reconnecting) opens the
session's stream with the `Last-Event-ID` it has seen. For each store: one session, one
run (the served workload's, `targets.py`), then `--requests` such streams, each asking for
the run's last three events, from `--clients` kept-alive connections at once. The figure
is the server's CPU (its process tree) per stream: its auth, ownership read, page read,
subscription and SSE answer.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from client import Connection, tree_cpu_seconds
from targets import Failed, Server, Target, hookline_targets


async def viewer_cost(target: Target, server: Server, requests: int, clients: int) -> float:
    """Microseconds of the server's CPU per viewer stream, after one run and a warm-up."""
    conns = [Connection(server.url) for _ in range(clients)]
    session_id = await target.new_session(conns[0])
    await target.run(conns[0], session_id, sse=False)
    events = await conns[0].request("GET", f"/v1/sessions/{session_id}/events")
    last = events.body[-1]["seq"]
    path, headers = f"/v1/sessions/{session_id}/events/stream", f"Last-Event-ID: {last - 3}\r\n"

    async def view(conn: Connection, times: int) -> None:
        for _ in range(times):
            answer = await conn.request("GET", path, sse=True, headers=headers)
            if answer.status != 200 or len(answer.frames) != 3:
                raise Failed(f"a viewer got {answer.status} with {len(answer.frames)} frames, not 200 with 3")

    await asyncio.gather(*(view(c, 50) for c in conns))
    before = tree_cpu_seconds(server.process.pid)
    await asyncio.gather(*(view(c, requests // clients) for c in conns))
    used = tree_cpu_seconds(server.process.pid) - before
    for conn in conns:
        conn.close()
    return used / (requests // clients * clients) * 1e6


def main(argv: list[str] | None = None) -> int:
    """Measure each store's viewer cost; print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="viewer streams measured per store")
    parser.add_argument("--clients", type=int, default=4, help="kept-alive connections at once")
    parser.add_argument("--only", help="one target: hookline-sqlite, hookline-memory or hookline-postgres")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir:
        for target in hookline_targets():
            if args.only and target.name != args.only:
                continue
            server = target.start(0.0, Path(workdir))
            try:
                cost = asyncio.run(viewer_cost(target, server, args.requests, args.clients))
            finally:
                server.stop()
            print(f"{target.name}: {cost:.0f} µs of server CPU per viewer stream ({args.requests} streams)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
