"""axe-core (npm `axe-core`, from the JavaScript test kit) run in the page, in a real browser (issue 25,
defect 9 and its "done when"): no serious or critical violation in five states of the page (empty,
streaming, waiting for approval, failed, the inspector open), and none of the three rules the page
broke (scrollable regions that take no focus, names that do not hold the visible label, headings
that skip a level)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from server.live import LiveServer
from support.node_kit import kit_modules

from .conftest import new_session, send, wait_ready

SERIOUS = ("serious", "critical")
BROKEN_RULES = ["scrollable-region-focusable", "label-content-name-mismatch", "heading-order"]
"""The rules the page broke (the second is experimental in axe, so it is asked for by name)."""


@pytest.fixture
def axe(open_page: Callable[..., Page]) -> Callable[..., list[dict[str, Any]]]:
    """Runs axe-core in a page: the violations, each `{id, impact, nodes: [targets]}`."""
    script = kit_modules() / "axe-core" / "axe.min.js"

    def run(page: Page, rules: list[str] | None = None) -> list[dict[str, Any]]:
        if not page.evaluate("typeof window.axe !== 'undefined'"):
            page.add_script_tag(path=str(script))
        options = {"runOnly": {"type": "rule", "values": rules}} if rules else {
            "rules": {"label-content-name-mismatch": {"enabled": True}}}
        found: list[dict[str, Any]] = page.evaluate("""async (options) => {
            const result = await axe.run(document, options);
            return result.violations.map((v) => ({id: v.id, impact: v.impact,
                                                  nodes: v.nodes.map((n) => n.target.join(' '))}));
        }""", options)
        return found

    return run


def serious(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [v for v in violations if v["impact"] in SERIOUS]


def test_no_serious_violation_empty_streaming_approval_failed_and_inspecting(
    page_server: LiveServer, open_page: Callable[..., Page], axe: Callable[..., list[dict[str, Any]]]
) -> None:
    page = open_page(page_server.url)
    expect(page.locator("#conversation .empty")).to_contain_text("Pick or create a session")
    assert serious(axe(page)) == [], "empty"

    new_session(page)
    send(page, "steps 6 3")
    expect(page.locator(".tool-card .tool-state")).to_have_text("running")
    page.locator(".tool-card summary").click()
    assert serious(axe(page)) == [], "a tool running"
    wait_ready(page)
    send(page, "tell 60 0.05")
    expect(page.locator(".msg.assistant.streaming")).to_be_visible()
    assert serious(axe(page)) == [], "an answer streaming"
    page.get_by_role("button", name="Stop").click()
    wait_ready(page)

    send(page, "pair of dangers")
    expect(page.locator(".approval")).to_have_count(2)
    page.locator(".approval").first.get_by_text("Edit arguments").click()
    page.locator(".approval").first.get_by_label("Arguments (JSON)").fill('{"target": "staging"}')
    expect(page.locator(".approval .diff").first).to_be_visible()
    assert serious(axe(page)) == [], "waiting for approval"
    page.get_by_role("button", name="Approve all 2").click()
    wait_ready(page)

    send(page, "crash")
    expect(page.locator(".error")).to_be_visible()
    wait_ready(page)
    assert serious(axe(page)) == [], "failed"

    page.locator("#event-list [role=option]", has_text="message · assistant").first.click()
    expect(page.locator(".model-call")).to_be_visible()
    assert serious(axe(page)) == [], "the inspector open on a model call"
    page.get_by_role("tab", name="Timeline").click()
    expect(page.locator(".bar-row").first).to_be_visible()
    assert serious(axe(page)) == [], "the inspector open on a trace"


def test_long_json_and_code_timeline_bars_and_answer_headings_break_none_of_the_rules_the_page_broke(
    page_server: LiveServer, open_page: Callable[..., Page], axe: Callable[..., list[dict[str, Any]]]
) -> None:
    session_id = httpx.post(f"{page_server.url}/v1/sessions", json={}).json()["id"]
    for prompt in ["markdown 0", "steps 2 0.2", "\n```\n" + "a very long line of code " * 30 + "\n```"]:
        httpx.post(f"{page_server.url}/v1/sessions/{session_id}/runs", json={"prompt": prompt}, timeout=10)
    page = open_page(f"{page_server.url}/#{session_id}")
    expect(page.locator(".msg.assistant")).to_have_count(3)
    page.locator(".tool-card summary").click()
    page.locator("#event-list [role=option], #event-list button", has_text="message · assistant").first.click()
    expect(page.locator(".model-call")).to_be_visible()
    assert axe(page, BROKEN_RULES) == []
    page.get_by_role("tab", name="Timeline").click()
    expect(page.locator(".bar-row").first).to_be_visible()
    assert axe(page, BROKEN_RULES) == []
