"""What the web page weighs and how soon it shows a long session, in headless Chromium.

Run from the project root:

    .venv/bin/python bench/bench_page.py            # 7 cold loads and 7 warm ones
    .venv/bin/python bench/bench_page.py --small    # a smoke run (1 of each)

A server of the page's own test agent (tests/page/agents.py) on 127.0.0.1, in this process, holds a
session of 1,001 events in a SQLite file (91 prompts, each with a tool call, its result and a
Markdown answer: the page shows the latest 1,000). Each cold load opens the page in a fresh
browser context (an empty cache) at that session; each warm load reloads it (the browser asks
again for its files with their ETags). Reported: the bytes of the page's own files over the wire
(gzip) and unpacked, the first contentful paint, and the time until every answer of the session
is on screen (a MutationObserver notes when the 91st answer shows), median and worst. The budget:
150 KB and 1 s; a full run that goes over it exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from playwright.sync_api import Browser, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "server")]

from hookline import Event, TextPart, ToolCallPart, ToolResultPart  # noqa: E402
from hookline.server import create_app  # noqa: E402
from hookline.sessions import SQLiteSessionStore  # noqa: E402
from page.agents import page_agent  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
PROMPTS = 91
"""Prompts of the long session: 11 events each, 1,001 in all."""
BUDGET_BYTES = 150_000
BUDGET_MS = 1000.0
ANSWER = """## Result {n}

The lookup found **{n} records** in `orders`:

- the oldest is from March
- the newest is from today

```sql
select count(*) from orders where region = 'north';
```"""

SHOWN = """(expected) => {
  const note = () => {
    if (document.querySelectorAll('.msg.assistant').length < expected || window.__shown) return;
    window.__shown = performance.now();
  };
  new MutationObserver(note).observe(document, {subtree: true, childList: true});
}"""


def prompt_events(n: int) -> list[Event]:
    """The 11 events of prompt `n`: question, two model calls, a tool call and its result, a Markdown answer."""
    call = ToolCallPart(id=f"call-{n}", name="lookup", arguments={"table": "orders", "region": "north", "n": n})
    result = json.dumps({"rows": n, "table": "orders", "sample": [{"id": i, "total": i * 12.5} for i in range(5)]})
    return [
        Event(author="user", kind="message", role="user",
              parts=[TextPart(text=f"How many orders in the north? ({n})")]),
        Event.status("assistant", "agent", "turn 1: calling model"),
        Event.status("assistant", "llm", "page-model answered: 1 tool call, 412 tokens, 380 ms"),
        Event(author="assistant", kind="message", role="assistant", parts=[call]),
        Event.status("lookup", "tool", "running lookup(table='orders', region='north')", call_id=call.id, started=True),
        Event(author="lookup", kind="message", role="tool",
              parts=[ToolResultPart(call_id=call.id, content=result, name="lookup")]),
        Event.status("lookup", "tool", f"lookup returned {n} rows", call_id=call.id),
        Event.status("assistant", "agent", "turn 2: calling model"),
        Event.status("assistant", "llm", "page-model answered: text, 655 tokens, 920 ms"),
        Event(author="assistant", kind="message", role="assistant", parts=[TextPart(text=ANSWER.format(n=n))]),
        Event.status("assistant", "agent", "run completed", run_end="completed"),
    ]


async def fill(store: SQLiteSessionStore) -> str:
    """A session of PROMPTS prompts in `store`; its id."""
    session = await store.create(session_id="long")
    for n in range(PROMPTS):
        await store.append_events(session.id, prompt_events(n))
    return session.id


@contextmanager
def serve(folder: Path) -> Iterator[tuple[str, str]]:
    """Serve the long session's store on 127.0.0.1 in a thread; yield (the page's URL, the session id)."""
    store = SQLiteSessionStore(folder / "page.db")
    session_id = asyncio.run(fill(store))
    store = SQLiteSessionStore(folder / "page.db")  # a fresh one for the server's own event loop
    server = uvicorn.Server(uvicorn.Config(create_app(page_agent(store), store, tokens={}), host="127.0.0.1", port=0,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the page's server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}", session_id
    finally:
        server.should_exit = True
        thread.join(10)


def load(browser: Browser, url: str, rounds: int) -> dict[str, list[float]]:
    """Cold and warm loads of `url`: their paint and shown times (ms) and the bytes of the page's files."""
    figures: dict[str, list[float]] = {"cold_paint": [], "cold_shown": [], "warm_paint": [], "warm_shown": [],
                                       "wire": [], "unpacked": [], "warm_wire": []}
    for _ in range(rounds):
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.add_init_script(f"({SHOWN})({PROMPTS})")
        for phase in ("cold", "warm"):
            if phase == "cold":
                page.goto(url)
            else:
                page.reload()
            page.wait_for_function("window.__shown", timeout=30_000)
            found = page.evaluate("""() => {
                const own = performance.getEntriesByType('resource').filter((r) => r.name.includes('/static/'));
                const nav = performance.getEntriesByType('navigation')[0];
                const paint = performance.getEntriesByName('first-contentful-paint')[0];
                return {paint: paint ? paint.startTime : null, shown: window.__shown,
                        wire: own.reduce((n, r) => n + r.transferSize, nav.transferSize),
                        body: own.reduce((n, r) => n + r.encodedBodySize, nav.encodedBodySize),
                        unpacked: own.reduce((n, r) => n + r.decodedBodySize, nav.decodedBodySize)};
            }""")
            figures[f"{phase}_paint"].append(found["paint"])
            figures[f"{phase}_shown"].append(found["shown"])
            if phase == "cold":
                figures["wire"].append(found["body"])
                figures["unpacked"].append(found["unpacked"])
            else:
                figures["warm_wire"].append(found["wire"])
        context.close()
    return figures


def report(figures: dict[str, list[float]]) -> dict[str, Any]:
    """Print the table; answer the summary."""
    summary = {
        "weight_bytes": int(statistics.median(figures["wire"])),
        "unpacked_bytes": int(statistics.median(figures["unpacked"])),
        "cold_paint_ms": statistics.median(figures["cold_paint"]),
        "cold_shown_ms": statistics.median(figures["cold_shown"]),
        "cold_shown_worst_ms": max(figures["cold_shown"]), "warm_shown_ms": statistics.median(figures["warm_shown"]),
        "warm_transfer_bytes": int(statistics.median(figures["warm_wire"])), "loads": len(figures["cold_shown"]),
    }
    print(f"page files: {summary['weight_bytes'] / 1000:.1f} KB over the wire (gzip), "
          f"{summary['unpacked_bytes'] / 1000:.1f} KB unpacked; a warm reload moves "
          f"{summary['warm_transfer_bytes'] / 1000:.1f} KB (304s)")
    print(f"first contentful paint: {summary['cold_paint_ms']:.0f} ms (median of {summary['loads']} cold loads)")
    print(f"1,000-event session visible: {summary['cold_shown_ms']:.0f} ms cold (worst "
          f"{summary['cold_shown_worst_ms']:.0f}), {summary['warm_shown_ms']:.0f} ms warm")
    return summary


def main() -> None:
    """Parse the command line, serve, load, report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="one load of each kind: a smoke run")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the figures there")
    args = parser.parse_args()
    rounds = 1 if args.small else args.rounds
    with (tempfile.TemporaryDirectory(prefix="hookline-page-bench-") as folder,
          serve(Path(folder)) as (url, session_id), sync_playwright() as p):
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            figures = load(browser, f"{url}/#{session_id}", rounds)
        finally:
            browser.close()
    summary = report(figures)
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "figures": figures}, indent=2))
    within = summary["weight_bytes"] < BUDGET_BYTES and summary["cold_shown_ms"] < BUDGET_MS
    print("within the budget (150 KB, 1 s)" if within else "OVER the budget (150 KB, 1 s)")
    if not within and not args.small:
        sys.exit(1)


if __name__ == "__main__":
    main()
