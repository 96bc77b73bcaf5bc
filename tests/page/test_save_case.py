"""The inspector's "Save as test case": the open session downloaded as an eval case, fetched with the token."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from hookline.evals import load_cases
from server.live import TOKENS, LiveServer

from .conftest import new_session, send, wait_ready


def _signed_in(make_server: Callable[..., LiveServer], open_page: Callable[..., Page]) -> Page:
    server = make_server(tokens=TOKENS)
    saved = {"origins": [{"origin": server.url, "localStorage": [{"name": "hookline.token", "value": "tok-alice"}]}]}
    return open_page(server.url, storage_state=saved)


def test_save_as_test_case_downloads_a_case_of_the_sessions_prompts(
    make_server: Callable[..., LiveServer], open_page: Callable[..., Page], tmp_path: Path
) -> None:
    page = _signed_in(make_server, open_page)
    session_id = new_session(page)
    send(page, "add 2 and 3")
    expect(page.locator(".msg.assistant").last).to_have_text("The tool said: 5.")
    wait_ready(page)
    send(page, "hello there")
    expect(page.locator(".msg.assistant").last).to_have_text("You said: hello there")
    wait_ready(page)

    save = page.get_by_role("button", name="Save as test case")
    with page.expect_download() as download:
        save.click()
    assert download.value.suggested_filename == f"{session_id}.case.json"
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    (case,) = load_cases(saved)
    assert case.prompts == ["add 2 and 3", "hello there"]
    assert (case.name, case.source, case.answer) == (session_id, session_id, "You said: hello there")
    assert [(c.name, c.arguments) for c in case.calls or []] == [("add", {"a": 2, "b": 3})]
    note = page.get_by_role("status").filter(has_text="Saved")
    expect(note).to_have_text(f"Saved {session_id}.case.json: 2 prompts, 1 tool call (hookline eval runs it).")
    expect(save).to_be_focused()


def test_a_session_without_a_prompt_says_why_nothing_was_saved(
    make_server: Callable[..., LiveServer], open_page: Callable[..., Page]
) -> None:
    page = _signed_in(make_server, open_page)
    session_id = new_session(page)
    downloads: list[object] = []
    page.on("download", lambda download: downloads.append(download))
    page.get_by_role("button", name="Save as test case").click()
    expect(page.locator("#case-note")).to_have_text(
        f"Not saved: session '{session_id}' holds no prompt to make a case of")
    expect(page.locator("#case-note")).to_have_class("case-note problem")
    assert downloads == []
    send(page, "hi")
    wait_ready(page)
    new_session(page)
    expect(page.locator("#case-note")).to_have_text("")
