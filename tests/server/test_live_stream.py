"""The live stream, against real `hookline serve` processes on a real SQLite file and a real PostgreSQL.

What a front end meets: a tool's progress while it runs (not when it ends); a reader that
reconnects mid-answer rebuilds the exact answer, nothing twice; a follower opened on an
idle session sees the runs started later, whoever starts them (another client, another
server process, the CLI); a stopped answer keeps its text. The processes serve
`live_agents.py:agent`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.postgres_db import fresh_database
from support.waiting import DEADLINE, await_until

from .api import SSE, Frame, full_log, new_session, sse_frames
from .live_agents import told
from .served import HOOKLINE, Served

pytestmark = pytest.mark.anyio

AGENT = f"{Path(__file__).with_name('live_agents.py')}:agent"
SLACK = float(os.environ.get("HOOKLINE_TEST_CANCEL_SLACK", "0.5"))
"""Seconds of slack for a loaded machine on top of a promised bound."""


@pytest.fixture(scope="module")
def sqlite_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("live") / "sessions.db"


@pytest.fixture(scope="module")
def sqlite_server(sqlite_db: Path) -> Iterator[str]:
    """One `hookline serve` process on a SQLite file."""
    if HOOKLINE is None:
        pytest.skip("the hookline console script is not installed")
    served = Served(AGENT, str(sqlite_db), sqlite_db.parent)
    try:
        yield served.wait_url()
    finally:
        served.stop()


@pytest.fixture(scope="module")
def postgres_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """Two `hookline serve` processes, A and B, on one PostgreSQL database."""
    if HOOKLINE is None:
        pytest.skip("the hookline console script is not installed")
    cwd = tmp_path_factory.mktemp("pair")
    with fresh_database("hookline_live") as url:
        pair = [Served(AGENT, url, cwd) for _ in range(2)]
        try:
            a, b = (served.wait_url() for served in pair)
            yield a, b
        finally:
            for served in pair:
                served.stop()


@pytest.fixture
async def sqlite_client(sqlite_server: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=sqlite_server, timeout=DEADLINE) as http:
        yield http


@pytest.fixture
async def pair_clients(postgres_pair: tuple[str, str]) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    async with httpx.AsyncClient(base_url=postgres_pair[0], timeout=DEADLINE) as a, \
            httpx.AsyncClient(base_url=postgres_pair[1], timeout=DEADLINE) as b:
        yield a, b


class Reader:
    """An SSE reader in a task: each frame it got and when; it stops reading once `until(frame)` holds."""

    def __init__(self, opening: Any, until: Callable[[Frame], bool] = lambda frame: False) -> None:
        self.frames: list[tuple[float, Frame]] = []
        self.status = 0
        self.opened = asyncio.Event()
        self._until = until
        self._task = asyncio.create_task(self._read(opening))

    async def _read(self, opening: Any) -> None:
        async with opening as response:
            self.status = response.status_code
            self.opened.set()
            async for frame in sse_frames(response):
                self.frames.append((time.monotonic(), frame))
                if self._until(frame):
                    return

    @property
    def got(self) -> list[Frame]:
        return [frame for _, frame in self.frames]

    def deltas(self) -> str:
        return "".join(f.json["parts"][0]["text"] for f in self.got if f.event == "delta")

    def last_id(self) -> int:
        return max((int(f.id) for f in self.got if f.id is not None), default=0)

    def lines(self) -> list[str]:
        return ["".join(p.get("text", "") for p in f.json.get("parts", [])) for f in self.got]

    async def wait_for(self, condition: Callable[[Reader], bool], what: str) -> None:
        async def holds() -> bool:
            if condition(self):
                return True
            if self._task.done():
                self._task.result()
                raise AssertionError(f"the stream ended before {what}: {self.lines()}")
            return False

        await await_until(holds, what)

    async def ended(self) -> None:
        await asyncio.wait_for(self._task, DEADLINE)

    async def close(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


def run(http: httpx.AsyncClient, session_id: str, prompt: str, until: Callable[[Frame], bool] = lambda f: False,
        ) -> Reader:
    """A run's own SSE stream."""
    return Reader(http.stream("POST", f"/v1/sessions/{session_id}/runs", json={"prompt": prompt}, headers=SSE), until)


def follow(http: httpx.AsyncClient, session_id: str, *, last_id: int | None = None, following: bool = False,
           until: Callable[[Frame], bool] = lambda f: False) -> Reader:
    """A reader of `/events/stream` (reconnecting after `last_id`; across runs with `following`)."""
    headers = {**SSE, **({"Last-Event-ID": str(last_id)} if last_id is not None else {})}
    params = {"follow": "true"} if following else {}
    return Reader(http.stream("GET", f"/v1/sessions/{session_id}/events/stream", headers=headers, params=params),
                  until)


def ended(frame: Frame) -> bool:
    return frame.event == "status" and "run_end" in frame.json["metadata"]


def stored_answer(frames: list[Frame]) -> str:
    answers = [f.json for f in frames if f.event == "message" and f.json["role"] == "assistant"]
    assert len(answers) == 1, answers
    return "".join(p["text"] for p in answers[0]["parts"])


# -- progress while a tool runs ----------------------------------------------------------------


def _progress_arrivals(frames: list[tuple[float, Frame]]) -> list[tuple[str, float]]:
    return [(f.json["parts"][0]["text"], at) for at, f in frames
            if f.event == "status" and f.json["parts"][0]["text"].startswith(("step ", "{"))]


async def test_a_tools_progress_reaches_the_served_stream_while_it_runs(sqlite_client: httpx.AsyncClient) -> None:
    session_id = await new_session(sqlite_client)
    reader = run(sqlite_client, session_id, "steps 4 2", until=ended)
    await reader.ended()
    lines = [text for text, _ in _progress_arrivals(reader.frames)]
    assert lines == [x for i in range(1, 5) for x in (f"step {i} of 4", f'{{"done":{i},"of":4}}')]
    arrivals = dict(_progress_arrivals(reader.frames))
    result_at = next(at for at, f in reader.frames if f.event == "message" and f.json["role"] == "tool")
    # Each step is 0.5 s of the tool's work: a line held back to the tool's end would come after the result.
    assert arrivals["step 1 of 4"] < arrivals["step 2 of 4"] - 0.2 < result_at - 0.4
    live = [f for f in reader.got if f.event == "status" and f.json["parts"][0]["text"].startswith("step ")]
    assert all(f.id is None and f.json["seq"] is None and f.json["id"] for f in live), "live, before it is stored"
    stored = {f.json["id"]: int(f.id) for f in reader.got if f.event == "stored" and f.id is not None}
    assert {f.json["id"] for f in live} <= set(stored), "each live line is confirmed once stored"
    log = {e["id"]: e for e in await full_log(sqlite_client, session_id)}
    assert all(log[f.json["id"]]["seq"] == stored[f.json["id"]] for f in live)
    assert [int(f.id) for f in reader.got if f.id is not None] == sorted({int(f.id) for f in reader.got if f.id})


async def test_a_reader_joining_while_a_tool_runs_gets_its_progress_live(sqlite_client: httpx.AsyncClient) -> None:
    session_id = await new_session(sqlite_client)
    runner = run(sqlite_client, session_id, "steps 4 2", until=ended)
    await runner.wait_for(lambda r: "step 1 of 4" in r.lines(), "the first step")
    joined = follow(sqlite_client, session_id, until=ended)
    await joined.wait_for(lambda r: "step 3 of 4" in r.lines(), "a step made after joining")
    assert not any(f.event == "message" and f.json["role"] == "tool" for f in joined.got), "it came live"
    await joined.ended()
    await runner.ended()
    assert joined.lines().count("step 1 of 4") == 1
    assert joined.lines().count("step 3 of 4") == 1


# -- reconnecting mid-answer ---------------------------------------------------------------------


async def _reconnect_mid_answer(first: httpx.AsyncClient, second: httpx.AsyncClient, *, same_process: bool) -> None:
    session_id = await new_session(first)
    reader = run(first, session_id, "tell 60 0.03")
    await reader.wait_for(lambda r: len(r.deltas().split()) >= 10, "ten words")
    last_id = reader.last_id()
    seen_before = reader.deltas()
    await reader.close()  # the page reloads: the connection drops mid-answer
    again = follow(second, session_id, last_id=last_id, until=ended)
    await again.ended()
    assert again.status == 200
    assert again.deltas().startswith(seen_before), "the answer from its first word, what it saw before included"
    if same_process:
        assert again.deltas() == told(60), "every delta, nothing twice"
    else:  # the stored answer may overtake the last deltas, which then are dropped: it has their text
        assert told(60).startswith(again.deltas()), "nothing twice"
    assert stored_answer(again.got) == told(60)
    seqs = [int(f.id) for f in again.got if f.id is not None]
    assert seqs == sorted(set(seqs)), "nothing twice"
    assert min(seqs) > last_id, "nothing from before Last-Event-ID"


async def test_a_reader_reconnecting_mid_answer_rebuilds_it_exactly(sqlite_client: httpx.AsyncClient) -> None:
    await _reconnect_mid_answer(sqlite_client, sqlite_client, same_process=True)


async def test_a_reader_reconnecting_to_another_process_mid_answer_rebuilds_it_exactly(
    pair_clients: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    await _reconnect_mid_answer(*pair_clients, same_process=False)


# -- following a session across runs -------------------------------------------------------------


async def test_a_follower_opened_on_an_idle_session_sees_every_later_run_until_the_session_goes(
    sqlite_client: httpx.AsyncClient,
) -> None:
    session_id = await new_session(sqlite_client)
    follower = follow(sqlite_client, session_id, following=True)
    await asyncio.wait_for(follower.opened.wait(), DEADLINE)  # the headers came at once, no run going on
    assert follower.status == 200
    for n in (3, 5):
        answer = (await sqlite_client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": f"tell {n} 0.01"})).json()
        assert answer["output"] == told(n)
        await follower.wait_for(lambda r, n=n: told(n) in r.lines(), f"the answer of run {n}")
    assert follower.deltas() == told(3) + told(5), "deltas of both runs, live"
    assert sum(1 for f in follower.got if ended(f)) == 2, "still open after both runs"
    assert (await sqlite_client.delete(f"/v1/sessions/{session_id}")).status_code == 204
    await follower.ended()


async def test_a_follower_sees_a_run_of_the_cli_on_the_same_sqlite_file(
    sqlite_client: httpx.AsyncClient, sqlite_db: Path
) -> None:
    session_id = await new_session(sqlite_client)
    follower = follow(sqlite_client, session_id, following=True)
    await asyncio.wait_for(follower.opened.wait(), DEADLINE)
    assert HOOKLINE is not None
    command = [HOOKLINE, "run", "tell 4 0", "--agent", AGENT, "--session", session_id, "--db", str(sqlite_db)]
    cli = await asyncio.to_thread(subprocess.run, command, capture_output=True, timeout=DEADLINE)
    assert cli.returncode == 0, cli.stderr
    await follower.wait_for(lambda r: any(ended(f) for f in r.got), "the CLI's run to its end")
    assert stored_answer(follower.got) == told(4)
    await follower.close()


async def test_a_follower_on_b_sees_the_runs_of_a_live_deltas_included(
    pair_clients: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    a, b = pair_clients
    session_id = await new_session(a)
    follower = follow(b, session_id, following=True)
    await asyncio.wait_for(follower.opened.wait(), DEADLINE)
    reader = run(a, session_id, "tell 30 0.03", until=ended)
    await follower.wait_for(lambda r: len(r.deltas().split()) >= 5, "deltas from the other process")
    assert not any(f.event == "message" and f.json["role"] == "assistant" for f in follower.got), "before the answer"
    await follower.wait_for(lambda r: any(ended(f) for f in r.got), "the run's end")
    await reader.ended()
    assert told(30).startswith(follower.deltas()), "nothing twice (the answer may overtake its last deltas)"
    assert stored_answer(follower.got) == told(30)
    steps = run(a, session_id, "steps 3 0.9", until=ended)
    await follower.wait_for(lambda r: "step 2 of 3" in r.lines(), "a tool's progress from the other process")
    assert not any(f.event == "message" and f.json["role"] == "tool" for f in follower.got), "it came live"
    await steps.ended()
    await follower.close()


# -- a stopped answer keeps its text -------------------------------------------------------------


async def test_a_stopped_answer_is_kept_cut_off_and_shown_after_a_reload(sqlite_client: httpx.AsyncClient) -> None:
    session_id = await new_session(sqlite_client)
    reader = run(sqlite_client, session_id, "tell 100 0.03", until=ended)
    await reader.wait_for(lambda r: len(r.deltas().split()) >= 8, "eight words")
    assert (await sqlite_client.post(f"/v1/sessions/{session_id}/cancel")).status_code == 202
    await reader.ended()
    said = reader.deltas()
    assert 8 <= len(said.split()) < 100
    cut = [f.json for f in reader.got if f.event == "message" and f.json["role"] == "assistant"]
    assert [m["metadata"] for m in cut] == [{"cut_off": True}]
    reloaded = (await sqlite_client.get(f"/v1/sessions/{session_id}")).json()["events"]
    kept = [e for e in reloaded if e["kind"] == "message" and e["role"] == "assistant"]
    assert ["".join(p["text"] for p in e["parts"]) for e in kept] == [said]
    assert kept[0]["metadata"] == {"cut_off": True}
    assert reloaded[-1]["metadata"]["run_end"] == "cancelled"


async def test_hookline_serve_stopping_ends_its_followers_at_once(sqlite_db: Path) -> None:
    served = Served(AGENT, str(sqlite_db.with_name("stopping.db")), sqlite_db.parent)
    try:
        async with httpx.AsyncClient(base_url=served.wait_url(), timeout=DEADLINE) as http:
            session_id = await new_session(http)
            follower = follow(http, session_id, following=True)
            await asyncio.wait_for(follower.opened.wait(), DEADLINE)
            stopping = time.monotonic()
            served.process.send_signal(signal.SIGTERM)
            await follower.ended()
            await asyncio.to_thread(served.process.wait, DEADLINE)
            assert time.monotonic() - stopping < 2.0 + SLACK, "hookline serve stops within 2 s of SIGTERM"
    finally:
        served.stop()
