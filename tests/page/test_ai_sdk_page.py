"""The AI SDK example page (`examples/ai_sdk_page`) in a real browser, against a real hookline server.

The example is copied to a temporary folder and built as its docs say (`npm run build`: the
script of its package.json, with the JavaScript test kit's `ai` and esbuild); its `serve.py`
serves the page and passes `/v1` on to a live server; headless Chromium, set to French and
Paris time, chats through it: a streamed answer, a server tool's call and output, calls paused
for approval (approved, then denied), and the page's own tool (`get_locale`, answered in the
browser) whose output the model's answer quotes. No page error, no serious axe violation.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from hookline import ToolCallPart
from hookline.models import ModelRequest, ModelResponse
from hookline.sessions import SessionStore
from server.agent import DANGER_LOG, make_agent
from server.live import LiveServer
from support.node_kit import KIT, SCRIPTS, kit_modules
from support.waiting import DEADLINE

EXAMPLE = Path(__file__).parents[2] / "examples" / "ai_sdk_page"
STORY = " ".join(f"word{i}" for i in range(40))
"""The answer to "story": 40 words, streamed one at a time."""
LOCALE = '{"language":"fr-FR","timeZone":"Europe/Paris"}'
"""What the page's get_locale answers in a browser set to French and Paris time."""

# Keeps every text the conversation's last answer showed, with the log's aria-busy and the status line then.
WATCH_ANSWER = """() => {
  window.__shown = [];
  const log = document.querySelector('[role=log]');
  const status = document.querySelector('[role=status]');
  new MutationObserver(() => {
    const texts = log.querySelectorAll('.assistant .text');
    const text = texts.length ? texts[texts.length - 1].textContent : '';
    window.__shown.push([log.getAttribute('aria-busy'), text, status.textContent]);
  }).observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
}"""


def _call(name: str, **arguments: Any) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCallPart(id=f"{name}-{uuid.uuid4().hex[:8]}", name=name, arguments=arguments)])


def script(request: ModelRequest) -> ModelResponse:
    """"story": 40 words; "add": add(2, 3); "danger": danger(prod), paused; "where": the page's get_locale."""
    last = request.messages[-1]
    if last.role == "tool":
        result = last.tool_results[0]
        return ModelResponse(text=f"{result.name} {'failed' if result.is_error else 'said'} {result.content}.")
    calls = {"add": lambda: _call("add", a=2, b=3), "danger": lambda: _call("danger", target="prod"),
             "where": lambda: _call("get_locale")}
    if last.text in calls:
        return calls[last.text]()
    return ModelResponse(text=STORY if last.text == "story" else f"You said: {last.text}")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example, built by its package.json's `build` script with the kit's packages."""
    modules = kit_modules()
    folder = tmp_path_factory.mktemp("ai_sdk_page")
    shutil.copytree(EXAMPLE, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns("node_modules", "dist"))
    (folder / "node_modules").symlink_to(modules)
    build = json.loads((folder / "package.json").read_text())["scripts"]["build"]
    path = os.pathsep.join([str(modules / ".bin"), os.environ["PATH"]])  # what `npm run` adds
    done = subprocess.run(build, shell=True, cwd=folder, env={**os.environ, "PATH": path}, capture_output=True,
                          text=True, timeout=DEADLINE, check=False)
    assert done.returncode == 0, f"npm run build failed:\n{done.stdout}\n{done.stderr}"
    return folder


@pytest.fixture
def chat_server(make_server: Callable[..., LiveServer], store: SessionStore) -> LiveServer:
    """A hookline server whose scripted model streams, calls add and danger (paused), and the page's get_locale."""
    DANGER_LOG.clear()
    return make_server(agent=make_agent(store, model_script=script))


@pytest.fixture
def page_url(built: Path, chat_server: LiveServer) -> Iterator[str]:
    """The page's address, served by the example's serve.py, its /v1 passed on to `chat_server`."""
    command = [sys.executable, str(built / "serve.py"), "--api", chat_server.url, "--port", "0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as serving:
        try:
            first = serving.stdout.readline() if serving.stdout else ""
            found = re.search(r"http://127\.0\.0\.1:\d+/", first)
            assert found, f"serve.py did not say where it serves: {first!r}"
            yield found.group(0)
        finally:
            serving.terminate()


def send(page: Page, text: str) -> None:
    page.get_by_role("textbox", name="Message").fill(text)
    page.get_by_role("button", name="Send").click()


def last_answer(page: Page) -> Any:
    return page.get_by_role("log", name="Conversation").locator(".assistant").last


def test_the_example_pins_the_kits_versions() -> None:
    kit = json.loads((SCRIPTS / "package.json").read_text())["dependencies"]
    example = json.loads((EXAMPLE / "package.json").read_text())
    pinned = {**example["dependencies"], **example.get("devDependencies", {})}
    assert pinned == {"ai": kit["ai"], "esbuild": kit["esbuild"]}, f"the tested versions are the kit's ({KIT})"


def test_the_page_chats_streams_runs_tools_asks_approvals_and_answers_its_own_tool(
    page_url: str, open_page: Callable[..., Page]
) -> None:
    page = open_page(page_url, locale="fr-FR", timezone_id="Europe/Paris")
    page.evaluate(WATCH_ANSWER)

    send(page, "story")
    expect(last_answer(page).locator(".text")).to_have_text(STORY)
    expect(page.get_by_role("log", name="Conversation")).to_have_attribute("aria-busy", "false")
    shown = page.evaluate("window.__shown")
    partial = [text for busy, text, _ in shown if busy == "true" and text and STORY.startswith(text) and text != STORY]
    assert partial, f"the answer was never shown while it streamed: {shown[:5]}"
    assert "turn 1: calling model" in [status for busy, _, status in shown if busy == "true"], "hookline's status"
    expect(page.get_by_role("status")).to_have_text("")

    send(page, "add")
    expect(last_answer(page).locator(".tool")).to_contain_text('add({"a":2,"b":3})')
    expect(last_answer(page).locator(".tool")).to_contain_text("5")
    expect(last_answer(page).locator(".text")).to_have_text("add said 5.")

    send(page, "danger")
    approve = page.get_by_role("button", name="Approve")
    expect(approve).to_be_visible()
    assert DANGER_LOG == [], "nothing runs before the user approves"
    axe = kit_modules() / "axe-core" / "axe.min.js"
    page.add_script_tag(path=str(axe))
    violations = page.evaluate("""async () => (await axe.run(document)).violations
        .filter((v) => ['serious', 'critical'].includes(v.impact)).map((v) => v.id)""")
    assert violations == [], "waiting for approval"
    approve.click()
    expect(last_answer(page).locator(".text")).to_have_text("danger said wiped prod.")
    expect(page.get_by_role("button", name="Approve")).to_have_count(0)
    assert DANGER_LOG == ["prod"]

    send(page, "danger")
    page.get_by_role("button", name="Deny").click()
    expect(last_answer(page).locator(".tool")).to_contain_text("denied")
    expect(last_answer(page).locator(".text")).to_contain_text("danger failed")
    assert DANGER_LOG == ["prod"], "a denied call never runs"

    send(page, "where")
    expect(last_answer(page).locator(".tool")).to_contain_text(LOCALE)
    expect(last_answer(page).locator(".text")).to_have_text(f"get_locale said {LOCALE}.")
    expect(page.get_by_role("alert")).to_have_text("")
