"""A script that never closes its PostgreSQL store still ends at once and cleanly (issue 10, item 1).

Each script is a real Python process in development mode (`-X dev`: ResourceWarnings and
asyncio's debug checks on). It must print nothing on stderr, end promptly after its last
line, and leave everything it appended in the database.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from contextlib import suppress
from pathlib import Path

import pytest

from hookline.errors import SessionNotFound
from hookline.sessions import PostgresSessionStore

pytestmark = pytest.mark.anyio

EXIT_WITHIN = 5.0  # seconds from the script's last line to its exit (a second, with room for a loaded machine)

PRELUDE = """
import asyncio, sys, threading, time
from hookline import Agent
from hookline.models import FunctionModel, ModelResponse
from hookline.sessions import PostgresSessionStore

store = PostgresSessionStore(sys.argv[1])
agent = Agent(model=FunctionModel(lambda request: ModelResponse(text="ok")), session_store=store)
"""

SCRIPTS = {
    "asyncio_run": """
        async def main():
            await agent.prompt("one").session("s-run")
        asyncio.run(main())
    """,
    "run_sync": """
        agent.prompt("one").session("s-sync").run_sync()
    """,
    "asyncio_run_twice": """
        async def main(text):
            await agent.prompt(text).session("s-twice")
        asyncio.run(main("one"))
        asyncio.run(main("two"))
    """,
    "run_sync_from_threads": """
        def work(name):
            agent.prompt("one").session(name).run_sync()
        threads = [threading.Thread(target=work, args=(f"s-thread-{i}",)) for i in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    """,
}
SESSIONS = {
    "asyncio_run": {"s-run": 1},
    "run_sync": {"s-sync": 1},
    "asyncio_run_twice": {"s-twice": 2},
    "run_sync_from_threads": {f"s-thread-{i}": 1 for i in range(3)},
}


@pytest.mark.parametrize("style", list(SCRIPTS))
async def test_a_script_that_never_closes_the_store_exits_cleanly(
    style: str, tmp_path: Path, postgres_dsn: str
) -> None:
    async with PostgresSessionStore(postgres_dsn) as store:
        for session in SESSIONS[style]:
            with suppress(SessionNotFound):
                await store.delete(session)
    script = tmp_path / "script.py"
    last_line = '\nprint("last line at", time.monotonic(), flush=True)\n'  # one clock for every process
    script.write_text(PRELUDE + textwrap.dedent(SCRIPTS[style]) + last_line)
    command = [sys.executable, "-X", "dev", str(script), postgres_dsn]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
        process.communicate()
    ended = time.monotonic()
    assert (process.returncode, err) == (0, ""), out
    took = ended - float(out.split()[-1])
    assert took < EXIT_WITHIN, f"the script took {took:.1f} s to exit after its last line"

    async with PostgresSessionStore(postgres_dsn) as store:
        for session, runs in SESSIONS[style].items():
            prompt = await store.events(session, view="prompt")
            assert [e.text for e in prompt] == ["one", "ok", "two", "ok"][: 2 * runs]
            assert (await store.events(session))[-1].text == "run completed"


INTERRUPTED = """
import asyncio, signal, sys
from hookline import Agent
from hookline.models import FunctionModel
from hookline.sessions import PostgresSessionStore

async def never_answers(request):
    print("calling the model", flush=True)
    await asyncio.Event().wait()

agent = Agent(model=FunctionModel(never_answers), session_store=PostgresSessionStore(sys.argv[1]))
async def main():
    await agent.prompt("wait").session(sys.argv[2])

try:
    asyncio.run(main())
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


async def test_ctrl_c_during_a_run_ends_the_script_and_frees_the_session(tmp_path: Path, postgres_dsn: str) -> None:
    script = tmp_path / "interrupted.py"
    script.write_text(INTERRUPTED)
    command = [sys.executable, "-X", "dev", str(script), postgres_dsn, "s-interrupted"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "calling the model\n"
        process.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
        process.communicate()
    took = time.monotonic() - interrupted
    assert (out, err, process.returncode) == ("interrupted\n", "", 0)
    assert took < EXIT_WITHIN, f"the script took {took:.1f} s to end after Ctrl-C"
    async with PostgresSessionStore(postgres_dsn) as store, store.run_lock("s-interrupted", timeout=0):
        events = await store.events("s-interrupted")  # its lock went with it
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert events[0].text == "wait"
