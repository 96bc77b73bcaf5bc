"""The live stream survives its server: SIGKILL mid-answer, the reader moves to another process.

Each trial runs two `hookline serve` processes, A and B, on one PostgreSQL database. A runs
a session whose model streams a long answer; a reader on B follows it (deltas included,
from A over the bus). After a random delay A is killed with SIGKILL. Then:

- B's stream of the run ends (PostgreSQL frees the dead run's lock), without a frame twice;
- the reader reconnects to B with the last `id:` it saw and gets every stored event after it,
  once: together, the two streams hold each stored event of the log (markers aside) once;
- the deltas it got are the answer's, from its first word, in order, none twice;
- the log is sound (seq 1..n, no orphan result), and B runs the next prompt to its end.

Short mode: 3 trials; HOOKLINE_FAULTS_LONG=1: 30.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from hookline import Event
from hookline.events import EVENTS_ADAPTER
from server.api import SSE, Frame, sse_frames
from server.live_agents import told
from server.served import HOOKLINE, Served
from support.postgres_db import fresh_database
from support.waiting import DEADLINE

from ._harness import log_problems, publish, trial_count

pytestmark = [pytest.mark.faults, pytest.mark.slow, pytest.mark.anyio]

AGENT = f"{Path(__file__).parent.parent / 'server' / 'live_agents.py'}:agent"
WORDS = 200


@pytest.fixture
def database() -> Iterator[str]:
    if HOOKLINE is None:
        pytest.skip("the hookline console script is not installed")
    with fresh_database("hookline_live_faults") as url:
        yield url


async def _frames(http: httpx.AsyncClient, method: str, path: str, into: list[Frame], **options: object) -> None:
    try:
        async with http.stream(method, path, headers={**SSE, **options.pop("headers", {})}, **options) as response:  # type: ignore[arg-type]
            assert response.status_code == 200, await response.aread()
            async for frame in sse_frames(response):
                into.append(frame)
    except (httpx.RemoteProtocolError, httpx.ReadError):
        pass  # the process it read was killed


def _words(frames: list[Frame]) -> str:
    return "".join(f.json["parts"][0]["text"] for f in frames if f.event == "delta")


async def _trial(number: int, b: str, database: str, workdir: Path) -> list[str]:
    problems: list[str] = []
    a = Served(AGENT, database, workdir)
    try:
        async with httpx.AsyncClient(base_url=a.wait_url(), timeout=DEADLINE) as on_a, \
                httpx.AsyncClient(base_url=b, timeout=DEADLINE) as on_b:
            session_id = (await on_a.post("/v1/sessions", json={})).json()["id"]
            ran: list[Frame] = []
            running = asyncio.create_task(_frames(on_a, "POST", f"/v1/sessions/{session_id}/runs", ran,
                                                  json={"prompt": f"tell {WORDS} 0.01"}))
            while not any(f.id for f in ran):
                await asyncio.sleep(0.01)
            followed: list[Frame] = []
            following = asyncio.create_task(_frames(on_b, "GET", f"/v1/sessions/{session_id}/events/stream",
                                                    followed, headers={"Last-Event-ID": "1"}))
            await asyncio.sleep(random.uniform(0.1, 1.5))
            a.kill()
            await asyncio.wait_for(following, DEADLINE)
            running.cancel()
            last = max([int(f.id) for f in followed if f.id] + [1])
            again: list[Frame] = []
            await asyncio.wait_for(_frames(on_b, "GET", f"/v1/sessions/{session_id}/events/stream", again,
                                           headers={"Last-Event-ID": str(last)}), DEADLINE)
            log = EVENTS_ADAPTER.validate_json((await on_b.get(f"/v1/sessions/{session_id}/events",
                                                               params={"view": "all"})).content)
            problems += _stream_problems(log, followed, again)
            problems += log_problems(log, complete=False)
            answer = await on_b.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "tell 3 0"})
            if answer.status_code != 200 or answer.json()["output"] != told(3):
                problems.append(f"the next prompt on B answered {answer.status_code}: {answer.text[:200]}")
    finally:
        a.stop()
    return [f"trial {number}: {p}" for p in problems]


def _stream_problems(log: list[Event], followed: list[Frame], again: list[Frame]) -> list[str]:
    problems = []
    shown = [e.seq for e in log if e.kind != "marker" and (e.seq or 0) > 1]
    got = [int(f.id) for f in followed + again if f.id is not None]
    if got != shown:
        problems.append(f"the streams got seqs {got}, the log holds {shown} after 1")
    words = _words(followed)
    if not told(WORDS).startswith(words):
        problems.append(f"the deltas are not the answer's from its first word, once: {words[:80]!r}...")
    if _words(again):
        problems.append("the reconnected stream got deltas of a run that died")
    return problems


async def test_a_reader_on_another_process_loses_nothing_stored_and_gets_no_delta_twice_when_the_run_dies(
    database: str, tmp_path: Path
) -> None:
    trials = trial_count(3, 30)
    b = Served(AGENT, database, tmp_path)
    try:
        url = b.wait_url()
        problems = []
        for number in range(trials):
            problems += await _trial(number, url, database, tmp_path)
    finally:
        b.stop()
    publish("live stream kill trials", {"trials": trials, "problems": len(problems)})
    assert not problems, "\n".join(problems[:20])
