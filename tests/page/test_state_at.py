"""The inspector in a real browser: `state.data` at an event, the change that made it, and a fork that starts there."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from hookline import Agent, State, StatusOptions, hook
from hookline.sessions import SessionStore
from server.live import LiveServer
from server.live_agents import steps

from .agents import PageModel
from .conftest import new_session, send, wait_ready


@hook
def count_model_calls(state: State) -> None:
    state.data["calls"] = state.data.get("calls", 0) + 1


def event_row(page: Page, text: str) -> None:
    page.locator("#event-list [role=option]", has_text=text).last.click()


def test_the_state_at_an_event_shows_with_the_change_that_made_it(
    make_server: Callable[..., LiveServer], store: SessionStore, open_page: Callable[..., Page]
) -> None:
    agent = Agent("assistant", model=PageModel(), tools=[steps], hooks={"before_llm": [count_model_calls]},
                  session_store=store, status=StatusOptions(state=True))
    page = open_page(make_server(agent=agent).url)
    new_session(page)
    send(page, "steps 1 0.1")  # two model calls: the state counts to 2
    wait_ready(page)

    event_row(page, "run completed")
    page.get_by_text("state.data at this event").click()
    shown = page.locator("#event-detail .state-at")
    expect(shown.locator(".tree")).to_contain_text("calls: 2")
    expect(shown.locator(".diff .removed")).to_contain_text(['"calls": 1'])
    expect(shown.locator(".diff .added")).to_contain_text(['"calls": 2'])
    expect(shown).to_contain_text("Changed at event #")

    event_row(page, "turn 2: calling model")
    page.get_by_role("button", name="Fork before this event").click()
    expect(page.get_by_label("state.data of the fork (JSON)")).to_have_value('{\n  "calls": 1\n}')


def test_a_session_that_records_no_state_says_how_to_record_it(page_server: LiveServer,
                                                               open_page: Callable[..., Page]) -> None:
    page = open_page(page_server.url)
    new_session(page)
    send(page, "hello")
    wait_ready(page)
    event_row(page, "run completed")
    page.get_by_text("state.data at this event").click()
    expect(page.locator("#event-detail .state-at")).to_contain_text("StatusOptions(state=True)")
    page.get_by_role("button", name="Fork before this event").click()
    expect(page.get_by_label("state.data of the fork (JSON)")).to_have_value("{}")
