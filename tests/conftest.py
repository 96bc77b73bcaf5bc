"""Test-wide fixtures: asyncio for anyio tests, and no network beyond loopback."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from typing import Any

import pytest

_LOOPBACK = ("127.", "::1", "localhost")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any connection outside 127.0.0.1 fail: tests never call a real service."""
    real_connect = socket.socket.connect

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else str(address)
        if self.family in (socket.AF_INET, socket.AF_INET6) and not str(host).startswith(_LOOPBACK):
            raise ConnectionRefusedError(f"tests may only connect to loopback, not {host!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)


@pytest.fixture(scope="session", autouse=True)
def _close_llama_cpp_devnull() -> Iterator[None]:
    """llama-cpp-python opens /dev/null twice at import and never closes it: close it at the end.

    Otherwise the interpreter reports the leak as a ResourceWarning after pytest's summary.
    """
    yield
    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        leaked = getattr(utils, name, None)
        if leaked is not None:
            leaked.close()
