"""A paused call approved with edited arguments, in a real browser: its tool card shows the arguments
that ran, says who edited them, and keeps the model's own folded below."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from server.live import TOKENS, LiveServer

CONTRAST = (Path(__file__).parent / "contrast.js").read_text()
ALICE = {"Authorization": "Bearer tok-alice"}


def _edited_run(server: LiveServer) -> tuple[str, str]:
    """A session whose `danger` call alice approved with `target="staging"` instead of the model's "prod"."""
    session_id = httpx.post(f"{server.url}/v1/sessions", json={}, headers=ALICE).json()["id"]
    paused = httpx.post(f"{server.url}/v1/sessions/{session_id}/runs", json={"prompt": "danger"}, headers=ALICE,
                        timeout=10).json()
    call_id = paused["interruptions"][0]["call_id"]
    resumed = httpx.post(f"{server.url}/v1/sessions/{session_id}/resume", headers=ALICE, timeout=10,
                         json={"approvals": {call_id: {"args": {"target": "staging"}}}})
    assert resumed.json()["output"] == "The tool said: wiped staging.", resumed.text
    return session_id, call_id


def test_the_tool_card_shows_the_edited_arguments_and_the_models_folded(
    make_server: Callable[..., LiveServer], open_page: Callable[..., Page]
) -> None:
    server = make_server(tokens=TOKENS)
    session_id, call_id = _edited_run(server)
    saved = {"origins": [{"origin": server.url, "localStorage": [{"name": "hookline.token", "value": "tok-alice"}]}]}
    page = open_page(f"{server.url}/#{session_id}", storage_state=saved)

    card = page.locator(f".tool-card[data-call='{call_id}']")
    expect(card.locator(".tool-state")).to_have_text("returned")
    expect(card.locator(".tool-name")).to_have_text('danger(target="staging")')
    expect(card.locator(".edited-badge")).to_have_text("edited by alice")
    card.locator(":scope > summary").click()
    body = card.locator(".tool-body")
    expect(body.locator(":scope > .label").first).to_have_text("Arguments (edited by alice)")
    expect(body.locator(":scope > pre").first).to_have_text('{\n  "target": "staging"\n}')
    expect(body.locator(":scope > pre").nth(1)).to_have_text("wiped staging")
    original = card.locator(".original-args")
    expect(original.locator("pre")).to_be_hidden()
    original.get_by_text("The model's arguments").click()
    expect(original.locator("pre")).to_have_text('{\n  "target": "prod"\n}')
    expect(page.locator(".audit")).to_contain_text("alice approved danger with edited arguments")
    assert page.evaluate(CONTRAST) == [], "the badge and the folded arguments have AA contrast"


def test_a_call_run_as_the_model_asked_shows_no_edit(make_server: Callable[..., LiveServer],
                                                     open_page: Callable[..., Page]) -> None:
    server = make_server(tokens=TOKENS)
    session_id = httpx.post(f"{server.url}/v1/sessions", json={}, headers=ALICE).json()["id"]
    paused = httpx.post(f"{server.url}/v1/sessions/{session_id}/runs", json={"prompt": "danger"}, headers=ALICE,
                        timeout=10).json()
    call_id = paused["interruptions"][0]["call_id"]
    httpx.post(f"{server.url}/v1/sessions/{session_id}/resume", json={"approvals": {call_id: True}}, headers=ALICE,
               timeout=10)
    saved = {"origins": [{"origin": server.url, "localStorage": [{"name": "hookline.token", "value": "tok-alice"}]}]}
    page = open_page(f"{server.url}/#{session_id}", storage_state=saved)

    card = page.locator(f".tool-card[data-call='{call_id}']")
    expect(card.locator(".tool-state")).to_have_text("returned")
    expect(card.locator(".tool-name")).to_have_text('danger(target="prod")')
    expect(card.locator(".edited-badge")).to_have_count(0)
    expect(card.locator(".original-args")).to_have_count(0)
    expect(page.locator(".audit")).to_contain_text("alice approved danger")
    expect(page.locator(".audit")).not_to_contain_text("edited")
