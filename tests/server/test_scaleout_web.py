"""The web page's Stop button, in headless Chromium (Debian's, through Playwright's Python API)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from hookline.sessions import SessionStore

from .live import LiveServer
from .test_scaleout_cancel import hanging_agent

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium at /usr/bin/chromium")


@pytest.fixture
def page() -> Iterator[Page]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1100, "height": 800})
        page.set_default_timeout(10_000)
        yield page
        browser.close()


def test_stop_cancels_the_streaming_run(make_server: Callable[..., LiveServer], store: SessionStore,
                                        page: Page) -> None:
    server = make_server(hanging_agent(store))
    page.goto(server.url)
    page.get_by_role("button", name="+ New session").click()
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
