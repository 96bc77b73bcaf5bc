"""The web page's Stop button, in headless Chromium (Debian's, through Playwright's Python API)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from hookline.server import create_app
from hookline.sessions import SessionStore

from .live import LiveServer
from .test_scaleout_cancel import hanging_agent

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SLOW = 0.3
"""Seconds the slow server adds to each read of a session's log, and twice that to the start of each run."""

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium at /usr/bin/chromium")


@pytest.fixture
def page() -> Iterator[Page]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1100, "height": 800})
        page.set_default_timeout(10_000)
        yield page
        browser.close()


def slowed(app: Any, seconds: float) -> Any:
    """`app`, answering `GET .../events` `seconds` late and starting runs twice that late, as a loaded server does."""

    async def delayed(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/v1/sessions/"):
            if scope["method"] == "GET" and scope["path"].endswith("/events"):
                await asyncio.sleep(seconds)  # the server's lag, not a wait of the test
            elif scope["method"] == "POST" and scope["path"].endswith("/runs"):
                await asyncio.sleep(2 * seconds)
        await app(scope, receive, send)

    return delayed


@pytest.fixture(params=["prompt", "slow"])
def hanging_server(request: pytest.FixtureRequest, store: SessionStore) -> Iterator[LiveServer]:
    """A server of the hanging agent: a prompt one, or one slow to load sessions and to start runs."""
    app = create_app(hanging_agent(store), store, tokens={})
    server = LiveServer(slowed(app, SLOW) if request.param == "slow" else app).start()
    yield server
    server.stop()


def test_stop_cancels_the_streaming_run(hanging_server: LiveServer, page: Page) -> None:
    page.goto(hanging_server.url)
    page.get_by_role("button", name="+ New session").click()
    # A message sent while the session opens waits for it (tests/page/test_send_while_opening.py);
    # this test is about Stop, so it starts from an opened session.
    expect(page.locator("#conversation .empty")).to_contain_text("No messages yet")
    stop = page.get_by_role("button", name="Stop")
    expect(stop).to_be_hidden()

    page.get_by_label("Message").fill("hang on")
    page.get_by_label("Message").press("Enter")
    expect(page.locator("details.activity summary").last).to_contain_text("turn 1: calling model")
    expect(stop).to_be_visible()
    stop.click()
    expect(page.locator("#run-state")).to_have_text("Ready")
    expect(page.locator("details.activity summary").last).to_contain_text("run cancelled")
    expect(stop).to_be_hidden()
    expect(page.locator(".error")).to_have_count(0)

    page.get_by_label("Message").fill("hello again")
    page.get_by_label("Message").press("Enter")
    expect(page.locator(".msg.assistant").last).to_have_text("You said: hello again")
