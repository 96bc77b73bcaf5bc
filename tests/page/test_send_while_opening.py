"""A message sent while the page creates or opens a session, in a real browser.

Each race is made certain by a server that holds some requests (its `Gate`s) until the test
lets them through: the session being opened with its log (`GET /v1/sessions/{id}`), the
creation of a session (`POST /v1/sessions`), the start of a run (`POST .../runs`). The page's side of the
race (the message typed and Enter pressed) happens while they are held.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from hookline.server import create_app
from hookline.sessions import SessionStore
from server.agent import make_agent
from server.live import LiveServer

from .conftest import send

HELD = 10.0
"""Seconds a test waits for a request to reach a gate before it fails."""


class Gate:
    """Requests of one kind (method, path), held by the server while the gate is shut."""

    def __init__(self, method: str, path: str) -> None:
        self.method = method
        self.path = re.compile(path)
        self.reached = threading.Event()
        """Set when a request arrives while the gate is shut."""
        self._shut = False
        self._waiting: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._lock = threading.Lock()

    def holds(self, scope: dict[str, Any]) -> bool:
        return bool(scope["method"] == self.method and self.path.fullmatch(scope["path"]))

    def shut(self) -> None:
        with self._lock:
            self._shut = True
            self.reached.clear()

    def open(self) -> None:
        with self._lock:
            self._shut = False
            waiting, self._waiting = self._waiting, []
        for loop, passed in waiting:
            loop.call_soon_threadsafe(passed.set)

    def wait_reached(self) -> None:
        assert self.reached.wait(HELD), f"no {self.method} {self.path.pattern} reached the server"

    async def pass_through(self) -> None:
        with self._lock:
            if not self._shut:
                return
            passed = asyncio.Event()
            self._waiting.append((asyncio.get_running_loop(), passed))
            self.reached.set()
        await passed.wait()


class Gates:
    """The gates of the test server: a session's log, a session's creation, a run's start."""

    def __init__(self) -> None:
        self.log = Gate("GET", "/v1/sessions/[^/]+")
        self.create = Gate("POST", "/v1/sessions")
        self.run = Gate("POST", "/v1/sessions/[^/]+/runs")

    def all(self) -> list[Gate]:
        return [self.log, self.create, self.run]

    def around(self, app: Any) -> Any:
        """`app`, holding each request a shut gate matches until that gate opens."""

        async def gated(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                for gate in self.all():
                    if gate.holds(scope):
                        await gate.pass_through()
            await app(scope, receive, send)

        return gated


@pytest.fixture
def gates() -> Gates:
    return Gates()


@pytest.fixture
def gated_server(store: SessionStore, gates: Gates) -> Iterator[LiveServer]:
    """The scripted agent's server, behind `gates` (all open until a test shuts one)."""
    server = LiveServer(gates.around(create_app(make_agent(store), store, tokens={}))).start()
    try:
        yield server
    finally:
        for gate in gates.all():
            gate.open()
        server.stop()


def session_ids(server: LiveServer) -> list[str]:
    return [s["id"] for s in httpx.get(f"{server.url}/v1/sessions").json()]


def user_messages(server: LiveServer, session_id: str) -> list[str]:
    events = httpx.get(f"{server.url}/v1/sessions/{session_id}/events", params={"view": "all"}).json()
    return ["".join(p.get("text", "") for p in e["parts"])
            for e in events if e["kind"] == "message" and e["role"] == "user"]


def session_with(server: LiveServer, *prompts: str) -> str:
    """A new session, with a run of each of `prompts` done."""
    session_id: str = httpx.post(f"{server.url}/v1/sessions", json={}).json()["id"]
    for prompt in prompts:
        answer = httpx.post(f"{server.url}/v1/sessions/{session_id}/runs", json={"prompt": prompt}, timeout=10)
        answer.raise_for_status()
    return session_id


def shown(page: Page, session_id: str) -> None:
    expect(page.locator("body")).to_have_attribute("data-session", session_id)
    expect(page.locator("#run-state")).to_have_text("Ready")


# ---- the openings: each shuts a gate, starts opening a session, and names the gate it holds ---

def open_new(page: Page, gates: Gates) -> Gate:
    """The "+ New session" button, with no session shown; the new session's log is held."""
    expect(page.locator("#conversation .empty")).to_contain_text("Pick or create a session")
    gates.log.shut()
    page.get_by_role("button", name="+ New session").click()
    return gates.log


def open_new_over_another(page: Page, gates: Gates) -> Gate:
    """The "+ New session" button while another session is shown; the creation is held."""
    gates.create.shut()
    page.get_by_role("button", name="+ New session").click()
    return gates.create


def open_picked(page: Page, gates: Gates) -> Gate:
    """An empty session picked in the list while another is shown; its log is held."""
    empty = page.locator("#session-list .pick").filter(has_text="New session")
    gates.log.shut()
    empty.click()
    return gates.log


OPENINGS: dict[str, tuple[Callable[[Page, Gates], Gate], int, int]] = {
    "new session": (open_new, 0, 1),
    "new session over another": (open_new_over_another, 1, 2),
    "picked session": (open_picked, 2, 2),
}
"""Each opening, and how many sessions the server holds before it and after it."""


@pytest.mark.parametrize("opening", list(OPENINGS))
def test_a_message_sent_while_a_session_opens_goes_to_it_once_and_streams(
    opening: str, gates: Gates, gated_server: LiveServer, open_page: Callable[..., Page],
) -> None:
    act, before, after = OPENINGS[opening]
    first = session_with(gated_server, "hello first") if before else None
    if before == 2:
        session_with(gated_server)
    page = open_page(f"{gated_server.url}/#{first}" if first else gated_server.url)
    if first:
        shown(page, first)
    page.evaluate("window.__sawStreaming = false")
    gates.run.shut()

    held = act(page, gates)
    held.wait_reached()
    send(page, "hello there")
    held.open()
    # The page has opened the session: before the fix, its follow of the session has now
    # aborted the run's POST, still held by the server.
    expect(page.locator("#conversation .empty")).to_contain_text("No messages yet")
    gates.run.open()

    expect(page.locator(".msg.user")).to_have_text(["hello there"])
    expect(page.locator(".msg.assistant")).to_have_text(["You said: hello there"])
    expect(page.locator("#run-state")).to_have_text("Ready")
    assert page.evaluate("window.__sawStreaming"), "the run's answer streamed in live"
    expect(page.get_by_role("textbox", name="Message")).to_have_value("")
    expect(page.locator("#send-problem")).to_be_hidden()
    target = page.evaluate("document.body.dataset.session")
    assert target != first
    assert user_messages(gated_server, target) == ["hello there"], "sent once, to the session opened"
    if first:
        assert user_messages(gated_server, first) == ["hello first"], "not to the session shown before"
    assert len(session_ids(gated_server)) == after, "no session made but the one asked for"


def enter_twice(page: Page) -> None:
    send(page, "only once")
    page.get_by_role("textbox", name="Message").press("Enter")


def new_session_then_enter(page: Page) -> None:
    page.get_by_role("button", name="+ New session").click()
    send(page, "only once")


def everything_twice(page: Page) -> None:
    new_session = page.get_by_role("button", name="+ New session")
    new_session.click()
    new_session.click()
    enter_twice(page)


@pytest.mark.parametrize("typing", [enter_twice, new_session_then_enter, everything_twice],
                         ids=["Enter twice", "new session then Enter", "new session and Enter twice"])
def test_one_session_is_created_however_fast_the_user_goes(
    typing: Callable[[Page], None], gates: Gates, gated_server: LiveServer, open_page: Callable[..., Page],
) -> None:
    page = open_page(gated_server.url)
    expect(page.locator("#conversation .empty")).to_contain_text("Pick or create a session")
    gates.create.shut()
    typing(page)
    gates.create.wait_reached()
    gates.create.open()

    expect(page.locator(".msg.assistant")).to_have_text(["You said: only once"])
    expect(page.locator("#run-state")).to_have_text("Ready")
    expect(page.locator(".msg.user")).to_have_text(["only once"])
    expect(page.locator("#session-list .pick")).to_have_count(1)
    assert len(session_ids(gated_server)) == 1, "one session was created"
    assert user_messages(gated_server, session_ids(gated_server)[0]) == ["only once"], "the message went once"
    expect(page.get_by_role("textbox", name="Message")).to_have_value("")


def test_a_message_whose_run_start_is_cancelled_stays_in_the_box_with_the_reason(
    gates: Gates, gated_server: LiveServer, open_page: Callable[..., Page],
) -> None:
    other = session_with(gated_server, "hello other")
    first = session_with(gated_server, "hello first")
    page = open_page(f"{gated_server.url}/#{first}")
    shown(page, first)
    gates.run.shut()
    send(page, "do not lose me")
    gates.run.wait_reached()
    page.locator(f"#session-list [data-session='{other}']").click()

    expect(page.locator(".msg.user")).to_have_text(["hello other"])
    problem = page.locator("#send-problem")
    expect(problem).to_contain_text("Maybe not sent: another session was opened before the server answered")
    expect(problem).to_contain_text("Your message is kept")
    expect(page.get_by_role("textbox", name="Message")).to_have_value("do not lose me")
    expect(page.locator("#run-state")).to_have_text("Ready")


def test_a_message_waiting_for_a_session_is_kept_when_another_is_picked_meanwhile(
    gates: Gates, gated_server: LiveServer, open_page: Callable[..., Page],
) -> None:
    first = session_with(gated_server, "hello first")
    waited_for = session_with(gated_server)
    picked = session_with(gated_server, "hello picked")
    page = open_page(f"{gated_server.url}/#{first}")
    shown(page, first)
    gates.log.shut()
    page.locator(f"#session-list [data-session='{waited_for}']").click()
    gates.log.wait_reached()
    send(page, "meant for the empty one")
    page.locator(f"#session-list [data-session='{picked}']").click()
    gates.log.open()

    expect(page.locator(".msg.user")).to_have_text(["hello picked"])
    problem = page.locator("#send-problem")
    expect(problem).to_contain_text("Not sent: another session was opened before your message went")
    expect(page.get_by_role("textbox", name="Message")).to_have_value("meant for the empty one")
    expect(page.locator("#run-state")).to_have_text("Ready")
    assert user_messages(gated_server, waited_for) == []
    assert user_messages(gated_server, picked) == ["hello picked"]


def test_a_session_picked_while_a_new_one_is_created_stays_shown(
    gates: Gates, gated_server: LiveServer, open_page: Callable[..., Page],
) -> None:
    first = session_with(gated_server, "hello first")
    picked = session_with(gated_server, "hello picked")
    page = open_page(f"{gated_server.url}/#{first}")
    shown(page, first)
    gates.create.shut()
    page.get_by_role("button", name="+ New session").click()
    gates.create.wait_reached()
    page.locator(f"#session-list [data-session='{picked}']").click()
    shown(page, picked)
    gates.create.open()

    expect(page.locator("#session-list .pick")).to_have_count(3)  # the new session is made, and listed
    shown(page, picked)
    expect(page.locator(".msg.user")).to_have_text(["hello picked"])
    send(page, "for the picked one")
    expect(page.locator(".msg.assistant")).to_have_text(["You said: hello picked", "You said: for the picked one"])
    assert user_messages(gated_server, picked) == ["hello picked", "for the picked one"]
