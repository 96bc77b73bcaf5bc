"""Regression tests, in a real browser, of the defects found by hand on the first web page (issue 14)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page, Request, Route, expect

from server.agent import DANGER_LOG
from server.live import TOKENS, LiveServer
from support.waiting import wait_until

from .conftest import new_session, send, wait_ready

CONTRAST = (Path(__file__).parent / "contrast.js").read_text()
"""A check run in the page: the texts whose contrast is below WCAG AA (tests/page/contrast.js)."""


def log_of(server: LiveServer, session_id: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{server.url}/v1/sessions/{session_id}/events", params={"view": "all"})
    events: list[dict[str, Any]] = response.json()
    return events


def ended(server: LiveServer, session_id: str) -> bool:
    statuses = [e["parts"][0]["text"] for e in log_of(server, session_id) if e["kind"] == "status"]
    return bool(statuses) and statuses[-1].startswith("run ")


def test_switching_sessions_mid_run_keeps_each_view_to_its_session(server: LiveServer, page: Page) -> None:
    quiet = new_session(page)
    send(page, "hello quiet")
    expect(page.locator(".msg.assistant")).to_have_text(["You said: hello quiet"])
    wait_ready(page)
    busy = new_session(page)
    send(page, "slow one")
    expect(page.locator("details.activity summary").last).to_contain_text("turn 1: calling model")
    page.locator(f"#session-list [data-session='{quiet}']").click()
    expect(page.locator(".msg.user")).to_have_text(["hello quiet"])
    wait_until(lambda: ended(server, busy), "the slow run ended in the server")
    expect(page.locator("#run-state")).to_have_text("Ready")
    expect(page.locator(".msg.assistant")).to_have_text(["You said: hello quiet"])
    expect(page.locator("#conversation")).not_to_contain_text("slow")
    page.locator(f"#session-list [data-session='{busy}']").click()
    expect(page.locator(".msg.assistant")).to_have_text(["slow answer"])


def test_reloading_mid_run_reattaches_and_shows_the_run_to_its_end(server: LiveServer, page: Page) -> None:
    new_session(page)
    send(page, "slow 3 and steady")  # time enough for a reload on a busy machine (0.6 s were not, in CI)
    expect(page.locator("details.activity summary").last).to_contain_text("turn 1: calling model")
    resumed: list[Request] = []
    page.on("request", lambda r: resumed.append(r) if "/events/stream" in r.url else None)
    page.reload()
    expect(page.locator(".msg.assistant")).to_have_text(["slow answer"])
    wait_ready(page)
    assert page.evaluate("window.__sawStreaming"), "the rest of the run streamed in after the reload"
    assert resumed, "the page asked for the session's live events"
    assert int(resumed[0].headers["last-event-id"]) >= 2, "from the last event it had read, not from the start"
    expect(page.locator("details.activity summary").last).to_contain_text("run completed")


def test_sending_while_a_run_started_elsewhere_goes_on_keeps_the_draft_and_says_why(server: LiveServer,
                                                                                  page: Page) -> None:
    session_id = new_session(page)
    elsewhere = threading.Thread(target=lambda: httpx.post(
        f"{server.url}/v1/sessions/{session_id}/runs", json={"prompt": "slow from elsewhere"}, timeout=10))
    elsewhere.start()
    try:
        expect(page.locator("#run-state")).to_have_text("Running...")  # the page follows the session
        send(page, "my careful draft")
        problem = page.locator("#send-problem")
        expect(problem).to_contain_text("A run is going on in this session")
        expect(problem).to_contain_text("your message is kept")
        expect(page.get_by_role("textbox", name="Message")).to_have_value("my careful draft")
    finally:
        elsewhere.join(10)
    expect(problem).to_be_hidden()  # the run ended: nothing stands in the way any more
    expect(page.locator(".msg.assistant").last).to_have_text("slow answer")
    page.get_by_role("textbox", name="Message").press("Enter")
    expect(page.locator(".msg.assistant").last).to_have_text("You said: my careful draft")
    expect(page.get_by_role("textbox", name="Message")).to_have_value("")


def test_a_run_the_server_refuses_as_busy_keeps_the_draft_and_retries(server: LiveServer, page: Page) -> None:
    session_id = new_session(page)
    elsewhere = threading.Thread(target=lambda: httpx.post(
        f"{server.url}/v1/sessions/{session_id}/runs", json={"prompt": "slow from elsewhere"}, timeout=10))

    def start_another_run_first(route: Route) -> None:
        # A run the page cannot know of yet, since it starts as the page's own request travels.
        elsewhere.start()
        wait_until(lambda: any(e["kind"] == "status" for e in log_of(server, session_id)), "the other run began")
        route.continue_()

    page.route("**/runs", start_another_run_first)
    send(page, "my careful draft")
    problem = page.locator("#send-problem")
    expect(problem).to_contain_text("Not sent: this session is busy")
    expect(problem).to_contain_text("Your message is kept")
    expect(page.get_by_role("textbox", name="Message")).to_have_value("my careful draft")
    page.unroute("**/runs")
    elsewhere.join(10)
    wait_ready(page)
    problem.get_by_role("button", name="Retry").click()
    expect(page.locator(".msg.assistant").last).to_have_text("You said: my careful draft")
    expect(page.get_by_role("textbox", name="Message")).to_have_value("")
    expect(problem).to_be_hidden()


def test_sending_while_the_page_knows_a_run_goes_on_keeps_the_draft(page: Page) -> None:
    new_session(page)
    send(page, "slow thoughts")
    expect(page.locator("#run-state")).to_have_text("Running...")
    send(page, "next question")
    expect(page.locator("#send-problem")).to_contain_text("A run is going on in this session")
    expect(page.get_by_role("textbox", name="Message")).to_have_value("next question")
    wait_ready(page)


def test_sending_while_the_server_is_down_keeps_the_draft_and_retries(page: Page) -> None:
    new_session(page)
    page.route("**/runs", lambda route: route.abort("connectionrefused"))
    send(page, "are you there?")
    problem = page.locator("#send-problem")
    expect(problem).to_contain_text("Not sent: the server could not be reached")
    expect(page.get_by_role("textbox", name="Message")).to_have_value("are you there?")
    wait_ready(page)
    page.unroute("**/runs")
    problem.get_by_role("button", name="Retry").click()
    expect(page.locator(".msg.assistant").last).to_have_text("You said: are you there?")


def test_an_approval_decided_in_another_tab_leaves_this_one(server: LiveServer, open_page: Callable[..., Page],
                                                            page: Page) -> None:
    DANGER_LOG.clear()
    session_id = new_session(page)
    send(page, "danger ahead")
    expect(page.get_by_role("button", name="Approve")).to_be_visible()
    other = open_page(f"{server.url}/#{session_id}")
    other.get_by_role("button", name="Approve").click()
    expect(other.locator(".msg.assistant").last).to_have_text("The tool said: wiped prod.")
    expect(page.locator(".msg.assistant").last).to_have_text("The tool said: wiped prod.")
    expect(page.locator(".approval")).to_have_count(0)
    wait_ready(page)
    assert DANGER_LOG == ["prod"], "the call ran once"


def test_arguments_that_do_not_fit_the_tool_show_the_servers_refusal(page: Page) -> None:
    DANGER_LOG.clear()
    new_session(page)
    send(page, "danger zone")
    approval = page.locator(".approval")
    approval.get_by_text("Edit arguments").click()
    arguments = approval.get_by_label("Arguments (JSON)")
    arguments.fill('{"target": 5}')
    expect(approval.locator(".check")).to_have_text("Does not fit the tool's schema: target: expected string")
    approval.get_by_role("button", name="Approve").click()
    refusal = approval.locator("[role=alert]")
    expect(refusal).to_contain_text("The server refused:")
    expect(refusal).to_contain_text("target")
    expect(approval.get_by_role("button", name="Approve")).to_be_enabled()
    arguments.fill('{"target": "qa"}')
    expect(approval.locator(".check")).to_have_text("Fits the tool's schema.")
    expect(approval.locator(".diff .removed")).to_contain_text('"target": "prod"')
    expect(approval.locator(".diff .added")).to_contain_text('"target": "qa"')
    approval.get_by_role("button", name="Approve").click()
    expect(page.locator(".msg.assistant").last).to_have_text("The tool said: wiped qa.")
    assert DANGER_LOG == ["qa"]


def test_only_the_chat_pane_scrolls_and_every_text_has_aa_contrast(page: Page) -> None:
    new_session(page)
    send(page, "\n".join(f"line {n} of a long message" for n in range(60)))
    expect(page.locator(".msg.assistant")).to_have_count(1)
    wait_ready(page)
    page.locator("#event-list [role=option]").nth(1).click()
    expect(page.locator("#event-detail .raw")).to_be_visible()
    assert page.evaluate("document.scrollingElement.scrollHeight <= window.innerHeight"), "the page itself scrolls"
    assert page.evaluate("(c => c.scrollHeight > c.clientHeight)(document.getElementById('conversation'))")
    expect(page.get_by_role("button", name="Send")).to_be_in_viewport()
    assert page.evaluate(CONTRAST) == []
    page.get_by_role("tab", name="Timeline").click()
    expect(page.locator(".bar-row")).to_have_count(2)
    page.locator("details.activity summary").first.click()
    assert page.evaluate(CONTRAST) == []
    page.evaluate("""document.getElementById('conversation').append(
        Object.assign(document.createElement('p'), {textContent: 'faint text', style: 'color: #999'}))""")
    assert [f for f in page.evaluate(CONTRAST) if "faint text" in f], "the check sees a text of 2.8:1"


def test_a_failed_run_says_why_now_and_after_a_reload(server: LiveServer, page: Page) -> None:
    session_id = new_session(page)
    send(page, "fail now")
    expect(page.locator(".error")).to_have_text("Failed: the provider is down")
    wait_until(lambda: log_of(server, session_id)[-1]["metadata"].get("error"), "the reason is in the log")
    page.reload()
    expect(page.locator(".error")).to_have_text("Failed: the provider is down")
    expect(page.locator("details.activity summary").last).to_contain_text("run failed")


def test_denials_take_a_reason_and_decisions_are_audited(make_server: Callable[..., LiveServer],
                                                         open_page: Callable[..., Page]) -> None:
    DANGER_LOG.clear()
    server = make_server(tokens=TOKENS)
    page = open_page(server.url)
    page.get_by_label("Access token").fill("tok-alice")
    page.get_by_label("Access token").press("Enter")
    new_session(page)
    send(page, "danger please")
    page.get_by_label("Reason for a denial").fill("not on a Friday")
    page.get_by_label("Reason for a denial").press("Enter")
    expect(page.locator(".msg.assistant").last).to_have_text(
        "The tool said: the user refused the call to danger: not on a Friday.")
    audit = page.locator(".audit").last
    expect(audit).to_contain_text("alice denied danger: not on a Friday at ")
    send(page, "danger again")
    page.get_by_role("button", name="Approve").click()
    expect(page.locator(".audit").last).to_contain_text("alice approved danger at ")
    wait_ready(page)
    page.reload()
    expect(page.locator(".audit")).to_have_count(2)
    assert DANGER_LOG == ["prod"]
