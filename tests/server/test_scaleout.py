"""Several real `hookline serve` processes sharing one real PostgreSQL database.

A run on process A is followed live from process B (`/events/stream`, LISTEN/NOTIFY),
cancelled from B within 2 s, and cannot be deleted from B while it goes on. A follower of
a run whose process was killed does not hang. The processes serve
`test_scaleout_agents.py:agent`, whose "gate <path>" runs wait in a tool until the test
creates the file, so the test decides when the rest of the run happens.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest

from support.postgres_db import fresh_database
from support.waiting import DEADLINE, await_until

from .api import SSE, Frame, new_session, sse_frames
from .served import HOOKLINE, Served

pytestmark = pytest.mark.anyio

AGENTS = Path(__file__).with_name("test_scaleout_agents.py")
CANCEL_LIMIT = 2.0 + float(os.environ.get("HOOKLINE_TEST_CANCEL_SLACK", "0.5"))
"""Seconds from the cancel request to the run's end: the promised 2 s, plus a slack for a loaded machine."""


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    """A throwaway PostgreSQL database for this module's server processes."""
    if HOOKLINE is None:
        pytest.skip("the hookline console script is not installed")
    with fresh_database("hookline_scaleout") as url:
        yield url


@pytest.fixture(scope="module")
def spawn(database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[int], list[Served]]]:
    """Start server processes on the database (at once, so they boot side by side); stop them at the end."""
    started: list[Served] = []
    cwd = tmp_path_factory.mktemp("serve")

    def start(count: int) -> list[Served]:
        batch = [Served(f"{AGENTS}:agent", database, cwd) for _ in range(count)]
        started.extend(batch)
        for served in batch:
            served.wait_url()
        return batch

    yield start
    for served in started:
        served.stop()


@pytest.fixture(scope="module")
def pair(spawn: Callable[[int], list[Served]]) -> tuple[str, str]:
    """The URLs of two server processes, A and B, sharing the database."""
    a, b = spawn(2)
    return a.url, b.url


@pytest.fixture
async def clients(pair: tuple[str, str]) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    async with httpx.AsyncClient(base_url=pair[0], timeout=DEADLINE) as a, \
            httpx.AsyncClient(base_url=pair[1], timeout=DEADLINE) as b:
        yield a, b


async def texts(http: httpx.AsyncClient, session_id: str) -> list[str]:
    response = await http.get(f"/v1/sessions/{session_id}/events", params={"view": "ui"})
    assert response.status_code == 200, response.text
    return ["".join(p.get("text", "") for p in e["parts"]) for e in response.json()]


async def running(http: httpx.AsyncClient, session_id: str, line: str) -> None:
    """Wait until the session's log (read through `http`) holds a line starting with `line`."""
    async def seen() -> bool:
        return any(text.startswith(line) for text in await texts(http, session_id))

    await await_until(seen, f"{line!r} is in session {session_id}")


class Follower:
    """A reader of `/events/stream` in a task: the frames it got, and when each came."""

    def __init__(self, http: httpx.AsyncClient, session_id: str, after: int = 0) -> None:
        self.frames: list[tuple[float, Frame]] = []
        self.status = 0
        self.ended_at = 0.0
        self._task = asyncio.create_task(self._follow(http, session_id, after))

    async def _follow(self, http: httpx.AsyncClient, session_id: str, after: int) -> None:
        headers = {**SSE, "Last-Event-ID": str(after)}
        async with http.stream("GET", f"/v1/sessions/{session_id}/events/stream", headers=headers) as response:
            self.status = response.status_code
            async for frame in sse_frames(response):
                self.frames.append((time.monotonic(), frame))
        self.ended_at = time.monotonic()

    def texts(self) -> list[str]:
        return ["".join(p.get("text", "") for p in f.json["parts"]) for _, f in self.frames]

    async def wait_for(self, line: str) -> None:
        async def seen() -> bool:
            if line in self.texts():
                return True
            if self._task.done():
                self._task.result()
                raise AssertionError(f"the stream ended without {line!r}: {self.texts()}")
            return False

        await await_until(seen, f"{line!r} came in the stream")

    async def ended(self) -> float:
        """Wait for the stream to end; return when it did."""
        await asyncio.wait_for(self._task, DEADLINE)
        return self.ended_at


# -- live events across processes ----------------------------------------------------------------


async def test_a_follower_on_b_sees_a_run_on_a_live_to_its_end(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient], tmp_path: Path
) -> None:
    a, b = clients
    session_id = await new_session(a)
    gate = tmp_path / "gate"
    run = asyncio.create_task(a.post(f"/v1/sessions/{session_id}/runs", json={"prompt": f"gate {gate}"}))
    await running(b, session_id, "running wait_for(")
    follower = Follower(b, session_id)
    late = Follower(b, session_id, after=2)  # a reconnect: from its Last-Event-ID on
    await follower.wait_for("turn 1: calling model")
    opened = time.monotonic()
    gate.touch()
    result = (await run).json()
    assert result["stop_reason"] == "completed", result
    await follower.ended()
    await late.ended()
    assert follower.status == late.status == 200

    log = (await a.get(f"/v1/sessions/{session_id}/events", params={"view": "ui"})).json()
    seqs = [int(f.id) for _, f in follower.frames if f.id is not None]
    assert seqs == [e["seq"] for e in log], "every stored event once, in order"
    assert [int(f.id) for _, f in late.frames if f.id is not None] == [e["seq"] for e in log if e["seq"] > 2]
    live = [f for at, f in follower.frames if at > opened]
    assert [f.json["role"] for f in live if f.event == "message"] == ["tool", "assistant"], "the rest came live"
    assert follower.texts()[-1] == "run completed", "the stream ends with the run"


async def test_a_follower_of_a_session_without_a_run_gets_the_log_and_ends(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    a, b = clients
    session_id = await new_session(a)
    assert (await a.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hello"})).status_code == 200
    follower = Follower(b, session_id)
    await follower.ended()
    assert follower.texts()[-1] == "run completed"
    assert "You said: hello" in follower.texts()


# -- cancel -----------------------------------------------------------------------------------


@pytest.mark.parametrize("prompt", ["hang", "gate"], ids=["in-a-model-call", "in-a-tool"])
async def test_cancel_on_b_stops_a_run_on_a_within_2_s(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient], tmp_path: Path, prompt: str
) -> None:
    a, b = clients
    session_id = await new_session(a)
    prompt = f"gate {tmp_path / 'never'}" if prompt == "gate" else prompt
    run = asyncio.create_task(a.post(f"/v1/sessions/{session_id}/runs", json={"prompt": prompt}))
    await running(b, session_id, "turn 1: calling model" if prompt == "hang" else "running wait_for(path=")
    follower = Follower(b, session_id)
    await follower.wait_for("turn 1: calling model")

    asked = time.monotonic()
    response = await b.post(f"/v1/sessions/{session_id}/cancel")
    assert response.status_code == 202, response.text
    assert response.json() == {"session_id": session_id, "status": "cancelling"}
    result = (await run).json()
    stopped = time.monotonic() - asked
    print(f"cancel on B -> run on A ended {stopped * 1000:.0f} ms later")
    assert result["stop_reason"] == "cancelled", result
    assert stopped < CANCEL_LIMIT

    again = await b.post(f"/v1/sessions/{session_id}/cancel")
    assert again.status_code == 404, again.text
    assert again.json()["error"] == "not_running"
    await follower.ended()
    assert follower.texts()[-1] == "run cancelled"
    prompt_view = (await b.get(f"/v1/sessions/{session_id}/events", params={"view": "prompt"})).json()
    calls = {p["id"] for e in prompt_view for p in e["parts"] if p["type"] == "tool_call"}
    answered = {p["call_id"] for e in prompt_view for p in e["parts"] if p["type"] == "tool_result"}
    assert calls == answered, "no orphan call: the log stays valid"
    assert (await b.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hello"})).json()["output"] == \
        "You said: hello", "the session takes runs again, on any process"


async def test_cancel_with_nothing_running_anywhere_answers_404(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    a, b = clients
    session_id = await new_session(a)
    response = await b.post(f"/v1/sessions/{session_id}/cancel")
    assert response.status_code == 404, response.text
    assert response.json()["error"] == "not_running"
    missing = await b.post("/v1/sessions/no-such-session/cancel")
    assert missing.status_code == 404
    assert missing.json()["error"] == "not_found"


# -- delete -----------------------------------------------------------------------------------


async def test_delete_on_b_during_a_run_on_a_answers_409(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient], tmp_path: Path
) -> None:
    a, b = clients
    session_id = await new_session(a)
    gate = tmp_path / "gate"
    run = asyncio.create_task(a.post(f"/v1/sessions/{session_id}/runs", json={"prompt": f"gate {gate}"}))
    await running(b, session_id, "turn 1: calling model")
    response = await b.delete(f"/v1/sessions/{session_id}")
    assert response.status_code == 409, response.text
    assert response.json()["error"] == "busy"
    assert "in this or another server process" in response.json()["message"]
    gate.touch()
    assert (await run).json()["stop_reason"] == "completed"
    assert (await b.delete(f"/v1/sessions/{session_id}")).status_code == 204
    assert (await a.get(f"/v1/sessions/{session_id}")).status_code == 404


# -- a process dies ---------------------------------------------------------------------------


async def test_a_follower_of_a_run_whose_process_died_does_not_hang(
    spawn: Callable[[int], list[Served]], clients: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    _, b = clients
    (doomed,) = spawn(1)
    async with httpx.AsyncClient(base_url=doomed.url, timeout=DEADLINE) as c:
        session_id = await new_session(c)
        run = asyncio.create_task(c.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hang"}))
        await running(b, session_id, "turn 1: calling model")
        follower = Follower(b, session_id)
        await follower.wait_for("turn 1: calling model")
        doomed.kill()
        killed = time.monotonic()
        with pytest.raises(httpx.TransportError):
            await run
    ended = await follower.ended() - killed
    assert ended > 0, "the stream followed the run until its process died"
    print(f"the follower's stream ended {ended * 1000:.0f} ms after the run's process was killed")
    assert ended < 10, "a stream outlives a dead process's run by about a second (the idle probe), not forever"
    assert (await b.post(f"/v1/sessions/{session_id}/cancel")).status_code == 404
    assert json.loads(follower.frames[-1][1].data)["seq"] is not None


async def test_a_server_following_another_process_s_run_stops_within_2_s_of_sigterm(
    spawn: Callable[[int], list[Served]], clients: tuple[httpx.AsyncClient, httpx.AsyncClient], tmp_path: Path,
) -> None:
    a, _ = clients
    (leaving,) = spawn(1)
    session_id = await new_session(a)
    gate = tmp_path / "gate"
    run = asyncio.create_task(a.post(f"/v1/sessions/{session_id}/runs", json={"prompt": f"gate {gate}"}))
    async with httpx.AsyncClient(base_url=leaving.url, timeout=DEADLINE) as c:
        await running(c, session_id, "running wait_for(")
        follower = Follower(c, session_id)
        await follower.wait_for("turn 1: calling model")
        asked = time.monotonic()
        leaving.process.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(leaving.process.wait, DEADLINE)
        stopped = time.monotonic() - asked
        await follower.ended()
    print(f"the following server stopped {stopped * 1000:.0f} ms after SIGTERM (exit {code})")
    assert stopped < CANCEL_LIMIT
    assert "did not stop" not in leaving.stderr
    gate.touch()
    assert (await run).json()["stop_reason"] == "completed", "the run on A goes on"
