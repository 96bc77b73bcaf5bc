"""The approvals panel in a real browser: parallel calls decided at once, one of them with edited arguments."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from server.agent import DANGER_LOG
from server.live import LiveServer

from .conftest import new_session, send, wait_ready


def test_approve_all_runs_the_parallel_calls_with_an_edit_and_says_who_edited(page_server: LiveServer,
                                                                             open_page: Callable[..., Page]) -> None:
    DANGER_LOG.clear()
    page = open_page(page_server.url)
    new_session(page)
    send(page, "pair of dangers")
    panel = page.get_by_role("region", name="Waiting for approval (2)")
    expect(panel.locator(".approval")).to_have_count(2)
    first = panel.locator(".approval").first
    first.get_by_text("Edit arguments").click()
    arguments = first.get_by_label("Arguments (JSON)")
    arguments.fill("{not json")
    expect(first.locator(".check")).to_contain_text("The arguments are not JSON")
    arguments.fill('{"target": "staging"}')
    expect(first.locator(".check")).to_have_text("Fits the tool's schema.")
    lines = first.locator(".diff .line")
    expect(lines).to_have_count(4)
    assert lines.evaluate_all("rows => rows.map((row) => row.className)") == [
        "line same", "line removed", "line added", "line same"]
    expect(lines.nth(1)).to_contain_text('"target": "prod"')
    expect(lines.nth(2)).to_contain_text('"target": "staging"')
    first.get_by_role("button", name="Undo the edit").click()
    expect(arguments).to_have_value('{\n  "target": "prod"\n}')
    expect(first.locator(".diff")).to_be_hidden()
    arguments.fill('{"target": "staging"}')
    panel.get_by_role("button", name="Approve all 2").click()
    expect(page.locator(".tool-card .tool-state")).to_have_text(["returned", "returned"])
    wait_ready(page)
    expect(panel).to_be_hidden()
    expect(page.get_by_role("textbox", name="Message")).to_be_focused()
    assert sorted(DANGER_LOG) == ["qa", "staging"]
    expect(page.locator(".tool-card .edited-badge")).to_have_text(["edited by default"])
    expect(page.locator(".audit")).to_have_count(2)
