"""Runs with ids (issue 28): background runs, `GET /v1/runs/{id}`, and what a run does when its session is busy.

Real servers on a real store; the scripted agent's "slow" prompt keeps a run going while a
test acts on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hookline import State, hook
from hookline.models import ModelRequest, ModelResponse
from hookline.sessions import SessionStore
from support.waiting import await_until

from .agent import make_agent, script
from .api import SSE, Frame, full_log, model_called, new_session
from .live import LiveServer

pytestmark = pytest.mark.anyio


async def run_info(http: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    answer = await http.get(f"/v1/runs/{run_id}")
    assert answer.status_code == 200, answer.text
    info: dict[str, Any] = answer.json()
    return info


async def ended(http: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    """The run's info once it has ended."""
    found: dict[str, Any] = {}

    async def over() -> bool:
        found.update(await run_info(http, run_id))
        return found["state"] not in ("queued", "running")

    await await_until(over, f"run {run_id} ended")
    return found


async def test_a_background_run_answers_202_with_its_id_and_runs_on(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    accepted = await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "slow", "background": True})
    assert accepted.status_code == 202, accepted.text
    body = accepted.json()
    run_id = body["run_id"]
    assert (body["session_id"], body["state"], body["url"]) == (session_id, "running", f"/v1/runs/{run_id}")
    assert run_id.startswith(f"{session_id}~")
    assert (await run_info(client, run_id))["state"] == "running"
    info = await ended(client, run_id)
    assert info["state"] == "completed"
    assert (info["result"]["output"], info["result"]["stop_reason"]) == ("slow answer", "completed")
    assert info["error"] is None
    logged = [e for e in await full_log(client, session_id) if e["kind"] != "marker"]
    assert logged
    assert all(e["metadata"]["run_id"] == run_id for e in logged), "every event names its run"


async def test_a_run_is_not_found_for_another_user_nor_when_it_is_no_run(
    auth_server: LiveServer,
) -> None:
    alice = httpx.AsyncClient(base_url=auth_server.url, headers={"Authorization": "Bearer tok-alice"})
    bob = httpx.AsyncClient(base_url=auth_server.url, headers={"Authorization": "Bearer tok-bob"})
    async with alice, bob:
        session_id = await new_session(alice)
        run_id = (await alice.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hi", "background": True}))
        run_id = run_id.json()["run_id"]
        for who, path in ((bob, run_id), (alice, f"{session_id}~0000"), (alice, "no-tilde"), (bob, "x~1")):
            answer = await who.get(f"/v1/runs/{path}")
            assert (answer.status_code, answer.json()["error"]) == (404, "not_found"), path
        background_for_bob = await bob.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hi",
                                                                                    "background": True})
        assert background_for_bob.status_code == 404


async def test_another_process_answers_for_a_run_from_the_log(
    make_server: Callable[..., LiveServer], store: SessionStore
) -> None:
    first, second = make_server(), make_server()
    async with httpx.AsyncClient(base_url=first.url) as one, httpx.AsyncClient(base_url=second.url) as two:
        session_id = await new_session(one)
        run_id = (await one.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hi", "background": True}))
        info = await ended(two, run_id.json()["run_id"])
    assert info["state"] == "completed"
    assert info["result"]["output"] == "You said: hi"


async def test_a_background_run_is_on_record_when_its_id_is_answered(
    make_server: Callable[..., LiveServer], store: SessionStore
) -> None:
    # The 202 came back before the run's first write: another process asked for the run at
    # once and was told it did not exist.
    @hook
    async def late_start(state: State) -> None:
        await asyncio.sleep(0.5)

    agent = make_agent(store)
    first, second = make_server(agent.clone(hooks={**agent.hooks, "before_run": [late_start]})), make_server()
    async with httpx.AsyncClient(base_url=first.url) as one, httpx.AsyncClient(base_url=second.url) as two:
        session_id = await new_session(one)
        run_id = (await one.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hi", "background": True}))
        assert (await run_info(two, run_id.json()["run_id"]))["state"] in ("running", "completed")


async def test_reject_is_409_as_for_a_run_without_an_id(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    running = asyncio.ensure_future(client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "slow"}))
    await model_called(client, session_id)
    refused = await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hi", "background": True})
    assert (refused.status_code, refused.json()["error"]) == (409, "busy")
    assert (await running).status_code == 200


async def test_enqueued_runs_wait_their_turn_in_order(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    running = asyncio.ensure_future(client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "slow"}))
    await model_called(client, session_id)
    queued = []
    for text in ("one", "two"):
        answer = await client.post(f"/v1/sessions/{session_id}/runs",
                                   json={"prompt": text, "if_busy": "enqueue", "background": True})
        assert (answer.status_code, answer.json()["state"]) == (202, "queued"), answer.text
        queued.append(answer.json()["run_id"])
    assert (await run_info(client, queued[0]))["state"] == "queued"
    # A foreground enqueued run waits, then answers as any run does.
    last = await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "three", "if_busy": "enqueue"})
    assert (last.status_code, last.json()["output"]) == (200, "You said: three")
    assert (await running).json()["output"] == "slow answer"
    assert [(await ended(client, run_id))["result"]["output"] for run_id in queued] == ["You said: one",
                                                                                          "You said: two"]
    prompts = [e["parts"][0]["text"] for e in await full_log(client, session_id) if e.get("role") == "user"]
    assert prompts == ["slow", "one", "two", "three"]
    markers = [e["metadata"] for e in await full_log(client, session_id) if e["metadata"].get("run_queued")]
    assert [m["run_id"] for m in markers][:2] == queued, "each queued run is on record at once"


async def test_a_full_queue_answers_409(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(queue_limit=1)
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        session_id = await new_session(http)
        running = asyncio.ensure_future(http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "slow"}))
        await model_called(http, session_id)
        body = {"prompt": "hi", "if_busy": "enqueue", "background": True}
        assert (await http.post(f"/v1/sessions/{session_id}/runs", json=body)).status_code == 202
        full = await http.post(f"/v1/sessions/{session_id}/runs", json=body)
        assert (full.status_code, full.json()["error"]) == (409, "busy")
        assert "queue of runs is full" in full.json()["message"]
        await running


async def test_interrupt_cancels_the_current_run_and_starts_at_once(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    running = asyncio.ensure_future(client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "slow"}))
    await model_called(client, session_id)
    answer = await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "now", "if_busy": "interrupt"},
                               headers=SSE)
    assert answer.status_code == 200
    texts = [frame.json.get("parts", [{}])[0].get("text") for frame in sse_frames_of(answer.text)]
    assert "You said: now" in texts
    assert (await running).json()["stop_reason"] == "cancelled"
    prompts = [e["parts"][0]["text"] for e in await full_log(client, session_id) if e.get("role") == "user"]
    assert prompts == ["slow", "now"]


def sse_frames_of(text: str) -> list[Frame]:
    """The frames of a whole SSE answer's text."""
    frames = []
    for raw in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in raw.splitlines() if ": " in line)
        if "data" in fields:
            frames.append(Frame(fields.get("id"), fields.get("event"), fields["data"]))
    return frames


async def test_rollback_leaves_the_cancelled_run_out_of_what_the_model_sees(
    make_server: Callable[..., LiveServer], store: SessionStore
) -> None:
    seen: list[list[str]] = []

    async def recording(request: ModelRequest) -> ModelResponse:
        seen.append([m.text for m in request.messages if m.role == "user"])
        return await script(request)

    server = make_server(agent=make_agent(store, recording))
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        session_id = await new_session(http)
        await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "first"})
        running = asyncio.ensure_future(http.post(f"/v1/sessions/{session_id}/runs",
                                                  json={"prompt": "slow", "background": True}))
        slow_id = (await running).json()["run_id"]
        await model_called_twice(http, session_id)
        answer = await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "again", "if_busy": "rollback"})
        assert answer.status_code == 200, answer.text
        slow = await ended(http, slow_id)
        log = await full_log(http, session_id)
    assert seen[-1] == ["first", "again"], "the model never sees the rolled-back run"
    assert (slow["state"], slow["rolled_back"]) == ("cancelled", True)
    marked = [e for e in log if e["metadata"].get("rolled_back") and not e["metadata"].get("run_queued")]
    assert marked
    assert all(e["metadata"].get("run_id") == slow_id for e in marked), "only its events, kept, marked"
    prompt_view = [e.text for e in await store.events(session_id, view="prompt")]
    assert prompt_view == ["first", "You said: first", "again", "You said: again"]


async def model_called_twice(http: httpx.AsyncClient, session_id: str) -> None:
    async def twice() -> bool:
        log = await full_log(http, session_id)
        texts = [e["parts"][0]["text"] for e in log if e["kind"] == "status" and e["parts"]]
        return texts.count("turn 1: calling model") >= 2

    await await_until(twice, "the second run called its model")


async def test_sse_of_a_background_run_is_refused_nothing_it_answers_202(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    answer = await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hi", "background": True},
                               headers=SSE)
    assert answer.status_code == 202
    await ended(client, answer.json()["run_id"])


async def test_an_unknown_if_busy_is_422(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    answer = await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hi", "if_busy": "wait"})
    assert answer.status_code == 422
    assert "reject" in answer.text

