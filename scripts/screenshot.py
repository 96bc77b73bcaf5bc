"""Make the pictures of the web page in the docs: a scripted walk through a debugging session, desktop and phone.

Usage: .venv/bin/python scripts/screenshot.py [--out-dir docs/img] [--out docs/screenshot.png]

It serves a scripted ops agent (no model needed) on 127.0.0.1 and walks through the page in
headless Chromium, checking each step as it goes (Playwright's `expect`): a tool with progress,
a streamed Markdown answer with its reasoning, two deploys paused for approval (one edited), the
trace of that prompt, the model call as sent, a run stopped mid-answer, a fork with its state
edited; then the same session on a phone. It writes the `PICTURES` in `--out-dir`, and the
README's picture (calls waiting for approval) at `--out`. `tests/page/test_inspector.py` runs
the same walk. Needs Debian's Chromium at /usr/bin/chromium (Playwright never downloads a browser).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import uvicorn
from playwright.sync_api import Browser, Page, expect, sync_playwright

from hookline import Agent, ReasoningPart, RunContext, State, StatusOptions, ToolCallPart, hook, tool
from hookline.models import (
    FunctionModel,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
    ReasoningDelta,
    ResponseDone,
    TextDelta,
)
from hookline.server import create_app
from hookline.sessions.memory import InMemorySessionStore
from hookline.usage import Prices, Usage

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 780}
PICTURES = ("progress.png", "chat.png", "approvals.png", "timeline.png", "inspector.png", "stop.png", "fork.png",
            "phone.png", "phone-approvals.png", "phone-inspector.png")
"""What the walk writes in its output folder."""

REPORT = """## Error rate, last hour

The **checkout** service is failing more than usual:

| service | errors | share |
|---|---|---|
| checkout | 412 | 3.1% |
| search | 9 | 0.1% |

### What I would do

1. roll back `checkout` to the build of this morning
2. keep an eye on the `payments` queue"""


@tool
async def scan_logs(service: str, ctx: RunContext[None]) -> str:
    """Scan a service's logs of the last hour, reporting progress."""
    for done in range(1, 6):
        ctx.status(f"read shard {done} of 5 of {service}")
        ctx.partial({"done": done, "of": 5})
        await asyncio.sleep(0.35)
    return '{"errors": 412, "requests": 13301, "top": "TimeoutError: payments"}'


@tool
def deploy(service: str, env: str, build: str = "latest") -> str:
    """Deploy a build of a service to an environment."""
    return f"{service} {build} deployed to {env}"


@hook
def approve_deploys(state: State) -> None:
    """Pause every deploy for a human's approval."""
    for call in state.tool_calls:
        if call.name == "deploy":
            state.interrupt(call.id, "deploys need a human's approval")


def script(request: ModelRequest) -> ModelResponse:
    """The ops agent: scan the logs, report in Markdown, roll back (two deploys), read long logs slowly."""
    last = request.messages[-1]
    usage = Usage(input_tokens=180 * len(request.messages), output_tokens=64)
    if last.role == "tool":
        results = last.tool_results
        if results[0].name == "scan_logs":
            return ModelResponse(text=REPORT, usage=usage, reasoning=[ReasoningPart(
                text="412 errors out of 13,301 requests is 3.1%, far above the usual 0.2%; the top error "
                     "points at payments timeouts after this morning's checkout release.")])
        return ModelResponse(text="Both rollbacks are done: " + "; ".join(r.content for r in results) + ".",
                             usage=usage)
    text = last.text
    if "logs" in text:
        scan = ToolCallPart(id="scan-1", name="scan_logs", arguments={"service": "checkout"})
        return ModelResponse(tool_calls=[scan], usage=usage)
    if "roll back" in text:
        return ModelResponse(usage=usage, tool_calls=[
            ToolCallPart(id="deploy-eu", name="deploy", arguments={"service": "checkout", "env": "prod-eu",
                                                                   "build": "2024-06-03.1"}),
            ToolCallPart(id="deploy-us", name="deploy", arguments={"service": "checkout", "env": "prod-us",
                                                                   "build": "2024-06-03.1"})])
    if "explain" in text:
        return ModelResponse(text=" ".join(["Timeouts pile up when the payments queue"] + ["backs up, and"] * 60),
                             usage=usage)
    return ModelResponse(text=f"Noted: {text}", usage=usage)


class DemoModel(FunctionModel):
    """The script, its reasoning and answer streamed word by word (slowly when it explains), at made-up prices."""

    settings: ClassVar[dict[str, Any]] = {"temperature": 0.2, "max_tokens": 1024}
    prices = Prices(input_per_mtok=2.5, output_per_mtok=10)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Yield the reasoning, then the answer, word by word; then the whole response."""
        response = await self.request(request)
        pause = 0.12 if response.text.startswith("Timeouts") else 0.012
        for part in response.reasoning:
            for word in part.text.split(" "):
                await asyncio.sleep(0.01)
                yield ReasoningDelta(word + " ")
        words = response.text.split(" ") if response.text else []
        for index, word in enumerate(words):
            await asyncio.sleep(pause)
            yield TextDelta(word if index == len(words) - 1 else word + " ")
        yield ResponseDone(response)


def demo_agent() -> Agent:
    """The agent the pictures show (its model requests recorded as sent)."""
    return Agent("ops", model=DemoModel(script, name="demo-model"), instructions="You are a careful ops assistant.",
                 tools=[scan_logs, deploy], hooks={"before_tool": [approve_deploys]},
                 status=StatusOptions(reasoning=True, requests=True))


@contextmanager
def serve() -> Iterator[str]:
    """Serve the demo agent on 127.0.0.1 in a thread; yield its URL; stop it."""
    store = InMemorySessionStore()
    server = uvicorn.Server(uvicorn.Config(create_app(demo_agent(), store, tokens={}), host="127.0.0.1", port=0,
                                           log_level="warning"))
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
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(url)
        _progress_and_answer(page, out_dir)
        _approvals(page, out_dir, readme_picture)
        _timeline(page, out_dir)
        _inspector(page, out_dir)
        _stop(page, out_dir)
        session_id = page.evaluate("document.body.dataset.session")
        _fork(page, out_dir)
    finally:
        context.close()
    _phone(browser, f"{url}/#{session_id}", out_dir)


def _send(page: Page, text: str) -> None:
    page.get_by_role("textbox", name="Message").fill(text)
    page.get_by_role("textbox", name="Message").press("Enter")


def _ready(page: Page) -> None:
    expect(page.locator("#run-state")).to_have_text("Ready")


def _progress_and_answer(page: Page, out_dir: Path) -> None:
    if page.get_by_role("button", name="Inspector").get_attribute("aria-expanded") != "true":
        page.get_by_role("button", name="Inspector").click()
    page.get_by_role("button", name="+ New session").click()
    _send(page, "Why is checkout failing? Scan its logs.")
    card = page.locator(".tool-card")
    expect(card.locator(".tool-line")).to_contain_text(re.compile(r"read shard \d of 5"))
    expect(card.locator("progress")).to_be_visible()
    page.screenshot(path=str(out_dir / "progress.png"))
    expect(page.locator(".msg.assistant").last).to_contain_text("keep an eye on the payments queue")
    _ready(page)
    page.locator(".msg.assistant .reasoning summary").click()
    page.locator(".tool-card summary").click()
    expect(card.locator(".tool-state")).to_have_text("returned")
    page.screenshot(path=str(out_dir / "chat.png"))


def _approvals(page: Page, out_dir: Path, readme_picture: Path | None) -> None:
    _send(page, "Please roll back checkout in both regions.")
    panel = page.get_by_role("region", name="Waiting for approval (2)")
    expect(panel).to_be_visible()
    if readme_picture is not None:
        readme_picture.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(readme_picture))
    first = panel.locator(".approval").first
    first.get_by_text("Edit arguments").click()
    first.get_by_label("Arguments (JSON)").fill(
        '{\n  "service": "checkout",\n  "env": "prod-eu",\n  "build": "2024-06-02.4"\n}')
    expect(first.locator(".check")).to_have_text("Fits the tool's schema.")
    expect(first.locator(".diff .added")).to_contain_text("2024-06-02.4")
    page.screenshot(path=str(out_dir / "approvals.png"))
    panel.get_by_role("button", name="Approve all 2").click()
    expect(page.locator(".msg.assistant").last).to_contain_text("Both rollbacks are done")
    _ready(page)


def _timeline(page: Page, out_dir: Path) -> None:
    page.get_by_role("tab", name="Timeline").click()
    rows = page.locator("#trace-chart .bar-row")
    expect(rows.filter(has_text="approval of deploy")).to_have_count(2)
    expect(rows.filter(has_text="resume")).to_have_count(1)
    page.screenshot(path=str(out_dir / "timeline.png"))


def _inspector(page: Page, out_dir: Path) -> None:
    page.locator("#trace-chart .bar-row.model").last.click()
    expect(page.get_by_role("tab", name="Events")).to_have_attribute("aria-selected", "true")
    page.locator("#event-source").select_option("llm")
    page.locator("#event-list [role=option]:not([hidden])").last.click()
    call = page.locator(".model-call")
    expect(call).to_contain_text("Model call (the request as sent)")
    expect(call).to_contain_text("first token after")
    page.screenshot(path=str(out_dir / "inspector.png"))
    page.locator("#event-source").select_option("")


def _stop(page: Page, out_dir: Path) -> None:
    _send(page, "Now explain the timeouts in detail.")
    expect(page.locator(".msg.assistant.streaming")).to_contain_text("backs up, and backs up")
    page.get_by_role("button", name="Stop").click()
    _ready(page)
    expect(page.locator(".msg.assistant").last).to_contain_text("Stopped here")
    page.screenshot(path=str(out_dir / "stop.png"))


def _fork(page: Page, out_dir: Path) -> None:
    source = page.evaluate("document.body.dataset.session")
    page.get_by_role("tab", name="Events").click()
    page.locator("#event-list [role=option]", has_text="turn 2: calling model").first.click()
    page.get_by_role("button", name="Fork before this event").click()
    page.get_by_label("state.data of the fork (JSON)").fill('{"region": "eu only"}')
    expect(page.get_by_role("button", name="Fork and run")).to_be_visible()
    page.screenshot(path=str(out_dir / "fork.png"))
    page.get_by_role("button", name="Fork and run").click()
    expect(page.locator(".fork-note")).to_contain_text(f"from session {source[:12]}")
    expect(page.locator(".msg.assistant").last).to_contain_text("keep an eye on the payments queue")
    _ready(page)
    assert page.evaluate("document.body.dataset.session") != source


def _phone(browser: Browser, url: str, out_dir: Path) -> None:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(url)
        expect(page.locator(".msg.assistant").first).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"
        page.screenshot(path=str(out_dir / "phone.png"))
        _send(page, "Please roll back checkout in both regions.")
        expect(page.get_by_role("region", name="Waiting for approval (2)")).to_be_visible()
        page.screenshot(path=str(out_dir / "phone-approvals.png"))
        page.get_by_role("button", name="Approve all 2").click()
        _ready(page)
        page.get_by_role("button", name="Inspector").click()
        page.locator("#event-list [role=option]", has_text="message · assistant").last.click()
        expect(page.locator("#event-detail > h3")).to_be_in_viewport()
        page.screenshot(path=str(out_dir / "phone-inspector.png"))
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
