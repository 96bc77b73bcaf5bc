"""The session list in a real browser: badges, full titles, search snippets, lineage and resizable panes."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from hookline import Event, TextPart
from hookline.server import log_window
from hookline.server.inspect_routes import FOUND_MOST
from hookline.sessions import SessionStore, SQLiteSessionStore
from server.live import LiveServer
from support.waiting import DEADLINE

from .agents import page_agent
from .conftest import send, wait_ready

LONG_TITLE = "please look at the quarterly numbers of every region and tell me which one grew the most"


def _session_with(server: LiveServer, *prompts: str) -> str:
    session_id: str = httpx.post(f"{server.url}/v1/sessions", json={}).json()["id"]
    for prompt in prompts:
        httpx.post(f"{server.url}/v1/sessions/{session_id}/runs", json={"prompt": prompt}, timeout=10)
    return session_id


def test_badges_say_which_sessions_run_wait_or_failed(page_server: LiveServer, open_page: Callable[..., Page]) -> None:
    failed = _session_with(page_server, "crash")
    waiting = _session_with(page_server, "pair of dangers")
    running = _session_with(page_server)
    quiet = _session_with(page_server, "hello")
    run = threading.Thread(target=httpx.post, args=(f"{page_server.url}/v1/sessions/{running}/runs",),
                           kwargs={"json": {"prompt": "tell 60 0.05"}, "timeout": DEADLINE}, daemon=True)
    run.start()
    page = open_page(f"{page_server.url}/#{quiet}")

    def badge(session_id: str) -> object:
        return page.locator(f"#session-list [data-session='{session_id}'] .badge")

    expect(badge(failed)).to_have_text("failed")
    expect(badge(waiting)).to_have_text("waiting (2)")
    expect(badge(running)).to_have_text("running")
    expect(badge(quiet)).to_have_count(0)
    page.locator(f"#session-list [data-session='{running}']").click()
    expect(badge(running)).to_have_count(0)  # the open session's own stream says it ended
    expect(page.locator("#run-state")).to_have_text("Ready", timeout=DEADLINE * 1000)
    run.join(DEADLINE)


def test_full_titles_on_hover_and_search_snippets(page_server: LiveServer, open_page: Callable[..., Page]) -> None:
    long = _session_with(page_server, LONG_TITLE, "then the banana question about the fruit stand")
    page = open_page(f"{page_server.url}/#{long}")
    pick = page.locator(f"#session-list [data-session='{long}']")
    assert pick.get_attribute("title").startswith(LONG_TITLE)
    clipped = pick.locator(".title").evaluate("t => t.scrollWidth > t.clientWidth")
    assert clipped, "the list shows the title's start; the whole of it on hover"
    page.get_by_label("Search sessions").fill("banana")
    snippet = page.locator("#session-list .snippet")
    expect(snippet).to_contain_text("then the banana question")
    expect(snippet.locator("mark")).to_have_text("banana")


def test_a_fork_is_listed_under_its_origin_and_its_lineage_shows(page_server: LiveServer,
                                                                 open_page: Callable[..., Page]) -> None:
    source = _session_with(page_server, "hello origin")
    page = open_page(f"{page_server.url}/#{source}")
    page.get_by_role("button", name="Regenerate this answer").click()
    expect(page.locator(".fork-note")).to_contain_text(f"from session {source[:12]}")
    expect(page.locator(".msg.assistant")).to_have_text(["You said: hello origin"])
    wait_ready(page)
    fork = page.evaluate("document.body.dataset.session")
    expect(page.locator(f"#session-list [data-session='{fork}'] .origin")).to_have_text("fork of hello origin")
    page.get_by_role("tab", name="State").click()
    expect(page.locator("#lineage")).to_contain_text("Forked from hello origin")
    page.locator("#lineage").get_by_role("button", name="hello origin").click()
    expect(page.locator("body")).to_have_attribute("data-session", source)
    page.get_by_role("tab", name="State").click()
    expect(page.locator("#lineage")).to_contain_text("Forks of this session (1)")


def test_the_list_says_when_it_shows_the_newest_sessions_only(page_server: LiveServer,
                                                               open_page: Callable[..., Page]) -> None:
    sessions = [_session_with(page_server) for _ in range(FOUND_MOST + 1)]
    page = open_page(page_server.url)
    expect(page.locator("#session-list .pick")).to_have_count(FOUND_MOST)
    expect(page.locator(f"#session-list [data-session='{sessions[0]}']")).to_have_count(0)  # the oldest: left out
    note = page.locator("#session-list .cut")
    expect(note).to_have_text(f"The newest {FOUND_MOST} sessions; search finds older ones.")
    page.get_by_label("Search sessions").fill(sessions[0])
    expect(page.locator("#session-list .pick")).to_have_count(1)
    expect(note).to_have_count(0)


def test_the_panes_resize_by_keyboard_and_keep_their_width(page_server: LiveServer,
                                                           open_page: Callable[..., Page]) -> None:
    page = open_page(page_server.url)
    sessions = page.locator("nav#sessions")
    before = sessions.evaluate("n => n.getBoundingClientRect().width")
    separator = page.get_by_role("separator", name="Resize the session list")
    separator.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    assert sessions.evaluate("n => n.getBoundingClientRect().width") == before + 48
    inspector = page.locator("aside#inspector")
    wide = inspector.evaluate("n => n.getBoundingClientRect().width")
    page.get_by_role("separator", name="Resize the inspector").focus()
    page.keyboard.press("ArrowLeft")
    assert inspector.evaluate("n => n.getBoundingClientRect().width") == wide + 16, "leftwards widens the right pane"
    page.reload()
    assert sessions.evaluate("n => n.getBoundingClientRect().width") == before + 48
    send(page, "hello")
    wait_ready(page)


def test_a_long_session_shows_its_latest_page_and_the_earlier_ones_on_demand_in_the_chat_and_the_events(
    make_server: Callable[..., LiveServer], tmp_path: Path, open_page: Callable[..., Page], store: SessionStore
) -> None:
    async def fill() -> None:
        writer = SQLiteSessionStore(tmp_path / "sessions.db")
        await writer.create(session_id="long")
        for start in range(0, 1200, 300):
            await writer.append_events("long", [
                Event(author="user" if i % 2 == 0 else "assistant", kind="message",
                      role="user" if i % 2 == 0 else "assistant", parts=[TextPart(text=f"message {i}")])
                for i in range(start, start + 300)])
        await writer.aclose()

    filling = threading.Thread(target=asyncio.run, args=(fill(),))  # Playwright runs a loop in this thread
    filling.start()
    filling.join(DEADLINE)
    server = make_server(agent=page_agent(store))
    page = open_page(f"{server.url}/#long")
    expect(page.locator(".msg").last).to_have_text("message 1199")
    expect(page.locator(".msg")).to_have_count(1000)
    expect(page.locator("#turns")).not_to_contain_text("message 199")
    expect(page.locator("#event-count")).to_have_text("1000 events (the latest)")
    page.get_by_role("button", name="Show earlier events").click()
    expect(page.locator("#event-count")).to_have_text("1200 events")
    expect(page.get_by_role("button", name="Show earlier events")).to_be_hidden()
    rows = page.locator("#event-list [role=option]")
    assert [rows.first.get_attribute("id"), rows.last.get_attribute("id")] == ["event-1", "event-1200"]
    assert page.evaluate("document.activeElement.id") == "event-list", "the hidden button leaves focus in the list"
    page.get_by_role("button", name="Show earlier messages").click()
    expect(page.locator(".msg")).to_have_count(1200)
    expect(page.locator(".msg").first).to_have_text("message 0")
    expect(page.get_by_role("button", name="Show earlier messages")).to_have_count(0)
    expect(page.locator("#event-count")).to_have_text("1200 events")
    send(page, "hello after")
    expect(page.locator(".msg.assistant").last).to_have_text("You said: hello after")


def test_a_long_sessions_trace_lists_the_prompts_of_its_latest_events_and_says_so(
    make_server: Callable[..., LiveServer], tmp_path: Path, open_page: Callable[..., Page], store: SessionStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(log_window, "WINDOW", 30)

    async def fill() -> None:
        writer = SQLiteSessionStore(tmp_path / "sessions.db")
        await writer.create(session_id="runs")
        for number in range(20):
            await writer.append_events("runs", [
                Event(author="user", kind="message", role="user", parts=[TextPart(text=f"prompt {number}")]),
                Event(author="assistant", kind="message", role="assistant", parts=[TextPart(text=f"answer {number}")]),
                Event.status("assistant", "agent", "run completed", run_end="completed")])
        await writer.aclose()

    filling = threading.Thread(target=asyncio.run, args=(fill(),))  # Playwright runs a loop in this thread
    filling.start()
    filling.join(DEADLINE)
    page = open_page(f"{make_server(agent=page_agent(store)).url}/#runs")
    expect(page.locator(".msg").last).to_have_text("answer 19")
    page.get_by_role("tab", name="Timeline").click()
    expect(page.locator("#trace-picker option")).to_have_count(10)
    expect(page.locator("#trace-picker option").first).to_have_text("1. prompt 10 (completed)")
    expect(page.locator("#trace-chart")).to_contain_text("the prompts of its latest 5,000 events only")
