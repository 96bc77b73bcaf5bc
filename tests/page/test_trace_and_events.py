"""The inspector in a real browser: one trace per prompt across an approval's resume, the event list's
filters, search and tail, and a fork from any event with its state edited."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from playwright.sync_api import Page, expect

from server.agent import DANGER_LOG
from server.live import LiveServer

from .conftest import new_session, send, wait_ready


def test_a_prompts_trace_holds_its_runs_and_the_wait_for_its_approval(page_server: LiveServer,
                                                                      open_page: Callable[..., Page]) -> None:
    DANGER_LOG.clear()
    page = open_page(page_server.url)
    new_session(page)
    send(page, "hello first")
    wait_ready(page)
    send(page, "danger ahead")
    page.get_by_role("button", name="Approve").click()
    expect(page.locator(".msg.assistant").last).to_have_text("The tool said: wiped prod.")
    wait_ready(page)
    page.get_by_role("tab", name="Timeline").click()
    expect(page.locator("#trace-picker option")).to_have_text(["1. hello first (completed)",
                                                               "2. danger ahead (completed)"])
    rows = page.locator("#trace-chart .bar-row .bar-label")
    expect(rows).to_have_count(6)
    labels = [text.split("\n")[0] for text in rows.all_inner_texts()]
    assert labels == ["run", "model page-model", "approval of danger", "resume", "tool danger", "model page-model"]
    expect(rows.nth(2)).to_contain_text("default approved")
    expect(page.locator("#trace-chart .facts")).to_contain_text("2 model calls · 1 tool call")
    expect(page.locator("#trace-chart .facts")).to_contain_text("waiting for people")
    page.locator("#trace-picker").select_option("0")
    expect(rows).to_have_count(2)


def test_the_event_list_filters_searches_and_follows_its_tail(page_server: LiveServer,
                                                             open_page: Callable[..., Page]) -> None:
    page = open_page(page_server.url, viewport={"width": 1300, "height": 600})
    new_session(page)
    for prompt in ("hello one", "steps 2 0.2", "hello three"):
        send(page, prompt)
        wait_ready(page)
    rows = page.locator("#event-list [role=option]")
    expect(rows.last).to_contain_text("run completed")
    expect(rows.filter(has_text="hello three")).to_have_count(2)  # the prompt and its answer
    total = rows.count()
    shown = page.locator("#event-list [role=option]:not([hidden])")
    page.locator("#event-kind").select_option("message")
    expect(page.locator("#event-count")).to_contain_text(f"{total} events (")
    assert all("message" in text for text in shown.locator(".kind").all_inner_texts())
    page.locator("#event-kind").select_option("")
    page.locator("#event-source").select_option("tool")
    assert set(shown.locator(".kind").all_inner_texts()) == {"status · tool"}
    page.locator("#event-source").select_option("")
    page.get_by_label("Search events").fill("steps done")
    expect(shown).to_have_count(3)  # the result, its "returned" line and the answer that quotes it
    page.get_by_label("Search events").fill("")
    expect(shown).to_have_count(total)
    listing = page.locator("#event-list")
    assert listing.evaluate("l => l.scrollHeight - l.scrollTop - l.clientHeight < 24"), "at its end"
    send(page, "hello four")
    wait_ready(page)
    expect(rows.last).to_contain_text("run completed")
    assert listing.evaluate("l => l.scrollHeight - l.scrollTop - l.clientHeight < 24"), "it followed the tail"
    listing.evaluate("l => l.scrollTo(0, 0)")
    send(page, "hello five")
    wait_ready(page)
    assert listing.evaluate("l => l.scrollTop") == 0, "scrolled up, it stays"


def test_fork_before_any_event_with_its_state_edited(page_server: LiveServer, open_page: Callable[..., Page]) -> None:
    created = httpx.post(f"{page_server.url}/v1/sessions", json={"state": {"tone": "calm"}}).json()["id"]
    httpx.post(f"{page_server.url}/v1/sessions/{created}/runs", json={"prompt": "hello one"}, timeout=10)
    httpx.post(f"{page_server.url}/v1/sessions/{created}/runs", json={"prompt": "hello two"}, timeout=10)
    page = open_page(f"{page_server.url}/#{created}")
    expect(page.locator(".msg.assistant")).to_have_count(2)
    page.locator("#event-list [role=option]", has_text="turn 1: calling model").last.click()
    page.get_by_role("button", name="Fork before this event").click()
    state = page.get_by_label("state.data of the fork (JSON)")
    expect(state).to_have_value('{\n  "tone": "calm"\n}')
    state.fill('{"tone": "cheerful"}')
    page.get_by_role("button", name="Fork and run").click()
    expect(page.locator(".fork-note")).to_contain_text(f"from session {created[:12]}")
    expect(page.locator(".msg.assistant")).to_have_text(["You said: hello one", "You said: hello two"])
    wait_ready(page)
    fork = page.evaluate("document.body.dataset.session")
    assert fork != created
    assert httpx.get(f"{page_server.url}/v1/sessions/{fork}/state").json()["state"] == {"tone": "cheerful"}
    assert httpx.get(f"{page_server.url}/v1/sessions/{created}/state").json()["state"] == {"tone": "calm"}
