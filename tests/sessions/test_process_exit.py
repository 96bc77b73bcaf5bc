"""A script that never closes its SQLite store still ends when its work ends, with nothing lost.

Each test runs a real `python` process on a SQLite file in `tmp_path`. The script prints
"done" as its last line; the process must then exit at once (it used to hang in
`threading._shutdown`, waiting for the store's worker thread), print nothing on stderr,
and leave a complete log behind.
"""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

from hookline.conversation import conversation_problem
from hookline.events import Event
from hookline.sessions import SQLiteSessionStore
from support.exiting import run_until_exit

# The whole process may take this long on a loaded machine; a hang is caught by it.
CEILING = 20.0
# From the script's last line to the end of the process. The promise is about a second;
# this allows for a machine busy with other tests.
EXIT_LIMIT = 5.0
RUNS = 3

AGENT = """
import asyncio, sys
from hookline import Agent, tool
from hookline.messages import ToolCallPart
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SQLiteSessionStore

@tool
def add(a: int, b: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return a + b

def script(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    if last.role == "user":
        return ModelResponse(tool_calls=[ToolCallPart(id=f"c{len(request.messages)}", name="add",
                                                      arguments={"a": 2, "b": 3})])
    prompt = next(m.text for m in reversed(request.messages) if m.role == "user")
    return ModelResponse(text=f"answer to {prompt}")

store = SQLiteSessionStore(sys.argv[1])
agent = Agent(model=FunctionModel(script), tools=[add], session_store=store)
"""

SCRIPTS = {
    "asyncio_run": AGENT
    + f"""
async def main() -> None:
    for i in range({RUNS}):
        result = await agent.prompt(f"hi {{i}}").session("s1")
        assert result.output == f"answer to hi {{i}}", result.output

asyncio.run(main())
""",
    "run_sync": AGENT
    + f"""
for i in range({RUNS}):
    result = agent.prompt(f"hi {{i}}").session("s1").run_sync()
    assert result.output == f"answer to hi {{i}}", result.output
""",
    "store_only": """
import asyncio, sys
from hookline.events import Event
from hookline.messages import TextPart
from hookline.sessions import SQLiteSessionStore

store = SQLiteSessionStore(sys.argv[1])

async def main() -> None:
    await store.create(session_id="s1")
    for i in range(50):
        await store.append_event("s1", Event(author="user", role="user", parts=[TextPart(text=f"hi {i}")]))

asyncio.run(main())
""",
}


def run_script(tmp_path: Path, name: str) -> tuple[float, str]:
    """Run the script `name` to its end; return the seconds from its last line to its exit, and stderr."""
    script = tmp_path / f"{name}.py"
    script.write_text(textwrap.dedent(SCRIPTS[name]) + '\nprint("done", flush=True)\n')
    db = tmp_path / "sessions.db"
    ending = run_until_exit([sys.executable, str(script), str(db)], ceiling=CEILING, what=f"the {name} script")
    assert ending.returncode == 0, ending.stderr
    assert ending.last_line == "done\n", ending.stderr
    exit_seconds, stderr = ending.exit_seconds, ending.stderr
    print(f"{name}: exited {exit_seconds * 1000:.0f} ms after its last line")
    return exit_seconds, stderr


def read_log(path: Path) -> list[Event]:
    async def read() -> list[Event]:
        async with SQLiteSessionStore(path) as store:
            return await store.events("s1")

    return asyncio.run(read())


def check_runs(events: list[Event], runs: int) -> None:
    """The log is gap-free, and holds every run's prompt, tool call, result and answer."""
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    messages = [e.to_message() for e in events if e.kind == "message"]
    assert conversation_problem(messages) is None
    for i in range(runs):
        assert any(m.role == "user" and m.text == f"hi {i}" for m in messages)
        assert any(m.role == "assistant" and m.text == f"answer to hi {i}" for m in messages)
    assert sum(len(m.tool_results) for m in messages) == runs


@pytest.mark.parametrize("name", ["asyncio_run", "run_sync"])
def test_an_agent_script_that_never_closes_its_store_exits(tmp_path: Path, name: str) -> None:
    exit_seconds, stderr = run_script(tmp_path, name)
    assert exit_seconds < EXIT_LIMIT
    assert stderr == ""
    check_runs(read_log(tmp_path / "sessions.db"), RUNS)


def test_a_store_script_that_never_closes_its_store_exits(tmp_path: Path) -> None:
    exit_seconds, stderr = run_script(tmp_path, "store_only")
    assert exit_seconds < EXIT_LIMIT
    assert stderr == ""
    events = read_log(tmp_path / "sessions.db")
    assert [e.seq for e in events] == list(range(1, 51))
    assert [e.text for e in events] == [f"hi {i}" for i in range(50)]
