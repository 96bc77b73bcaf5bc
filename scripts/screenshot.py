"""Make the pictures of the web page in the docs: a scripted walk through chat, inspector, timeline, stop and fork.

Usage: .venv/bin/python scripts/screenshot.py [--out-dir docs/img] [--out docs/screenshot.png]

It serves a scripted agent (no model needed) on 127.0.0.1 and walks through the page in
headless Chromium, checking each step as it goes (Playwright's `expect`), and writes:
chat.png, inspector.png, timeline.png, stop.png, fork.png and phone.png in `--out-dir`,
and the README's picture (a run paused for approval) at `--out`. `tests/page/test_walk.py`
runs the same walk. Needs Debian's Chromium at /usr/bin/chromium (Playwright never
downloads a browser).
"""

from __future__ import annotations

import argparse
import asyncio
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn
from playwright.sync_api import Browser, Page, expect, sync_playwright

from hookline import Agent, State, ToolCallPart, hook, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse, ModelStreamEvent, ResponseDone, TextDelta
from hookline.server import create_app
from hookline.sessions.memory import InMemorySessionStore
from hookline.usage import Usage

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PICTURES = ("chat.png", "inspector.png", "timeline.png", "stop.png", "fork.png", "phone.png")
"""What the walk writes in its output folder."""


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def deploy(service: str, env: str) -> str:
    """Deploy a service to an environment."""
    return f"{service} deployed to {env}"


@hook
def approve_deploys(state: State) -> None:
    """Pause every deploy for a human's approval."""
    for call in state.tool_calls:
        if call.name == "deploy":
            state.interrupt(call.id, "deploys need a human's approval")


def script(request: ModelRequest) -> ModelResponse:
    """Answer tool results in Markdown; call `deploy` or `add` when asked to; read logs slowly."""
    last = request.messages[-1]
    usage = Usage(input_tokens=40 * len(request.messages), output_tokens=24)
    if last.role == "tool":
        result = last.tool_results[0]
        return ModelResponse(text=f"**Done.** The tool answered `{result.content}`.\n\n- checked twice\n- "
                                  "nothing else to do", usage=usage)
    text = last.text
    if "logs" in text:
        return ModelResponse(text=" ".join(["Reading"] + ["the logs line by line..."] * 40), usage=usage)
    numbers = [int(word) for word in text.replace("?", " ").split() if word.isdigit()] or [1234, 4321]
    call_id = f"call-{uuid.uuid4().hex[:8]}"
    if "deploy" in text:
        call = ToolCallPart(id=call_id, name="deploy", arguments={"service": "api", "env": "prod"})
    else:
        call = ToolCallPart(id=call_id, name="add", arguments={"a": numbers[0], "b": numbers[-1]})
    return ModelResponse(tool_calls=[call], usage=usage)


class DemoModel(FunctionModel):
    """The script, its answers streamed word by word (slowly when it reads logs)."""

    settings = {"temperature": 0.2, "max_tokens": 512}

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Yield the answer word by word, then the whole response."""
        response = await self.request(request)
        pause = 0.15 if response.text.startswith("Reading") else 0.02
        for word in response.text.split(" ") if response.text else ():
            await asyncio.sleep(pause)
            yield TextDelta(word + " ")
        yield ResponseDone(response)


def demo_agent() -> Agent:
    """The agent the pictures show."""
    return Agent("assistant", model=DemoModel(script, name="demo-model"), instructions="You are a careful ops assistant.",
                 tools=[add, deploy], hooks={"before_tool": [approve_deploys]})


@contextmanager
def serve() -> Iterator[str]:
    """Serve the demo agent on 127.0.0.1 in a thread; yield its URL; stop it."""
    server = uvicorn.Server(uvicorn.Config(create_app(demo_agent(), InMemorySessionStore(), tokens={}),
                                           host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the demo server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)


def walk(browser: Browser, url: str, out_dir: Path, readme_picture: Path | None = None) -> None:
    """Walk through the page, checking each step, and write the pictures into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1400, "height": 860})
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(url)
        _chat(page, out_dir)
        _inspector(page, out_dir)
        _timeline(page, out_dir)
        _stop(page, out_dir)
        _fork(page, out_dir)
        if readme_picture is not None:
            _approval(page, url, readme_picture)
    finally:
        context.close()
    _phone(browser, url, out_dir)


def _send(page: Page, text: str) -> None:
    page.get_by_role("textbox", name="Message").fill(text)
    page.get_by_role("textbox", name="Message").press("Enter")


def _ready(page: Page) -> None:
    expect(page.locator("#run-state")).to_have_text("Ready")


def _chat(page: Page, out_dir: Path) -> None:
    if page.get_by_role("button", name="Inspector").get_attribute("aria-expanded") != "true":
        page.get_by_role("button", name="Inspector").click()
    page.get_by_role("button", name="+ New session").click()
    _send(page, "What is 1234 + 4321?")
    expect(page.locator(".msg.assistant").last).to_contain_text("Done. The tool answered 5555.")
    _ready(page)
    page.locator(".tool-card summary").first.click()
    expect(page.locator(".tool-card pre").first).to_contain_text('"a": 1234')
    page.screenshot(path=str(out_dir / "chat.png"))


def _inspector(page: Page, out_dir: Path) -> None:
    page.locator("#event-list [role=option]", has_text="message · assistant").last.click()
    call = page.locator(".model-call")
    expect(call).to_contain_text("Request: 4 messages")
    expect(call).to_contain_text('"temperature": 0.2')
    call.scroll_into_view_if_needed()
    page.screenshot(path=str(out_dir / "inspector.png"))


def _timeline(page: Page, out_dir: Path) -> None:
    page.get_by_role("tab", name="Timeline").click()
    expect(page.locator(".bar-row")).to_have_count(4)
    expect(page.locator(".bar-row.tool")).to_contain_text("tool add")
    page.screenshot(path=str(out_dir / "timeline.png"))


def _stop(page: Page, out_dir: Path) -> None:
    _send(page, "Please read the logs")
    expect(page.locator(".msg.assistant.streaming")).to_contain_text("line by line")
    page.screenshot(path=str(out_dir / "stop.png"))
    page.get_by_role("button", name="Stop").click()
    _ready(page)
    expect(page.locator("details.activity summary").last).to_contain_text("run cancelled")


def _fork(page: Page, out_dir: Path) -> None:
    source = page.evaluate("document.body.dataset.session")
    page.get_by_role("button", name="Edit and fork from here").first.click()
    page.get_by_label("New text").fill("What is 1000 + 4321?")
    page.get_by_role("button", name="Fork and run").click()
    expect(page.locator(".fork-note")).to_contain_text("Forked by default from session")
    expect(page.locator(".msg.assistant").last).to_contain_text("The tool answered 5321.")
    _ready(page)
    assert page.evaluate("document.body.dataset.session") != source
    page.get_by_role("tab", name="Events").click()
    page.screenshot(path=str(out_dir / "fork.png"))


def _approval(page: Page, url: str, picture: Path) -> None:
    _send(page, "Now deploy the api to prod")
    expect(page.get_by_role("button", name="Approve")).to_be_visible()
    expect(page.locator("#run-state")).to_have_text("Waiting for approval (1)")
    session_id = page.evaluate("document.body.dataset.session")
    httpx.post(f"{url}/v1/sessions/{session_id}/prepare", json={
        "author": "user", "kind": "message", "role": "user",
        "parts": [{"type": "tool_call", "id": "edit-1", "name": "write_file", "arguments": {"path": "notes.md"}}]})
    page.reload()
    expect(page.get_by_role("button", name="Approve")).to_be_visible()
    page.get_by_role("textbox", name="Message").fill("Also tell me ")
    picture.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(picture))


def _phone(browser: Browser, url: str, out_dir: Path) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 760}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(url)
        expect(page.locator(".msg.assistant").first).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"
        page.screenshot(path=str(out_dir / "phone.png"))
    finally:
        context.close()


def main() -> None:
    """Parse the command line, serve, walk, stop."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=Path("docs/img"))
    parser.add_argument("--out", type=Path, default=Path("docs/screenshot.png"))
    args = parser.parse_args()
    with serve() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            walk(browser, url, args.out_dir, args.out)
        finally:
            browser.close()
    print(f"wrote {', '.join(PICTURES)} in {args.out_dir}, and {args.out}")


if __name__ == "__main__":
    main()
