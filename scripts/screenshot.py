"""Make docs/screenshot.png: the web page mid-conversation, in headless Chromium.

Usage: .venv/bin/python scripts/screenshot.py [--out docs/screenshot.png] [--width 1100] [--height 760]

It serves a scripted agent (no model needed) on 127.0.0.1, sends a prompt that calls a
tool, then one that needs approval, prepares a pending draft, and takes the picture.
Needs Debian's Chromium at /usr/bin/chromium (Playwright never downloads a browser).
"""

from __future__ import annotations

import argparse
import asyncio
import threading
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import uvicorn
from playwright.sync_api import sync_playwright

from hookline import Agent, State, ToolCallPart, hook, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse, ModelStreamEvent, ResponseDone, TextDelta
from hookline.server import create_app
from hookline.sessions.memory import InMemorySessionStore

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


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
    """Answer tool results; call `deploy` when asked to, else `add`."""
    last = request.messages[-1]
    if last.role == "tool":
        return ModelResponse(text=f"Done: {last.tool_results[0].content}. Anything else?")
    call_id = f"call-{uuid.uuid4().hex[:8]}"
    if "deploy" in last.text:
        call = ToolCallPart(id=call_id, name="deploy", arguments={"service": "api", "env": "prod"})
    else:
        call = ToolCallPart(id=call_id, name="add", arguments={"a": 1234, "b": 4321})
    return ModelResponse(tool_calls=[call])


class WordByWord(FunctionModel):
    """The script, its answers streamed one word at a time."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Yield the answer word by word, then the whole response."""
        response = await self.request(request)
        for word in response.text.split(" ") if response.text else ():
            await asyncio.sleep(0.03)
            yield TextDelta(word + " ")
        yield ResponseDone(response)


def serve() -> tuple[uvicorn.Server, threading.Thread, str]:
    """Serve the demo agent on 127.0.0.1 in a thread; return the server, its thread and its URL."""
    agent = Agent("assistant", model=WordByWord(script, name="demo-model"), tools=[add, deploy],
                  hooks={"before_tool": [approve_deploys]})
    server = uvicorn.Server(uvicorn.Config(create_app(agent, InMemorySessionStore(), tokens={}),
                                           host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    return server, thread, f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"


def take(url: str, out: Path, width: int, height: int) -> None:
    """Hold a short conversation in headless Chromium and take the picture."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(url)
        if width < 700:  # a phone: the session list folds behind the "Sessions" button
            page.get_by_role("button", name="Sessions").click()
        page.get_by_role("button", name="+ New session").click()
        page.get_by_label("Message").fill("What is 1234 + 4321?")
        page.keyboard.press("Enter")
        page.get_by_text("Done: 5555").wait_for()
        page.wait_for_function("document.getElementById('run-state').textContent === 'Ready'")
        page.get_by_label("Message").fill("Now deploy the api to prod")
        page.keyboard.press("Enter")
        page.get_by_role("button", name="Approve").wait_for()
        session_id = page.evaluate("page.sessionId")
        httpx.post(f"{url}/v1/sessions/{session_id}/prepare", json={
            "author": "user", "kind": "message", "role": "user",
            "parts": [{"type": "tool_call", "id": "edit-1", "name": "write_file", "arguments": {"path": "notes.md"}}]})
        page.reload()
        page.get_by_role("button", name="Approve").wait_for()
        page.locator("details.activity").first.evaluate("d => d.open = true")
        page.get_by_label("Message").fill("Also tell me ")
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out), full_page=False)
        browser.close()


def main() -> None:
    """Parse the command line, serve, take the screenshot, stop."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshot.png"))
    parser.add_argument("--width", type=int, default=1100)
    parser.add_argument("--height", type=int, default=760)
    args = parser.parse_args()
    server, thread, url = serve()
    try:
        take(url, args.out, args.width, args.height)
    finally:
        server.should_exit = True
        thread.join(10)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
