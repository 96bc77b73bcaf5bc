"""The web page in headless Chromium (Debian's, through Playwright's Python API)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from .agent import DANGER_LOG
from .live import LiveServer

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium at /usr/bin/chromium")

# Remembers whether an answer was ever shown while still streaming (before the final message).
WATCH_STREAMING = """
window.__sawStreaming = false;
new MutationObserver(() => {
  if (document.querySelector('.msg.assistant.streaming')) window.__sawStreaming = true;
}).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.add_init_script(WATCH_STREAMING)
    yield page
    context.close()


def send(page: Page, text: str) -> None:
    page.get_by_label("Message").fill(text)
    page.get_by_label("Message").press("Enter")


def wait_ready(page: Page) -> None:
    expect(page.locator("#run-state")).to_have_text("Ready")


def test_chat_status_lines_streaming_and_approval(server: LiveServer, page: Page) -> None:
    DANGER_LOG.clear()
    page.goto(server.url)
    page.get_by_role("button", name="+ New session").click()

    send(page, "hello streaming world")
    expect(page.locator(".msg.user").last).to_have_text("hello streaming world")
    expect(page.locator(".msg.assistant").last).to_have_text("You said: hello streaming world")
    wait_ready(page)
    assert page.evaluate("window.__sawStreaming"), "the answer streamed in"
    activity = page.locator("details.activity").last
    expect(activity.locator("summary")).to_contain_text("run completed")
    expect(activity.locator("li").first).to_have_text("[agent] turn 1: calling model")
    assert activity.get_attribute("open") is None, "status lines start collapsed"

    send(page, "add 2 and 3")
    expect(page.locator(".msg.assistant").last).to_have_text("The tool said: 5.")
    wait_ready(page)
    activity = page.locator("details.activity").last
    activity.locator("summary").click()
    expect(activity.locator("li", has_text="running add(a=2, b=3)")).to_be_visible()
    expect(activity.locator("li", has_text="add returned 5")).to_be_visible()

    send(page, "danger zone")
    approve = page.get_by_role("button", name="Approve")
    expect(approve).to_be_visible()
    expect(page.locator(".approval")).to_contain_text('danger(target="prod")')
    expect(page.locator("#run-state")).to_have_text("Waiting for approval (1)")
    assert DANGER_LOG == []
    expect(approve).to_be_focused()
    page.keyboard.press("Enter")  # keyboard only: the focused Approve button
    expect(page.locator(".msg.assistant").last).to_have_text("The tool said: wiped prod.")
    wait_ready(page)
    expect(page.locator(".approval")).to_have_count(0)
    assert DANGER_LOG == ["prod"]

    page.reload()
    expect(page.locator(".msg.assistant")).to_have_text(
        ["You said: hello streaming world", "The tool said: 5.", "The tool said: wiped prod."])
    expect(page.locator(".approval")).to_have_count(0)


def test_deny_and_pending_draft(server: LiveServer, page: Page) -> None:
    DANGER_LOG.clear()
    page.goto(server.url)
    page.get_by_role("button", name="+ New session").click()
    send(page, "danger again")
    page.get_by_role("button", name="Deny").click()
    expect(page.locator(".msg.assistant").last).to_contain_text("the user refused the call to danger")
    assert DANGER_LOG == []

    session_id = page.evaluate("document.body.dataset.session")
    edit = {"type": "tool_call", "id": "edit-1", "name": "write_file", "arguments": {"path": "notes.md"}}
    response = httpx.post(f"{server.url}/v1/sessions/{session_id}/prepare",
                          json={"author": "user", "kind": "message", "role": "user", "parts": [edit]})
    assert response.status_code == 200
    page.reload()
    expect(page.locator(".pending")).to_contain_text('Pending draft (user): write_file(path="notes.md")')
    send(page, "saved it")
    expect(page.locator(".pending")).to_have_count(0)
    expect(page.locator(".msg.user").last).to_contain_text('write_file(path="notes.md")')
    expect(page.locator(".msg.user").last).to_contain_text("saved it")


def test_token_is_asked_once_and_kept(auth_server: LiveServer, page: Page) -> None:
    page.goto(auth_server.url)
    token = page.get_by_label("Access token")
    expect(token).to_be_visible()
    token.fill("tok-alice")
    token.press("Enter")
    expect(page.locator("#token-panel")).to_be_hidden()
    page.get_by_role("button", name="+ New session").click()
    send(page, "hi from alice")
    expect(page.locator(".msg.assistant").last).to_have_text("You said: hi from alice")
    page.reload()
    expect(page.locator("#token-panel")).to_be_hidden()
    expect(page.locator(".msg.assistant").last).to_have_text("You said: hi from alice")
    page.get_by_role("button", name="Forget token").click()
    expect(page.get_by_label("Access token")).to_be_visible()


def test_phone_sized_screen(server: LiveServer, browser: Browser, make_server: Callable[..., LiveServer]) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 700}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        page.goto(server.url)
        expect(page.locator("nav#sessions")).to_be_hidden()
        toggle = page.get_by_role("button", name="Sessions")
        toggle.click()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        page.get_by_role("button", name="+ New session").click()
        expect(page.locator("nav#sessions")).to_be_hidden()
        send(page, "a fairly long message " * 8)
        expect(page.locator(".msg.assistant")).to_have_count(1)
        wait_ready(page)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"
        expect(page.get_by_role("button", name="Send")).to_be_in_viewport()
    finally:
        context.close()
