"""Regression tests, in a real browser, of the keyboard and the phone (issue 25, defect 8): where the
focus goes, how many tab stops the event list takes, tap targets and what a phone shows."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from playwright.sync_api import Page, expect

from server.agent import DANGER_LOG
from server.live import LiveServer

from .conftest import new_session, send, wait_ready

PHONE = {"viewport": {"width": 375, "height": 700}, "is_mobile": True, "has_touch": True}
FOCUSED = ("document.activeElement === document.body ? 'body'"
           " : (document.activeElement.id || document.activeElement.tagName)")


def _session_with(server: LiveServer, *prompts: str) -> str:
    session_id: str = httpx.post(f"{server.url}/v1/sessions", json={}).json()["id"]
    for prompt in prompts:
        httpx.post(f"{server.url}/v1/sessions/{session_id}/runs", json={"prompt": prompt}, timeout=10)
    return session_id


def test_the_focus_stays_in_the_page_after_an_approval_and_when_a_run_ends(page_server: LiveServer,
                                                                           open_page: Callable[..., Page]) -> None:
    DANGER_LOG.clear()
    page = open_page(page_server.url)
    new_session(page)
    send(page, "danger now")
    approve = page.get_by_role("button", name="Approve")
    expect(approve).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant").last).to_have_text("The tool said: wiped prod.")
    expect(page.get_by_role("textbox", name="Message")).to_be_focused()
    send(page, "tell 30 0.05")
    stop = page.get_by_role("button", name="Stop")
    stop.focus()
    wait_ready(page)
    assert page.evaluate(FOCUSED) == "prompt", "the focus went to the message box, not to the page's body"


def test_the_event_list_is_one_tab_stop_that_the_arrow_keys_move_through(page_server: LiveServer,
                                                                         open_page: Callable[..., Page]) -> None:
    session_id = _session_with(page_server, "hello one", "hello two", "hello three")
    page = open_page(f"{page_server.url}/#{session_id}")
    expect(page.locator(".msg.assistant")).to_have_count(3)
    rows = page.locator("#event-list [role=option], #event-list button")
    expect(rows.first).to_be_visible()
    assert rows.count() >= 12
    stops = page.evaluate("""[...document.querySelectorAll('#event-list, #event-list *')]
        .filter((node) => node.tabIndex >= 0 && node.offsetParent !== null).length""")
    assert stops == 1, f"the event list takes {stops} tab stops"
    page.locator("#event-search").focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    for _ in range(4):
        if page.evaluate(FOCUSED) == "event-list":
            break
        page.keyboard.press("Tab")
    assert page.evaluate(FOCUSED) == "event-list"
    page.keyboard.press("Home")
    expect(page.locator("#event-list [aria-selected=true]")).to_contain_text("#1")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(page.locator("#event-list [aria-selected=true]")).to_contain_text("#3")
    expect(page.locator("#event-detail > h3")).to_contain_text("Event #3")
    page.keyboard.press("End")
    expect(page.locator("#event-list [aria-selected=true]")).to_contain_text("run completed")


def test_the_first_tab_lands_at_the_top_of_the_page(page_server: LiveServer, open_page: Callable[..., Page]) -> None:
    session_id = _session_with(page_server, "hello there", "danger ahead")
    page = open_page(f"{page_server.url}/#{session_id}")
    expect(page.get_by_role("button", name="Approve")).to_be_visible()
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.textContent")
    assert focused == "Skip to the message box", f"the first Tab went to {focused!r}"
    page.keyboard.press("Enter")
    expect(page.get_by_role("textbox", name="Message")).to_be_focused()


def test_on_a_phone_every_control_takes_a_finger(page_server: LiveServer, open_page: Callable[..., Page]) -> None:
    session_id = _session_with(page_server, "hello there", "danger ahead")
    page = open_page(f"{page_server.url}/#{session_id}", **PHONE)
    expect(page.get_by_role("button", name="Approve")).to_be_visible()
    small = page.evaluate("""[...document.querySelectorAll('button, input, select, textarea, summary')]
        .filter((node) => node.offsetParent !== null && !node.classList.contains('link'))
        .map((node) => [node.textContent.trim() || node.id || node.tagName, node.getBoundingClientRect().height])
        .filter(([, height]) => height < 44)""")
    assert small == [], f"tap targets under 44 px: {small}"


def test_on_a_phone_a_picked_event_shows_and_the_pickers_fit(page_server: LiveServer,
                                                             open_page: Callable[..., Page]) -> None:
    session_id = _session_with(page_server, "hello one", "hello two", "hello three", "hello four")
    page = open_page(f"{page_server.url}/#{session_id}", **PHONE)
    expect(page.locator(".msg.assistant")).to_have_count(4)
    page.get_by_role("button", name="Inspector").click()
    rows = page.locator("#event-list [role=option], #event-list button")
    rows.nth(8).click()
    expect(page.locator("#event-detail > h3")).to_be_in_viewport()
    page.get_by_role("tab", name="Timeline").click()
    picker = page.locator("#panel-timeline select")
    expect(picker).to_be_visible()
    right = picker.evaluate("node => node.getBoundingClientRect().right")
    assert right <= 375, f"the picker ends at {right} px, past the screen's 375"
    wait_ready(page)
