"""The state at an event (`GET /v1/sessions/{id}/state?at_seq=N`) and forks made there, on a real server and store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from hookline import Agent, State, StatusOptions, hook
from hookline.events import Event
from hookline.server.recorded_state import SCAN
from hookline.sessions import SessionStore

from .agent import WordStreamingModel, add, script
from .api import new_session
from .live import LiveServer

pytestmark = pytest.mark.anyio

Json = Any


@hook
def count_model_calls(state: State) -> None:
    state.data["calls"] = state.data.get("calls", 0) + 1


def recording(store: SessionStore) -> Agent:
    """The scripted agent, counting its model calls in `state.data`, its state on record."""
    return Agent("assistant", model=WordStreamingModel(script, name="scripted"), tools=[add],
                 hooks={"before_llm": [count_model_calls]}, session_store=store, status=StatusOptions(state=True))


@pytest.fixture
async def http(make_server: Callable[..., LiveServer], store: SessionStore) -> AsyncIterator[httpx.AsyncClient]:
    server = make_server(recording(store))
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
        yield client


async def run(http: httpx.AsyncClient, session_id: str, prompt: str) -> None:
    response = await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": prompt})
    assert response.status_code == 200, response.text


async def log(http: httpx.AsyncClient, session_id: str) -> list[Json]:
    events: list[Json] = (await http.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})).json()
    return events


async def state_at(http: httpx.AsyncClient, session_id: str, seq: int) -> Json:
    response = await http.get(f"/v1/sessions/{session_id}/state", params={"at_seq": seq})
    assert response.status_code == 200, response.text
    return response.json()


async def test_the_state_at_an_event_is_the_one_recorded_last_before_it(http: httpx.AsyncClient) -> None:
    session_id = await new_session(http)
    await run(http, session_id, "add them")  # two model calls: the tool call, then the answer
    events = await log(http, session_id)
    result = next(e["seq"] for e in events if e["role"] == "tool")
    end = events[-1]["seq"]  # "run completed"

    first = await state_at(http, session_id, 1)
    assert (first["state"], first["recorded_seq"], first["previous"]) == ({}, 1, None), "as the run found it"
    after_one = await state_at(http, session_id, result)
    assert (after_one["state"], after_one["previous"]) == ({"calls": 1}, {})
    after_two = await state_at(http, session_id, end)
    assert (after_two["state"], after_two["previous"]) == ({"calls": 2}, {"calls": 1})
    assert after_two["recorded_seq"] < end
    assert after_two["at_seq"] == end
    saved = (await http.get(f"/v1/sessions/{session_id}/state")).json()
    assert saved == {"session_id": session_id, "state": {"calls": 2}}


async def test_a_fork_starts_from_the_state_recorded_before_its_event(http: httpx.AsyncClient) -> None:
    session_id = await new_session(http)
    await run(http, session_id, "add them")
    events = await log(http, session_id)
    call = next(e["seq"] for e in events if e["role"] == "assistant")
    first_answer = [e["seq"] for e in events if e["role"] == "assistant"][-1]
    await run(http, session_id, "add them again")  # the session's state is now {"calls": 4}
    forks = [await http.post(f"/v1/sessions/{session_id}/fork", json={"at_seq": seq}) for seq in (call, first_answer)]
    assert [f.status_code for f in forks] == [201, 201], forks[0].text
    assert [f.json()["state"] for f in forks] == [{"calls": 1}, {"calls": 2}], "as recorded before each model call"
    asked = await http.post(f"/v1/sessions/{session_id}/fork", json={"at_seq": first_answer, "state": {"x": 1}})
    assert asked.json()["state"] == {"x": 1}, "the state a fork asks for wins"


async def test_a_session_whose_runs_did_not_record_their_state_says_so(
    make_server: Callable[..., LiveServer], store: SessionStore
) -> None:
    server = make_server()  # the scripted agent: StatusOptions() records no state
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        session_id = await new_session(http)
        await run(http, session_id, "add them")
        response = await http.get(f"/v1/sessions/{session_id}/state", params={"at_seq": 2})
        assert response.status_code == 422
        assert response.json()["error"] == "state_not_recorded"
        assert "StatusOptions(state=True)" in response.json()["message"]
        fork = await http.post(f"/v1/sessions/{session_id}/fork", json={"at_seq": 2})
        assert fork.json()["state"] == {}, "without a record: the session's state now"
        bad = await http.get(f"/v1/sessions/{session_id}/state", params={"at_seq": 0})
        assert bad.status_code == 422
        assert bad.json()["error"] == "invalid_request"


async def test_the_search_back_for_a_state_is_bounded(http: httpx.AsyncClient, store: SessionStore) -> None:
    session_id = await new_session(http)
    await run(http, session_id, "hello")

    await store.append_events(session_id, [Event.status("assistant", "agent", f"line {i}") for i in range(SCAN)])
    last = (await store.page(session_id, limit=1, newest=True))[0].seq or 0
    response = await http.get(f"/v1/sessions/{session_id}/state", params={"at_seq": last})
    assert response.status_code == 422, "the run's record lies more than SCAN events back: not read"
    near = await state_at(http, session_id, last - SCAN + 1)
    assert near["state"] == {"calls": 1}
