"""Regression tests, in a real browser, of how answers read (issue 25, defect 7): Markdown rendered while
it streams, headings in the page's outline and larger than the text, the model's reasoning shown."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from server.live import LiveServer

from .agents import REASONING
from .conftest import new_session, send, wait_ready

STREAMING = ".msg.assistant.streaming"


def test_markdown_is_rendered_while_it_streams_and_nothing_moves_at_the_end(page_server: LiveServer,
                                                                           open_page: Callable[..., Page]) -> None:
    page = open_page(page_server.url)
    new_session(page)
    send(page, "markdown 0.25")
    draft = page.locator(STREAMING)
    expect(draft.locator("strong")).to_have_text("the plan")  # rendered while the answer streams
    expect(draft.locator("code")).to_have_text("deploy")
    assert "**" not in draft.text_content(), "no raw Markdown shows"
    expect(draft.locator("li").first).to_have_text("build the image")
    heading = page.locator(".msg.assistant h3").first
    heading.evaluate("node => { window.__kept = node; }")
    wait_ready(page)
    answer = page.locator(".msg.assistant")
    expect(answer.locator("ol li")).to_have_count(2)
    assert page.evaluate("window.__kept.isConnected"), "the streamed nodes stay: no reflow at the end"


def test_headings_follow_the_pages_outline_and_are_larger_than_the_text(page_server: LiveServer,
                                                                      open_page: Callable[..., Page]) -> None:
    page = open_page(page_server.url)
    new_session(page)
    send(page, "markdown 0")
    wait_ready(page)
    answer = page.locator(".msg.assistant")
    expect(answer.locator("h3")).to_have_text("Plan")  # "##", the answer's top heading, under the page's h2
    expect(answer.locator("h4")).to_have_text("Risks")  # "###", one level below it
    body = float(answer.locator("p").first.evaluate("p => parseFloat(getComputedStyle(p).fontSize)"))
    for level in ("h3", "h4"):
        size = float(answer.locator(level).evaluate("h => parseFloat(getComputedStyle(h).fontSize)"))
        assert size > body, f"{level} is {size}px, the text {body}px"


def test_the_models_reasoning_shows_while_it_thinks_and_stays_folded(page_server: LiveServer,
                                                                   open_page: Callable[..., Page]) -> None:
    page = open_page(page_server.url)
    new_session(page)
    send(page, "think")
    thinking = page.locator(f"{STREAMING} .reasoning")
    expect(thinking).to_have_attribute("open", "")
    expect(thinking.locator("summary")).to_have_text("Thinking…")
    expect(thinking).to_contain_text("Six times seven")
    wait_ready(page)
    answer = page.locator(".msg.assistant")
    expect(answer.locator(".answer")).to_have_text("The answer is 42.")
    reasoning = answer.locator(".reasoning")
    expect(reasoning.locator("summary")).to_have_text("Reasoning")
    assert reasoning.get_attribute("open") is None, "folded once the answer is there"
    page.reload()
    reasoning.locator("summary").click()
    expect(reasoning.locator(".reasoning-text")).to_have_text(REASONING)
