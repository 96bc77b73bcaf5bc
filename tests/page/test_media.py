"""Images and files on the page, in a real browser: shown from the blob route, attached in the composer."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page, Request, expect

from hookline import Agent, ImagePart, ToolCallPart, tool
from hookline.models import ModelRequest, ModelResponse
from hookline.sessions import SessionStore
from server.agent import WordStreamingModel
from server.live import TOKENS, LiveServer
from server.pictures import digest, image, png

from .conftest import new_session, send, wait_ready

CONTRAST = (Path(__file__).parent / "contrast.js").read_text()
"""A check run in the page: the texts whose contrast is below WCAG AA (tests/page/contrast.js)."""

PICTURE = png(24, 16, (30, 110, 200))
CHART = png(30, 20, (20, 150, 60))
LOADED = "img => img.complete && img.naturalWidth > 0 && img.naturalHeight > 0"


def natural_size(page: Page, selector: str) -> tuple[int, int]:
    """The natural size of the image `selector` finds, once it has loaded."""
    page.wait_for_function(
        f"() => {{ const img = document.querySelector({selector!r}); return img && ({LOADED})(img); }}"
    )
    width, height = page.eval_on_selector(selector, "img => [img.naturalWidth, img.naturalHeight]")
    return width, height


def blob_requests(page: Page) -> list[str]:
    """The URLs of the blob route the page asks for, from now on."""
    seen: list[str] = []

    def note(request: Request) -> None:
        if "/blobs/" in request.url:
            seen.append(request.url)

    page.on("request", note)
    return seen


def test_an_image_of_the_log_is_loaded_from_the_blob_route(server: LiveServer, open_page: Callable[..., Page]) -> None:
    session_id = httpx.post(f"{server.url}/v1/sessions", json={}).json()["id"]
    run = httpx.post(f"{server.url}/v1/sessions/{session_id}/runs",
                     json={"prompt": "what is in the picture?", "attachments": [image(PICTURE)]}, timeout=10)
    assert run.status_code == 200, run.text
    page = open_page("about:blank")
    asked = blob_requests(page)
    page.goto(f"{server.url}/#{session_id}")
    expect(page.locator(".msg.user")).to_contain_text("what is in the picture?")
    assert natural_size(page, ".msg.user img") == (24, 16)
    assert asked == [f"{server.url}/v1/sessions/{session_id}/blobs/{digest(PICTURE)}"]
    assert page.eval_on_selector(".msg.user img", "img => img.src").startswith("blob:")


def test_with_a_token_the_image_is_fetched_with_it(make_server: Callable[..., LiveServer],
                                                   open_page: Callable[..., Page]) -> None:
    server = make_server(tokens=TOKENS)
    alice = {"Authorization": "Bearer tok-alice"}
    session_id = httpx.post(f"{server.url}/v1/sessions", json={}, headers=alice).json()["id"]
    httpx.post(f"{server.url}/v1/sessions/{session_id}/runs", headers=alice, timeout=10,
               json={"prompt": "look", "attachments": [image(PICTURE)]})
    saved = {"origins": [{"origin": server.url, "localStorage": [{"name": "hookline.token", "value": "tok-alice"}]}]}
    page = open_page(f"{server.url}/#{session_id}", storage_state=saved)
    assert natural_size(page, ".msg.user img") == (24, 16), "an <img src> alone could not send the token"


@tool
def chart() -> ImagePart:
    """Draw the chart."""
    return ImagePart(media_type="image/png", data=CHART)


def charting(request: ModelRequest) -> ModelResponse:
    if request.messages[-1].role == "tool":
        return ModelResponse(text="Here is the chart.")
    return ModelResponse(tool_calls=[ToolCallPart(id=f"call-{uuid.uuid4().hex[:8]}", name="chart", arguments={})])


def test_an_image_a_tool_returned_shows_under_its_card(make_server: Callable[..., LiveServer], store: SessionStore,
                                                       open_page: Callable[..., Page]) -> None:
    agent = Agent("assistant", model=WordStreamingModel(charting, name="scripted"), tools=[chart], session_store=store)
    page = open_page(make_server(agent).url)
    new_session(page)
    send(page, "draw it")
    expect(page.locator(".msg.assistant")).to_have_text("Here is the chart.")
    expect(page.locator(".tool-card .tool-state")).to_have_text("returned")
    assert natural_size(page, ".tool-card + .tool-media img") == (30, 20)
    page.reload()
    assert natural_size(page, ".tool-card + .tool-media img") == (30, 20), "and again from the stored log"


def test_the_inspector_shows_an_events_images_as_pictures(make_server: Callable[..., LiveServer], store: SessionStore,
                                                          open_page: Callable[..., Page]) -> None:
    agent = Agent("assistant", model=WordStreamingModel(charting, name="scripted"), tools=[chart], session_store=store)
    server = make_server(agent, tokens=TOKENS)
    alice = {"Authorization": "Bearer tok-alice"}
    session_id = httpx.post(f"{server.url}/v1/sessions", json={}, headers=alice).json()["id"]
    run = httpx.post(f"{server.url}/v1/sessions/{session_id}/runs", headers=alice, timeout=10,
                     json={"prompt": "draw it like this", "attachments": [image(PICTURE)]})
    assert run.json()["output"] == "Here is the chart.", run.text
    saved = {"origins": [{"origin": server.url, "localStorage": [{"name": "hookline.token", "value": "tok-alice"}]}]}
    page = open_page("about:blank", storage_state=saved)
    asked = blob_requests(page)
    page.goto(f"{server.url}/#{session_id}")
    expect(page.locator(".msg.assistant")).to_have_text("Here is the chart.")
    rows = page.locator("#event-list [role=option]")

    rows.filter(has_text="draw it like this").click()
    media = page.locator("#event-detail .event-media")
    expect(media).to_contain_text("Images and files")
    assert natural_size(page, "#event-detail .event-media img") == (24, 16), "fetched with the token"
    expect(page.locator("#event-detail .raw")).to_contain_text(f'blob: "{digest(PICTURE)}"')

    rows.filter(has_text="message · tool").click()
    expect(media.locator("figcaption")).to_have_text("returned by chart")
    assert natural_size(page, "#event-detail .event-media figure img") == (30, 20)
    expect(page.locator("#event-detail .raw")).to_contain_text(f'blob: "{digest(CHART)}"')

    rows.filter(has_text="Here is the chart.").click()
    expect(page.locator("#event-detail .raw")).to_be_visible()
    expect(page.locator("#event-detail .event-media")).to_have_count(0)
    blob_route = f"{server.url}/v1/sessions/{session_id}/blobs/"
    assert set(asked) == {blob_route + digest(PICTURE), blob_route + digest(CHART)}


def test_files_attached_in_the_composer_are_sent_with_the_message(
    server: LiveServer, page: Page, tmp_path: Path
) -> None:
    session_id = new_session(page)
    picture, notes, extra = tmp_path / "picture.png", tmp_path / "notes.txt", tmp_path / "extra.txt"
    picture.write_bytes(PICTURE)
    notes.write_text("milk, eggs")
    extra.write_text("not this one")
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Attach").click()
    chooser.value.set_files([picture, notes, extra])
    chips = page.locator("#attachments li")
    expect(chips).to_have_count(3)
    expect(chips.nth(0)).to_contain_text(f"picture.png · image/png · {len(PICTURE)} B")
    expect(chips.nth(1)).to_contain_text("notes.txt · text/plain · 10 B")
    remove = page.get_by_role("button", name="Remove extra.txt")
    remove.focus()
    page.keyboard.press("Enter")
    expect(chips).to_have_count(2)
    expect(page.locator("#attachments")).not_to_contain_text("extra.txt")
    expect(page.get_by_role("button", name="Remove notes.txt")).to_be_focused()
    assert page.evaluate(CONTRAST) == [], "the chips' texts have AA contrast"

    send(page, "what are these?")
    expect(page.locator(".msg.assistant")).to_have_text("You said: what are these?")
    wait_ready(page)
    expect(page.locator("#attachments")).to_be_hidden()
    user = page.locator(".msg.user")
    assert natural_size(page, ".msg.user img") == (24, 16)
    expect(user.locator(".file-chip")).to_contain_text("notes.txt · text/plain")
    assert page.evaluate(CONTRAST) == [], "the file chip's text has AA contrast"
    parts = _user_parts(server, session_id)
    assert [p["type"] for p in parts] == ["text", "image", "file"]
    assert parts[1]["blob"] == digest(PICTURE)
    assert parts[2]["name"] == "notes.txt"

    with page.expect_download() as download:
        user.locator(".file-chip").click()
    assert Path(download.value.path()).read_text() == "milk, eggs"
    expect(user.locator(".file-chip")).to_contain_text("notes.txt · text/plain · 10 B")


def test_a_pasted_image_alone_is_a_message(server: LiveServer, page: Page) -> None:
    session_id = new_session(page)
    page.get_by_role("textbox", name="Message").focus()
    page.evaluate("""async (bytes) => {
        const file = new File([new Uint8Array(bytes)], "image.png", { type: "image/png" });
        const data = new DataTransfer();
        data.items.add(file);
        const paste = new ClipboardEvent("paste", { clipboardData: data, bubbles: true });
        document.getElementById("prompt").dispatchEvent(paste);
    }""", list(PICTURE))
    expect(page.locator("#attachments li")).to_contain_text("image.png · image/png")
    page.get_by_role("textbox", name="Message").press("Enter")
    wait_ready(page)
    assert natural_size(page, ".msg.user img") == (24, 16)
    assert [p["type"] for p in _user_parts(server, session_id)] == ["image"]


def test_a_refused_attachment_keeps_the_draft_and_says_why(make_server: Callable[..., LiveServer],
                                                           open_page: Callable[..., Page], tmp_path: Path) -> None:
    page = open_page(make_server(max_media_body_bytes=5_000).url)
    new_session(page)
    big = tmp_path / "big.bin"
    big.write_bytes(bytes(range(256)) * 40)
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Attach").click()
    chooser.value.set_files(big)
    expect(page.locator("#attachments li")).to_contain_text("big.bin · application/octet-stream · 10 KB")
    send(page, "too much")
    expect(page.locator("#send-problem")).to_contain_text("larger than 5000 bytes")
    expect(page.locator("#send-problem")).to_contain_text("Your message is kept")
    expect(page.locator("#attachments li")).to_have_count(1)
    expect(page.get_by_role("textbox", name="Message")).to_have_value("too much")


def _user_parts(server: LiveServer, session_id: str) -> list[dict[str, Any]]:
    events = httpx.get(f"{server.url}/v1/sessions/{session_id}/events", params={"view": "all"}).json()
    parts: list[dict[str, Any]] = [e for e in events if e["kind"] == "message" and e["role"] == "user"][-1]["parts"]
    return parts
