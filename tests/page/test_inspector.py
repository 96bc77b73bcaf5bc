"""The inspector in a real browser: events and model calls, structured views, timeline and state, sessions, forks."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import httpx
from playwright.sync_api import Browser, Page, expect

from hookline import Agent, Prices
from hookline.models import ModelRequest, ModelResponse
from hookline.sessions import SessionStore
from hookline.usage import Usage
from server.agent import WordStreamingModel, add, script
from server.live import LiveServer

from .conftest import new_session, send, wait_ready

SCRIPT = Path(__file__).parents[2] / "scripts" / "screenshot.py"


def test_events_show_their_json_and_a_model_call_its_request(page: Page) -> None:
    new_session(page)
    send(page, "add 2 and 3")
    expect(page.locator(".msg.assistant").last).to_have_text("The tool said: 5.")
    wait_ready(page)
    rows = page.locator("#event-list [role=option]")
    expect(rows).to_have_count(11)
    rows.filter(has_text="add returned 5").click()
    expect(page.locator("#event-detail .raw")).to_contain_text('text: "add returned 5"')
    expect(page.locator(".model-call")).to_have_count(0)
    rows.filter(has_text="The tool said: 5.").click()
    call = page.locator(".model-call")
    expect(call).to_contain_text("turn 2 · scripted (function) · 0 in + 0 out tokens")
    expect(call).to_contain_text("first token after")
    expect(call).to_contain_text("Request: 3 messages")
    expect(call.locator(".request-messages li")).to_have_count(3)
    expect(call.locator(".request-tools li")).to_have_count(2)
    expect(call).to_contain_text("The tool said: 5.")
    expect(call.locator(".notes li").first).to_contain_text("rebuilt from the log")


def test_tool_cards_markdown_and_no_markup_from_outputs(page: Page) -> None:
    new_session(page)
    send(page, "add these")
    card = page.locator(".tool-card")
    expect(card.locator(".tool-state")).to_have_text("returned")
    card.locator("summary").click()
    expect(card.locator("pre").first).to_have_text('{\n  "a": 2,\n  "b": 3\n}')
    expect(card.locator("pre").nth(1)).to_have_text("5")
    wait_ready(page)
    markup = "<img src=x onerror=\"document.title='owned'\">"
    send(page, f"**bold** and `code` {markup}\n\n- one\n- [link](javascript:alert(1))")
    answer = page.locator(".msg.assistant").last
    expect(answer.locator("strong")).to_have_text("bold")
    expect(answer.locator("code")).to_have_text("code")
    expect(answer.locator("li")).to_have_count(2)
    expect(answer).to_contain_text("<img src=x")
    wait_ready(page)
    assert page.locator("#conversation img").count() == 0
    assert page.locator("#conversation a").count() == 0, "no javascript: link"
    assert page.title() == "hookline"
    rendered = page.evaluate("""async () => {
        const { imageOf } = await import('/static/js/dom.js');
        const src = (part) => { const img = imageOf(part); return img ? img.getAttribute('src') : null; };
        return [src({type: 'image', url: 'https://example.org/a.png'}),
                src({kind: 'image', data: 'AAAA', mime_type: 'image/jpeg'}),
                src({type: 'image', url: 'javascript:alert(1)'}),
                src({type: 'image', data: 'data:text/html,x'}), src({type: 'text'})];
    }""")
    assert rendered == ["https://example.org/a.png", "data:image/jpeg;base64,AAAA", None, None, None]


def test_timeline_bars_and_the_state_tree(server: LiveServer, page: Page) -> None:
    created = httpx.post(f"{server.url}/v1/sessions", json={"state": {"plan": {"steps": [1, 2]}, "owner": "ann"}})
    page.reload()
    page.locator(f"#session-list [data-session='{created.json()['id']}']").click()
    send(page, "add 2 and 3")
    wait_ready(page)
    page.get_by_role("tab", name="Timeline").click()
    bars = page.locator(".bar-row")
    expect(bars).to_have_count(4)
    expect(bars.nth(0)).to_contain_text("run")
    expect(bars.nth(0)).to_contain_text("completed")
    expect(bars.nth(2)).to_contain_text("tool add")
    expect(bars.nth(1)).to_contain_text("0 in / 0 out tok")
    expect(page.locator("#trace-chart .facts")).to_contain_text("2 model calls · 1 tool call · 0 tokens")
    bars.nth(2).click()
    card = page.locator(".tool-card")
    expect(card).to_have_attribute("open", "")
    expect(card.locator("summary")).to_be_focused()
    card.get_by_role("button", name="Show in the timeline").click()
    expect(bars.nth(2)).to_be_focused()
    bars.nth(1).click()
    expect(page.get_by_role("tab", name="Events")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#event-list [aria-selected=true]")).to_contain_text("turn 1: calling model")
    expect(page.locator(".model-call")).to_contain_text("Request: 1 message")
    page.get_by_role("tab", name="Events").press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("tab", name="State")).to_be_focused()
    tree = page.locator("#state-view")
    expect(tree).to_contain_text("plan {1}")
    expect(tree).to_contain_text("steps [2]")
    expect(tree).to_contain_text('owner: "ann"')


def test_sessions_have_titles_search_and_delete(server: LiveServer, page: Page) -> None:
    new_session(page)
    send(page, "hello banana")
    wait_ready(page)
    keep = new_session(page)
    send(page, "hello cherry")
    wait_ready(page)
    picks = page.locator("#session-list .pick .title")
    expect(picks).to_have_text(["hello cherry", "hello banana"])
    page.get_by_label("Search sessions").fill("BANANA")
    expect(picks).to_have_text(["hello banana"])
    page.get_by_label("Search sessions").fill("")
    expect(picks).to_have_count(2)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete session: hello banana").click()
    expect(picks).to_have_text(["hello cherry"])
    assert [s["id"] for s in httpx.get(f"{server.url}/v1/sessions").json()] == [keep]


def test_fork_a_user_message_and_a_tool_result_by_keyboard(page: Page) -> None:
    source = new_session(page)
    send(page, "hello original")
    wait_ready(page)
    send(page, "add 2 and 3")
    expect(page.locator(".msg.assistant").last).to_have_text("The tool said: 5.")
    wait_ready(page)
    page.get_by_role("button", name="Edit and fork from here").first.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_label("New text")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.get_by_label("New text")).to_have_count(0)
    page.get_by_role("button", name="Edit and fork from here").first.press("Enter")
    page.get_by_label("New text").fill("hello edited")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator(".fork-note")).to_contain_text(f"from session {source[:12]}")
    expect(page.locator(".msg.assistant")).to_have_text(["You said: hello edited"])
    wait_ready(page)
    forked = page.evaluate("document.body.dataset.session")
    assert forked != source
    page.locator(".fork-note button").click()
    expect(page.locator(".msg.assistant")).to_have_text(["You said: hello original", "The tool said: 5."])
    page.locator(".tool-card summary").click()
    page.get_by_role("button", name="Edit result and fork").click()
    page.get_by_label("New result").fill("42")
    page.get_by_role("button", name="Fork and run").click()
    expect(page.locator(".msg.assistant").last).to_have_text("The tool said: 42.")
    expect(page.locator(".msg.user")).to_have_text(["hello original", "add 2 and 3"])
    wait_ready(page)
    expect(page.locator("#session-list .pick")).to_have_count(3)


def test_phone_sized_screen_shows_one_pane_at_a_time(server: LiveServer, open_page: Callable[..., Page]) -> None:
    page = open_page(server.url, viewport={"width": 375, "height": 700}, is_mobile=True, has_touch=True)
    expect(page.locator("aside#inspector")).to_be_hidden()
    page.get_by_role("button", name="Sessions").click()
    new_session(page)
    send(page, "add on a phone")
    expect(page.locator(".msg.assistant")).to_have_text(["The tool said: 5."])
    wait_ready(page)
    page.get_by_role("button", name="Inspector").click()
    expect(page.locator("#event-list [role=option]").first).to_be_visible()
    expect(page.locator("main#chat")).to_be_hidden()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"
    page.keyboard.press("Escape")
    expect(page.get_by_role("button", name="Send")).to_be_in_viewport()


def test_the_scripted_walk_of_the_docs(browser: Browser, tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("screenshot_script", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    with script.serve() as url:
        script.walk(browser, url, tmp_path, tmp_path / "readme.png")
    for name in (*script.PICTURES, "readme.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name


def test_a_priced_model_shows_what_each_call_and_the_prompt_cost(
    make_server: Callable[..., LiveServer], store: SessionStore, open_page: Callable[..., Page]
) -> None:
    async def priced(request: ModelRequest) -> ModelResponse:
        return (await script(request)).model_copy(update={"usage": Usage(input_tokens=1000, output_tokens=200)})

    model = WordStreamingModel(priced, name="priced")
    model.prices = Prices(input_per_mtok=2.5, output_per_mtok=10, currency="EUR")
    page = open_page(make_server(agent=Agent("assistant", model=model, tools=[add], session_store=store)).url)
    new_session(page)
    send(page, "add 2 and 3")
    wait_ready(page)
    page.get_by_role("tab", name="Timeline").click()
    expect(page.locator("#trace-chart .facts")).to_contain_text("(2000 in, 400 out) · 0.0090 EUR")
    bars = page.locator(".bar-row")
    expect(bars.nth(1)).to_contain_text("1000 in / 200 out tok, 0.0045 EUR")
    bars.nth(1).click()
    expect(page.locator(".model-call")).to_contain_text("1000 in + 200 out tokens · 0.0045 EUR")
