"""`hookline serve` sets TCP_NODELAY on every connection it accepts (issue 28, item 1).

Without it, uvicorn writes a response's head and body in two sends, and Nagle's algorithm
holds the body until the client's delayed ACK comes: about 40 ms on every request of a
kept-alive connection. asyncio sets the option only on sockets made with protocol
`IPPROTO_TCP`, so the listening socket `bind` opens must carry it.

The check reads the option off the server's own accepted socket: the test takes a copy of
that descriptor from the running `hookline serve` process with `pidfd_getfd` (Linux 5.6+;
the test is the server's parent, so it may), found by the inode `/proc/net/tcp` gives the
connection. No timing is involved.
"""

from __future__ import annotations

import ctypes
import os
import socket
import sys
from pathlib import Path

import pytest

from .served import HOOKLINE, Served

AGENT = f"{Path(__file__).with_name('live_agents.py')}:agent"
_PIDFD_GETFD = 438  # the syscall's number on x86-64 and arm64 alike

pytestmark = [
    pytest.mark.skipif(HOOKLINE is None, reason="the hookline console script is not installed"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the server's socket through /proc"),
]


def _socket_inode(local_port: int, remote_port: int) -> int:
    """The inode of the TCP socket of 127.0.0.1 from `local_port` to `remote_port` (from /proc/net/tcp)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = (int(address.split(":")[1], 16) for address in fields[1:3])
        if (local, remote) == (local_port, remote_port):
            return int(fields[9])
    raise AssertionError(f"no TCP socket from port {local_port} to {remote_port}")


def _copy_descriptor(pid: int, inode: int) -> socket.socket:
    """A socket sharing the open socket `inode` of process `pid` (its own descriptor, through pidfd_getfd)."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        for name in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{name}")
            except OSError:
                continue
            if target == f"socket:[{inode}]":
                copied = libc.syscall(_PIDFD_GETFD, pidfd, int(name), 0)
                if copied < 0:
                    pytest.skip(f"pidfd_getfd is not allowed here: {os.strerror(ctypes.get_errno())}")
                return socket.socket(fileno=copied)
    finally:
        os.close(pidfd)
    raise AssertionError(f"process {pid} holds no socket {inode}")


def _get_health(client: socket.socket) -> bytes:
    """`GET /healthz` on a kept-alive connection; its status code."""
    client.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    answer = b""
    while not answer.endswith(b"}"):  # the head, then the JSON body
        answer += client.recv(4096)
    return answer.split()[1]


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_every_accepted_connection_has_tcp_nodelay(tmp_path: Path, loop: str) -> None:
    if loop == "uvloop":
        pytest.importorskip("uvloop")
    served = Served(AGENT, str(tmp_path / "s.db"), tmp_path, "--loop", loop)
    try:
        port = int(served.wait_url().rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as client:  # one connection, kept alive
            assert _get_health(client) == b"200"
            accepted = _copy_descriptor(served.process.pid, _socket_inode(port, client.getsockname()[1]))
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
            assert _get_health(client) == b"200", "the copy is closed; the server's connection stays open"
    finally:
        served.stop()
