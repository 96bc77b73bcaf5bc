"""A script that uses a provider model and never closes it exits promptly and quietly.

The fake servers run in this process; a real `python` child points `OpenAIModel` and
`AnthropicModel` at them, runs prompts under `asyncio.run`, `run_sync` or `.stream()`, never
calls `agent.close()`, and prints "done" as its last line. It must then exit at once, with
nothing on stderr, ResourceWarnings shown (they used to report the connections left open:
"unclosed transport").
"""

from __future__ import annotations

import sys

import pytest

from hookline.testing import FakeAnthropicServer, FakeOpenAIServer
from support.exiting import run_until_exit

CEILING = 60.0  # the whole child on a loaded machine; a hang is caught by it
EXIT_LIMIT = 5.0  # from its last line to its exit: the promise is about a second, on a busy machine more
PROMPTS = 2

SETUP = """
import asyncio, sys
from hookline import Agent
from hookline.models import AnthropicModel, OpenAIModel

openai_url, anthropic_url = sys.argv[1:3]
agents = [
    Agent(model=OpenAIModel("gpt-4o-mini", base_url=openai_url, api_key="k")),
    Agent(model=AnthropicModel("claude-haiku-4-5", base_url=anthropic_url, api_key="k")),
]

async def streamed(agent, prompt):
    async for _ in agent.prompt(prompt).stream():
        pass
"""

STYLES = {
    "asyncio_run": f"""
async def main():
    for agent in agents:
        for i in range({PROMPTS}):
            assert (await agent.prompt(f"hi {{i}}")).output == "hello"

asyncio.run(main())
""",
    "run_sync": f"""
for agent in agents:
    for i in range({PROMPTS}):
        assert agent.prompt(f"hi {{i}}").run_sync().output == "hello"
""",
    "stream": f"""
async def main():
    for agent in agents:
        for i in range({PROMPTS}):
            await streamed(agent, f"hi {{i}}")

asyncio.run(main())
""",
    # One prompt on each of two loops: PROMPTS in all.
    "run_sync_and_asyncio_run": """
for agent in agents:
    assert agent.prompt("hi").run_sync().output == "hello"

async def main():
    for agent in agents:
        assert (await agent.prompt("again")).output == "hello"

asyncio.run(main())
""",
}


@pytest.mark.parametrize("style", list(STYLES))
def test_a_script_that_never_closes_its_model_exits_quietly(
    openai_server: FakeOpenAIServer, anthropic_server: FakeAnthropicServer, style: str
) -> None:
    for _ in range(PROMPTS):
        openai_server.enqueue_text("hello")
        anthropic_server.enqueue_text("hello")
    code = SETUP + STYLES[style] + '\nprint("done", flush=True)\n'
    command = [sys.executable, "-W", "always::ResourceWarning", "-c", code, openai_server.base_url]
    command.append(anthropic_server.base_url)

    ending = run_until_exit(command, ceiling=CEILING, what=f"the {style} child")
    assert ending.returncode == 0, ending.stderr
    assert ending.last_line == "done\n", ending.stderr
    assert ending.stderr == ""
    assert ending.exit_seconds < EXIT_LIMIT
