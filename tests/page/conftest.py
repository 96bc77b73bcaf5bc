"""Fixtures of the web page tests: one headless Chromium per module, a real server per test.

The server is `hookline.server.create_app` around the scripted agent of the server tests
(`tests/server/agent.py`), on a SQLite file, served by uvicorn on 127.0.0.1. The browser is
Debian's Chromium (`scripts/test` installs it), driven through Playwright's Python API.
Every page fails its test if its JavaScript throws.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from hookline.sessions import SessionStore
from server.fixtures import make_server, server, store
from server.live import LiveServer

from .agents import page_agent

__all__ = ["browser", "make_server", "open_page", "page", "page_server", "server", "store"]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
WIDE = {"width": 1300, "height": 850}

# Remembers whether an answer was ever shown while still streaming (before the final message).
WATCH_STREAMING = """
window.__sawStreaming = false;
new MutationObserver(() => {
  if (document.querySelector('.msg.assistant.streaming')) window.__sawStreaming = true;
}).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # One per module, not per session: Playwright's sync API cannot run twice at once in a
    # process, and other modules (tests/server/test_web_page.py) start their own.
    if not os.path.exists(CHROMIUM):
        pytest.skip("needs Debian's chromium at /usr/bin/chromium (scripts/test installs it)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def open_page(browser: Browser) -> Iterator[Callable[..., Page]]:
    """Opens pages (each in its own browser context); each fails the test if its JavaScript throws."""
    contexts = []
    errors: list[str] = []

    def open_(url: str, **options: Any) -> Page:
        options.setdefault("viewport", WIDE)
        context = browser.new_context(**options)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.add_init_script(WATCH_STREAMING)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(url)
        return page

    yield open_
    for context in contexts:
        context.close()
    assert not errors, f"the page threw: {errors}"


@pytest.fixture
def page(server: LiveServer, open_page: Callable[..., Page]) -> Page:
    """The page of `server`, wide enough for the inspector beside the chat."""
    return open_page(server.url)


@pytest.fixture
def page_server(make_server: Callable[..., LiveServer], store: SessionStore) -> LiveServer:
    """A server of the page's own agent (tests/page/agents.py): slow streams, progress, reasoning, a crash."""
    return make_server(agent=page_agent(store))


def send(page: Page, text: str) -> None:
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")


def wait_ready(page: Page) -> None:
    expect(page.locator("#run-state")).to_have_text("Ready")


def new_session(page: Page) -> str:
    before = page.evaluate("document.body.dataset.session || ''")
    page.get_by_role("button", name="+ New session").click()
    switched = "b => (document.body.dataset.session || '') !== b && document.querySelector('#conversation .empty')"
    page.wait_for_function(switched, arg=before)
    session_id: str = page.evaluate("document.body.dataset.session")
    return session_id
