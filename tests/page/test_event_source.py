"""A browser's own `EventSource`, unchanged, on the live stream: it follows, reconnects and rebuilds the answer.

Chromium's `EventSource` reads `/v1/sessions/{id}/events/stream?follow=true` through a TCP
proxy that the test cuts mid-answer. The browser reconnects by itself, sending the last
`id:` it kept as `Last-Event-ID` (an `event: stored` frame moves it too), and the deltas that
come after the reconnect rebuild the whole answer: the page's rule is only "on open, drop the
draft".
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator

import httpx
import pytest
from playwright.sync_api import Page

from hookline import Agent
from hookline.sessions import SessionStore
from server.live import LiveServer
from server.live_agents import LiveModel, steps, told
from support.waiting import DEADLINE, wait_until

LISTEN = """
([path]) => {
  window.__es = { draft: "", opens: 0, answer: null, stored: 0, lines: [], lastId: "" };
  const es = new EventSource(path);
  window.__source = es;
  es.onopen = () => { window.__es.opens += 1; window.__es.draft = ""; };
  es.addEventListener("delta", (e) => { window.__es.draft += JSON.parse(e.data).parts[0].text; });
  es.addEventListener("status", (e) => {
    window.__es.lastId = e.lastEventId;
    window.__es.lines.push(JSON.parse(e.data).parts[0].text);
  });
  es.addEventListener("stored", (e) => { window.__es.lastId = e.lastEventId; window.__es.stored += 1; });
  es.addEventListener("message", (e) => {
    window.__es.lastId = e.lastEventId;
    const event = JSON.parse(e.data);
    if (event.role === "assistant") window.__es.answer = event.parts.map((p) => p.text).join("");
  });
}
"""


class CuttableProxy:
    """A TCP proxy to `target` on 127.0.0.1, in a thread: it keeps every request's head and cuts on demand."""

    def __init__(self, target: str) -> None:
        self.host, port = target.removeprefix("http://").split(":")
        self.port = int(port)
        self.heads: list[str] = []
        self._writers: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self.url = ""
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        assert self._ready.wait(DEADLINE)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._pipe, "127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        self._ready.set()
        self._loop.run_forever()
        server.close()
        self._loop.run_until_complete(server.wait_closed())

    async def _pipe(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection(self.host, self.port)
        self._writers |= {client_writer, server_writer}

        async def copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, requests: bool) -> None:
            try:
                while chunk := await reader.read(65536):
                    if requests and chunk.startswith((b"GET ", b"POST ")):  # a request's head (keep-alive: several)
                        self.heads.append(chunk.decode(errors="replace").split("\r\n\r\n")[0])
                    writer.write(chunk)
                    await writer.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                writer.close()

        await asyncio.gather(copy(client_reader, server_writer, True), copy(server_reader, client_writer, False))

    def cut(self) -> None:
        """Close every connection through the proxy, as a network drop would."""
        def close_all() -> None:
            for writer in self._writers:
                writer.transport.abort()
            self._writers.clear()

        self._loop.call_soon_threadsafe(close_all)

    def stop(self) -> None:
        async def close() -> None:
            for writer in self._writers:
                writer.transport.abort()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._loop.stop()

        self._loop.call_soon_threadsafe(lambda: self._loop.create_task(close()))
        self._thread.join(DEADLINE)
        self._loop.close()


@pytest.fixture
def live_server(make_server: Callable[..., LiveServer], store: SessionStore) -> LiveServer:
    return make_server(agent=Agent("live", model=LiveModel(), tools=[steps], session_store=store))


@pytest.fixture
def proxy(live_server: LiveServer) -> Iterator[CuttableProxy]:
    proxy = CuttableProxy(live_server.url)
    yield proxy
    proxy.stop()


def _words(page: Page) -> int:
    return len(page.evaluate("window.__es.draft").split())


def test_the_browsers_event_source_reconnects_with_its_last_id_and_rebuilds_the_answer(
    live_server: LiveServer, proxy: CuttableProxy, open_page: Callable[..., Page]
) -> None:
    session_id = httpx.post(f"{live_server.url}/v1/sessions", json={}).json()["id"]
    page = open_page(f"{proxy.url}/healthz")
    page.evaluate(LISTEN, [f"/v1/sessions/{session_id}/events/stream?follow=true"])
    page.wait_for_function("window.__es.opens === 1")
    run = threading.Thread(target=httpx.post, args=(f"{live_server.url}/v1/sessions/{session_id}/runs",),
                           kwargs={"json": {"prompt": "tell 200 0.05"}, "timeout": DEADLINE}, daemon=True)
    run.start()
    wait_until(lambda: _words(page) >= 10, "ten words through the browser")
    kept = page.evaluate("window.__es.lastId")
    proxy.cut()
    page.wait_for_function("window.__es.opens === 2", timeout=DEADLINE * 1000)
    page.wait_for_function("window.__es.answer !== null", timeout=DEADLINE * 1000)
    run.join(DEADLINE)
    assert page.evaluate("window.__es.draft") == told(200), "the deltas after the reconnect rebuild the answer"
    assert page.evaluate("window.__es.answer") == told(200)
    again = [head for head in proxy.heads if "events/stream" in head][1]
    assert kept, "the browser kept an id"
    assert f"last-event-id: {kept}" in again.lower(), again


def test_the_browsers_event_source_shows_a_tools_progress_live_and_counts_it_stored(
    live_server: LiveServer, proxy: CuttableProxy, open_page: Callable[..., Page]
) -> None:
    session_id = httpx.post(f"{live_server.url}/v1/sessions", json={}).json()["id"]
    page = open_page(f"{proxy.url}/healthz")
    page.evaluate(LISTEN, [f"/v1/sessions/{session_id}/events/stream?follow=true"])
    page.wait_for_function("window.__es.opens === 1")
    run = threading.Thread(target=httpx.post, args=(f"{live_server.url}/v1/sessions/{session_id}/runs",),
                           kwargs={"json": {"prompt": "steps 3 1.5"}, "timeout": DEADLINE}, daemon=True)
    run.start()
    page.wait_for_function("window.__es.lines.includes('step 1 of 3')")
    assert "stepped" not in (page.evaluate("window.__es.answer") or ""), "the first step shows before the tool ends"
    page.wait_for_function("window.__es.answer === 'stepped'", timeout=DEADLINE * 1000)
    run.join(DEADLINE)
    assert page.evaluate("window.__es.stored") >= 6, "each live line is confirmed (3 steps, 3 partial results)"
    assert page.evaluate("window.__es.lastId") == str(
        max(e["seq"] for e in httpx.get(f"{live_server.url}/v1/sessions/{session_id}/events?view=ui").json()))
