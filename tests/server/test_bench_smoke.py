"""The server benchmarks run end to end (`--small`), and their checks pass."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from .live import LiveServer

ROOT = Path(__file__).resolve().parents[2]
BENCH_SERVER = ROOT / "bench" / "bench_server.py"
BENCH_SESSION_LIST = ROOT / "bench" / "bench_session_list.py"

RUN_START_DELAY = 0.3
"""Seconds the server takes to start a run in the slow-start test: far more than readers take to connect."""


def test_bench_server_small(tmp_path: Path) -> None:
    out, temp = tmp_path / "bench.json", tmp_path / "temp"
    temp.mkdir()
    done = subprocess.run(
        [sys.executable, str(BENCH_SERVER), "--small", "--json", str(out)],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env={**os.environ, "TMPDIR": str(temp)},
    )
    assert done.returncode == 0, done.stderr
    assert not list(temp.iterdir()), "the server's SQLite directory is left behind"
    assert "added latency" in done.stdout
    assert "all in order" in done.stdout
    figures = json.loads(out.read_text())
    assert figures["latency"]["deltas"] == 30
    assert figures["fan_in"]["clients"] == 10
    assert figures["fan_in"]["events"] == 150
    assert figures["fan_out"]["readers"] == 10
    assert figures["fan_in"]["rss_mib"] > 0


def test_bench_session_list_small() -> None:
    done = subprocess.run([sys.executable, str(BENCH_SESSION_LIST), "--small"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT / "bench")
    assert done.returncode == 0, done.stderr
    assert [line.split(":")[0] for line in done.stdout.splitlines()] == ["sqlite", "postgres"]


def bench_server() -> ModuleType:
    """bench/bench_server.py as a module (bench/ is not a package)."""
    if "bench_server" in sys.modules:
        return sys.modules["bench_server"]
    spec = importlib.util.spec_from_file_location("bench_server", BENCH_SERVER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def slow_to_start_runs(app: Any, seconds: float) -> Any:
    """`app`, taking `seconds` longer to start each run (`POST .../runs`), as a loaded server does."""

    async def delayed(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"].endswith("/runs"):
            await asyncio.sleep(seconds)  # the server's lag, not a wait of the test
        await app(scope, receive, send)

    return delayed


@pytest.mark.anyio
async def test_fan_out_readers_join_a_run_the_server_is_slow_to_start() -> None:
    # The readers used to join 50 ms after the run was asked for: on a loaded machine the
    # run had not begun yet, so their streams found nothing to follow and ended empty.
    bench = bench_server()
    server = LiveServer(slow_to_start_runs(bench.make_app("memory", 0.005), RUN_START_DELAY)).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            figures = await bench.measure_fan_out(http, bench.Stream(server.url), 3, 5, os.getpid())
    finally:
        server.stop()
    assert figures["readers"] == 3
    assert figures["events"] >= 3 * 2, "each reader got at least the prompt and the run's last line"
