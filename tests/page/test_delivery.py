"""How the page is delivered (issue 25, defect 10), in a real browser: its files compressed and
revalidated rather than sent again, its modules asked for at once rather than one after another,
and its weight within the budget (150 KB). Its load time is measured by bench/bench_page.py."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page

from hookline.server import create_app
from hookline.server.routes import STATIC_DIR
from hookline.sessions import SessionStore
from server.live import LiveServer

from .agents import page_agent

BUDGET = 150_000
"""The most bytes the page's own files may weigh over the wire."""
MODULE_DELAY = 0.25
"""Seconds the slow server takes over each of the page's modules."""
BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_page.py"


def _delayed_modules(app: Any) -> Any:
    """`app`, answering each request for a module of the page MODULE_DELAY seconds late (as a far server would)."""

    async def slow(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/static/js/"):
            await asyncio.sleep(MODULE_DELAY)
        await app(scope, receive, send)

    return slow


@pytest.fixture
def slow_server(store: SessionStore) -> Iterator[LiveServer]:
    server = LiveServer(_delayed_modules(create_app(page_agent(store), store, tokens={}))).start()
    yield server
    server.stop()


def test_the_files_are_compressed_and_revalidated(page_server: LiveServer) -> None:
    for name in ("app.js", "app.css", "js/chat.js"):
        response = httpx.get(f"{page_server.url}/static/{name}", headers={"Accept-Encoding": "gzip"})
        assert response.status_code == 200
        assert response.headers["content-encoding"] == "gzip", name
        assert int(response.headers["content-length"]) < len(response.content), "smaller over the wire"
        assert response.headers["cache-control"] == "no-cache", "kept, and asked again with its ETag"
        again = httpx.get(f"{page_server.url}/static/{name}", headers={"If-None-Match": response.headers["etag"]})
        assert (again.status_code, again.content) == (304, b"")
    plain = httpx.get(f"{page_server.url}/static/app.js", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert plain.content == (STATIC_DIR / "app.js").read_bytes()
    assert httpx.get(f"{page_server.url}/static/../routes.py").status_code == 404


def test_every_module_is_asked_for_at_once(slow_server: LiveServer, open_page: Callable[..., Page]) -> None:
    page = open_page(slow_server.url)
    page.wait_for_function("document.querySelector('#conversation .empty')")
    timing: dict[str, float] = page.evaluate("""() => {
        const modules = performance.getEntriesByType('resource').filter((r) => r.name.includes('/static/js/'));
        return {count: modules.length, first: Math.min(...modules.map((r) => r.startTime)),
                last: Math.max(...modules.map((r) => r.startTime))};
    }""")
    assert timing["count"] == len(list((STATIC_DIR / "js").glob("*.js")))
    spread = (timing["last"] - timing["first"]) / 1000
    assert spread < MODULE_DELAY, f"the last module was asked for {spread:.2f} s after the first: after its importer"


def test_the_index_preloads_every_module() -> None:
    preloaded = set(re.findall(r'<link rel="modulepreload" href="/static/(js/[\w.]+)">',
                               (STATIC_DIR / "index.html").read_text()))
    assert preloaded == {f"js/{p.name}" for p in (STATIC_DIR / "js").glob("*.js")}


def test_the_page_weighs_less_than_its_budget(page_server: LiveServer) -> None:
    weight = 0
    for path in ["/", *(f"/static/{p.relative_to(STATIC_DIR)}" for p in sorted(STATIC_DIR.rglob("*.*"))
                        if p.name != "index.html")]:
        response = httpx.get(f"{page_server.url}{path}", headers={"Accept-Encoding": "gzip"})
        assert response.status_code == 200, path
        weight += int(response.headers.get("content-length") or len(response.content))
    assert weight < BUDGET, f"the page weighs {weight} bytes"


def test_the_load_time_bench_runs(tmp_path: Path) -> None:
    out = tmp_path / "page.json"
    done = subprocess.run([sys.executable, str(BENCH), "--small", "--json", str(out)], capture_output=True, text=True,
                          timeout=180, cwd=BENCH.parents[1])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1,000-event session visible" in done.stdout
    summary = json.loads(out.read_text())["summary"]
    assert summary["weight_bytes"] < BUDGET
    assert summary["cold_shown_ms"] > summary["cold_paint_ms"] > 0, "both times are measured"
