"""A bare HTTP/1.1 client that keeps its connection alive, and the CPU of a process tree.

Standard library only. A load generator must cost less than what it loads: httpx spends
more CPU per request than hookline's server does, so each worker holds one socket of its
own and speaks HTTP/1.1 over asyncio streams, as a browser or a production client does
(kept alive: every request after the first pays no connect, and meets the server's
Nagle and delayed-ACK behaviour, which a `Connection: close` client never sees).
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Answer:
    """One response: its status, and its body (an SSE answer: the data of each frame)."""

    status: int
    body: Any
    frames: list[dict[str, Any]]


class Connection:
    """One kept-alive connection to `host:port`; reconnects when the server closes it."""

    def __init__(self, url: str) -> None:
        host, _, port = url.removeprefix("http://").partition(":")
        self.host, self.port = host, int(port)
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def request(
        self, method: str, path: str, body: Any = None, *, sse: bool = False, headers: str = ""
    ) -> Answer:
        """Send one request (`headers`: more header lines, each ending in CRLF) and read its whole answer.

        The answer is JSON, or with `sse` the SSE frames until the stream ends.
        """
        payload = b"" if body is None else json.dumps(body).encode()
        accept = "text/event-stream" if sse else "application/json"
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nAccept: {accept}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n{headers}\r\n")
        reader, writer = await self._open()
        writer.write(head.encode() + payload)
        try:
            return await self._read(reader, sse)
        except (OSError, asyncio.IncompleteReadError):
            self.close()
            raise

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._writer is None or self._writer.is_closing() or self._reader is None or self._reader.at_eof():
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        return self._reader, self._writer

    async def _read(self, reader: asyncio.StreamReader, sse: bool) -> Answer:
        line = await reader.readline()
        if not line.strip():
            raise ConnectionResetError("the server closed the connection without an answer")
        status = int(line.split()[1])
        fields: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            fields[name.strip().lower()] = value.strip()
        data = b"".join([chunk async for chunk in _chunks(reader, fields)])
        if fields.get("connection", "").lower() == "close":
            self.close()
        if sse and status < 300:
            return Answer(status, None, _frames(data))
        return Answer(status, json.loads(data) if data.strip() else None, [])

    def close(self) -> None:
        """Close the socket (the next request opens another)."""
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None


async def _chunks(reader: asyncio.StreamReader, fields: dict[str, str]) -> Any:
    if fields.get("transfer-encoding", "").lower() != "chunked":
        length = fields.get("content-length")
        yield await (reader.readexactly(int(length)) if length is not None else reader.read())
        return
    while size := int((await reader.readline()).split(b";")[0].strip() or b"0", 16):
        yield await reader.readexactly(size)
        await reader.readexactly(2)
    while (await reader.readline()) not in (b"\r\n", b""):
        pass  # trailers


def _frames(data: bytes) -> list[dict[str, Any]]:
    """The JSON data of each SSE frame (comments and frames without data left out)."""
    frames = []
    for raw in data.replace(b"\r\n", b"\n").split(b"\n\n"):
        lines = [line[5:].lstrip() for line in raw.split(b"\n") if line.startswith(b"data:")]
        if lines:
            try:
                frames.append(json.loads(b"\n".join(lines)))
            except ValueError:
                frames.append({"raw": b"\n".join(lines).decode(errors="replace")})
    return frames


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) of `values`, by nearest rank; NaN when there are none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system) used so far by process `root` and all its descendants (Linux /proc).

    A descendant that ended is not counted unless its parent waited for it (then the kernel
    adds it to the parent's children's times, which this leaves out): the servers measured
    keep their processes for their lifetime.
    """
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(name)] = int(fields[1])
        used[int(name)] = (int(fields[11]) + int(fields[12])) / tick
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    return sum(used.get(pid, 0.0) for pid in tree)


def machine_cpu_seconds() -> float:
    """CPU seconds the whole machine spent busy so far (all but idle and iowait, /proc/stat)."""
    busy = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(busy) - busy[3] - busy[4]) / os.sysconf("SC_CLK_TCK")
