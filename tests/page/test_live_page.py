"""Regression tests, in a real browser, of the live page (issue 25, defects 1 to 6): what a run shows
while it goes on, after a reload or a switch, when it starts elsewhere, fails, stops or waits."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable

import httpx
from playwright.sync_api import Page, expect

from server.agent import DANGER_LOG
from server.live import LiveServer
from server.live_agents import told
from support.waiting import DEADLINE, wait_until

from .conftest import new_session, send, wait_ready

DRAFT = ".msg.assistant.streaming"


def _draft_words(page: Page) -> list[str]:
    text: str = page.evaluate(f"document.querySelector({DRAFT!r})?.textContent || ''")
    return text.split()


# -- 1. a tool call while it runs ----------------------------------------------------------------

def test_a_running_tool_card_shows_its_last_line_a_bar_and_a_timer(page_server: LiveServer,
                                                                   open_page: Callable[..., Page]) -> None:
    page = open_page(page_server.url)
    new_session(page)
    send(page, "steps 4 3")
    card = page.locator(".tool-card")
    expect(card.locator(".tool-state")).to_have_text("running")
    expect(card.locator(".tool-line")).to_have_text(re.compile(r"step 2 of 4|logged step 2"))
    bar = card.locator("progress")
    expect(bar).to_be_visible()
    assert bar.evaluate("b => b.value") in (0.5, 0.75), "a partial result {done: 2, of: 4} is half done"
    first = card.locator(".tool-timer").text_content()
    time.sleep(0.5)
    assert card.locator(".tool-timer").text_content() != first, "the timer runs"
    expect(card.locator(".tool-state")).to_have_text("returned")
    expect(card.locator(".tool-line")).to_be_hidden()
    expect(card.locator("progress")).to_be_hidden()
    assert float(card.locator(".tool-timer").text_content().split()[-2]) >= 2.5, "it took about 3 s"


# -- 2. an answer followed again after a reload or a switch; a stopped answer kept -----------------

def test_reloading_mid_answer_shows_the_whole_answer_from_its_first_word(page_server: LiveServer,
                                                                         open_page: Callable[..., Page]) -> None:
    page = open_page(page_server.url)
    new_session(page)
    send(page, "tell 80 0.04")
    wait_until(lambda: len(_draft_words(page)) >= 10, "ten words shown")
    page.reload()
    page.wait_for_function(f"document.querySelector({DRAFT!r})")
    assert _draft_words(page)[:2] == ["w0", "w1"], "the draft starts again from the first word"
    expect(page.locator(".msg.assistant")).to_have_text(told(80))
    wait_ready(page)


def test_switching_away_and_back_mid_answer_shows_the_whole_answer(page_server: LiveServer,
                                                                   open_page: Callable[..., Page]) -> None:
    page = open_page(page_server.url)
    quiet = new_session(page)
    busy = new_session(page)
    send(page, "tell 80 0.04")
    wait_until(lambda: len(_draft_words(page)) >= 10, "ten words shown")
    page.locator(f"#session-list [data-session='{quiet}']").click()
    expect(page.locator("#conversation .empty")).to_contain_text("No messages yet")
    page.locator(f"#session-list [data-session='{busy}']").click()
    expect(page.locator(".msg.assistant")).to_have_text(told(80))
    assert page.locator(".msg.assistant").count() == 1


def test_a_stopped_answer_stays_after_a_reload(page_server: LiveServer, open_page: Callable[..., Page]) -> None:
    page = open_page(page_server.url)
    new_session(page)
    send(page, "tell 200 0.04")
    wait_until(lambda: len(_draft_words(page)) >= 8, "eight words shown")
    page.get_by_role("button", name="Stop").click()
    wait_ready(page)
    answer = page.locator(".msg.assistant")
    expect(answer).to_contain_text("Stopped here: the run was cancelled.")
    kept = answer.locator(".answer").text_content()
    assert kept.split()[:8] == told(8).split()
    page.reload()
    expect(answer.locator(".answer")).to_have_text(kept)
    expect(answer).to_contain_text("Stopped here")


# -- 3. runs started elsewhere, approvals answered elsewhere -----------------------------------------

def test_an_idle_page_shows_a_run_started_elsewhere_as_it_goes(page_server: LiveServer,
                                                               open_page: Callable[..., Page]) -> None:
    page = open_page(page_server.url)
    session_id = new_session(page)
    run = threading.Thread(target=httpx.post, args=(f"{page_server.url}/v1/sessions/{session_id}/runs",),
                           kwargs={"json": {"prompt": "tell 40 0.05"}, "timeout": DEADLINE}, daemon=True)
    run.start()
    expect(page.locator("#run-state")).to_have_text("Running...")
    expect(page.locator(".msg.user")).to_have_text("tell 40 0.05")
    page.wait_for_function(f"document.querySelector({DRAFT!r})")
    expect(page.locator(".msg.assistant")).to_have_text(told(40))
    wait_ready(page)
    run.join(DEADLINE)


# -- 4. a failed run says why once ----------------------------------------------------------------

def test_a_run_that_fails_on_a_bug_shows_its_reason_once(page_server: LiveServer,
                                                          open_page: Callable[..., Page]) -> None:
    page = open_page(page_server.url)
    new_session(page)
    send(page, "crash")
    expect(page.locator(".error")).to_have_text("Failed: the model crashed: KeyError 'x'")
    wait_ready(page)
    expect(page.locator(".error")).to_have_count(1)
    assert "internal server error" not in page.locator("#conversation").text_content()
    page.reload()
    expect(page.locator(".error")).to_have_text(["Failed: the model crashed: KeyError 'x'"])


# -- 5. the run's state says what is true ---------------------------------------------------------

def test_after_stop_no_cursor_and_no_busy_banner_stay(page_server: LiveServer, open_page: Callable[..., Page]) -> None:
    page = open_page(page_server.url)
    new_session(page)
    send(page, "tell 200 0.04")
    wait_until(lambda: len(_draft_words(page)) >= 5, "five words shown")
    send(page, "my next question")
    expect(page.locator("#send-problem")).to_contain_text("A run is going on")
    page.get_by_role("button", name="Stop").click()
    wait_ready(page)
    expect(page.locator(".streaming")).to_have_count(0)
    expect(page.locator("#send-problem")).to_be_hidden()
    expect(page.get_by_role("button", name="Stop")).to_be_hidden()
    expect(page.get_by_role("textbox", name="Message")).to_have_value("my next question")


def test_the_top_bar_and_the_tab_title_count_the_calls_waiting_and_a_denial_is_no_failure(
    page_server: LiveServer, open_page: Callable[..., Page]
) -> None:
    DANGER_LOG.clear()
    page = open_page(page_server.url)
    session_id = new_session(page)
    send(page, "pair of dangers")
    expect(page.locator("#run-state")).to_have_text("Waiting for approval (2)")
    assert page.title() == "(2) waiting for approval · hookline"
    expect(page.locator(f"#session-list [data-session='{session_id}'] .badge")).to_have_text("waiting (2)")
    first = page.locator(".approval").first
    expect(first).to_contain_text('danger(target="prod")')
    first.get_by_label("Reason for a denial").fill("not prod")
    first.get_by_role("button", name="Deny").click()
    expect(page.locator(".approval")).to_have_count(1)
    expect(page.locator(".approval")).to_contain_text('danger(target="qa")')
    page.locator(".approval").get_by_role("button", name="Approve").click()
    expect(page.locator(".msg.assistant").last).to_contain_text("The tool said:")
    wait_ready(page)
    assert page.title() == "hookline"
    states = page.locator(".tool-card .tool-state")
    expect(states).to_have_text(["denied", "returned"])
    assert DANGER_LOG == ["qa"]


# -- 6. following the end, or not ---------------------------------------------------------------

def test_a_reader_who_scrolled_up_stays_there_and_is_offered_the_latest(page_server: LiveServer,
                                                                       open_page: Callable[..., Page]) -> None:
    page = open_page(page_server.url, viewport={"width": 1300, "height": 500})
    new_session(page)
    for n in range(4):
        send(page, " ".join(["filler"] * 60) + f" {n}")
        wait_ready(page)
    send(page, "tell 300 0.03")
    page.wait_for_function(f"document.querySelector({DRAFT!r})")
    box = page.locator("#conversation")
    box.evaluate("c => c.scrollTo(0, 0)")
    time.sleep(0.6)
    assert box.evaluate("c => c.scrollTop") == 0, "the deltas did not pull the reader down"
    jump = page.get_by_role("button", name="Jump to latest")
    expect(jump).to_be_visible()
    jump.click()
    expect(jump).to_be_hidden()
    assert box.evaluate("c => c.scrollHeight - c.scrollTop - c.clientHeight < 48"), "at the end"
    time.sleep(0.3)
    assert box.evaluate("c => c.scrollHeight - c.scrollTop - c.clientHeight < 48"), "and following it again"
    page.get_by_role("button", name="Stop").click()
    wait_ready(page)
