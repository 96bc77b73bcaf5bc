"""The inspector's routes the live page added: session status and snippets in the list, one session's line,
its state alone, the agent's tools, one trace per prompt, forks at any event with the state edited."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hookline import Agent, Prices, State, StatusOptions, ToolCallPart, hook
from hookline.models import ModelRequest, ModelResponse
from hookline.sessions import SessionStore
from hookline.usage import Usage
from support.waiting import DEADLINE, await_until

from .agent import DANGER_LOG, WordStreamingModel, add
from .api import new_session
from .live import LiveServer

pytestmark = pytest.mark.anyio

Json = Any


async def run(http: httpx.AsyncClient, session_id: str, prompt: str) -> Json:
    return (await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": prompt})).json()


async def summary(http: httpx.AsyncClient, session_id: str) -> Json:
    response = await http.get(f"/v1/inspect/sessions/{session_id}")
    assert response.status_code == 200, response.text
    return response.json()


async def test_a_sessions_line_says_whether_it_runs_waits_or_failed(server: LiveServer,
                                                                    client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    line = await summary(client, session_id)
    assert {k: line[k] for k in ("title", "running", "waiting", "last_run", "snippet", "forked_from")} == {
        "title": "", "running": False, "waiting": 0, "last_run": None, "snippet": None, "forked_from": None}
    slow = threading.Thread(target=httpx.post, args=(f"{server.url}/v1/sessions/{session_id}/runs",),
                            kwargs={"json": {"prompt": "slow one"}, "timeout": DEADLINE})
    slow.start()
    try:
        await await_until(lambda: _running(client, session_id), "a run holds the session")
    finally:
        slow.join(DEADLINE)
    line = await summary(client, session_id)
    assert (line["running"], line["last_run"], line["title"]) == (False, "completed", "slow one")
    await run(client, session_id, "fail now")
    assert (await summary(client, session_id))["last_run"] == "failed"
    await run(client, session_id, "danger zone")
    line = await summary(client, session_id)
    assert (line["last_run"], line["waiting"]) == ("interrupted", 1)
    listed = (await client.get("/v1/inspect/sessions")).json()
    assert [(s["id"], s["waiting"], s["last_run"]) for s in listed] == [(session_id, 1, "interrupted")]


async def _running(client: httpx.AsyncClient, session_id: str) -> bool:
    return bool((await summary(client, session_id))["running"])


async def test_a_search_answers_where_each_session_matches(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    await run(client, session_id, "hello there")
    await run(client, session_id, "the quick brown fox jumps over the lazy dog and then a banana falls off the tree")
    (found,) = (await client.get("/v1/inspect/sessions", params={"q": "BANANA"})).json()
    assert found["id"] == session_id
    assert "banana falls" in found["snippet"]
    assert found["snippet"].startswith("…"), "cut before: the match is far into its message"
    assert len(found["snippet"]) < 100


async def test_state_tools_and_a_missing_session(client: httpx.AsyncClient) -> None:
    created = (await client.post("/v1/sessions", json={"state": {"plan": [1, 2]}})).json()
    state = await client.get(f"/v1/sessions/{created['id']}/state")
    assert state.json() == {"session_id": created["id"], "state": {"plan": [1, 2]}}
    tools = (await client.get("/v1/inspect/tools")).json()
    assert {t["name"] for t in tools} == {"add", "danger"}
    danger = next(t for t in tools if t["name"] == "danger")
    assert danger["parameters"]["properties"]["target"]["type"] == "string"
    for path in ("/v1/sessions/nope/state", "/v1/inspect/sessions/nope", "/v1/sessions/nope/traces"):
        response = await client.get(path)
        assert (response.status_code, response.json()["error"]) == (404, "not_found"), path


async def test_one_trace_per_prompt_across_the_resume_of_its_approval(client: httpx.AsyncClient) -> None:
    DANGER_LOG.clear()
    session_id = await new_session(client)
    await run(client, session_id, "hello")
    paused = await run(client, session_id, "danger zone")
    call_id = paused["interruptions"][0]["call_id"]
    await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {call_id: True}})
    traces = (await client.get(f"/v1/sessions/{session_id}/traces")).json()
    first, second = traces["prompts"]
    assert (first["title"], first["outcome"], [s["kind"] for s in first["spans"]]) == ("hello", "completed",
                                                                                         ["run", "model"])
    assert second["title"] == "danger zone"
    assert second["outcome"] == "completed"
    assert [(s["kind"], s["name"], s["depth"]) for s in second["spans"]] == [
        ("run", "run", 0), ("model", "scripted", 1), ("approval", "danger", 0),
        ("run", "resume", 0), ("tool", "danger", 1), ("model", "scripted", 1)]
    wait = second["spans"][2]
    assert (wait["call_id"], wait["outcome"], wait["is_error"]) == (call_id, "default approved", False)
    assert wait["duration_ms"] >= 0
    assert second["waited_ms"] == wait["duration_ms"]
    assert second["spans"][0]["outcome"] == "interrupted"


async def test_a_fork_at_any_event_regenerates_from_there_with_the_state_asked_for(client: httpx.AsyncClient) -> None:
    source = (await client.post("/v1/sessions", json={"state": {"mood": "calm"}})).json()["id"]
    await run(client, source, "hello one")
    events = (await client.get(f"/v1/sessions/{source}/events", params={"view": "all"})).json()
    answer = next(e for e in events if e["role"] == "assistant")
    response = await client.post(f"/v1/sessions/{source}/fork", json={"at_seq": answer["seq"], "state": {"mood": "x"}})
    assert response.status_code == 201, response.text
    fork = response.json()["id"]
    assert (await client.get(f"/v1/sessions/{fork}/state")).json()["state"] == {"mood": "x"}
    resumed = (await client.post(f"/v1/sessions/{fork}/resume", json={"approvals": {}})).json()
    assert resumed["output"] == "You said: hello one"
    forked = (await client.get(f"/v1/sessions/{fork}/events", params={"view": "all"})).json()
    note = next(e for e in forked if "forked_from" in e["metadata"])
    assert note["metadata"]["forked_from"] == {"session_id": source, "seq": answer["seq"], "user": "default",
                                               "edited": False, "state_edited": True}
    assert note["parts"][0]["text"] == (f"forked from session {source} before event {answer['seq']} by default, "
                                        "with its state edited")
    assert [e["parts"][0]["text"] for e in forked if e["role"] == "assistant"] == ["You said: hello one"]
    assert (await summary(client, fork))["forked_from"] == source
    assert (await summary(client, source))["forked_from"] is None
    assert (await client.get(f"/v1/sessions/{source}/state")).json()["state"] == {"mood": "calm"}


@pytest.mark.parametrize(("seq", "message"), [(1, "nothing comes before event 1"), (99, "has no event 99")])
async def test_a_fork_with_nothing_before_it_or_at_no_event_says_why(client: httpx.AsyncClient, seq: int,
                                                                     message: str) -> None:
    source = await new_session(client)
    await run(client, source, "hello one")
    response = await client.post(f"/v1/sessions/{source}/fork", json={"at_seq": seq})
    assert (response.status_code, response.json()["error"]) == (422, "invalid_fork")
    assert message in response.json()["message"]


# -- the exact model request, and a call's facts as data ----------------------------------------------


def _windowed(state: State) -> None:
    """A sliding window of one message: the model sees only the last one (the log keeps them all)."""
    if state.messages and state.messages[-1].role == "user":
        state.messages = [state.messages[-1]]


async def test_a_recorded_request_is_the_one_the_provider_got(make_server: Callable[..., LiveServer],
                                                             store: SessionStore) -> None:
    got: list[ModelRequest] = []

    async def answer(request: ModelRequest) -> ModelResponse:
        got.append(request)
        return ModelResponse(text="fine", usage=Usage(input_tokens=30, output_tokens=4))

    agent = Agent("assistant", model=WordStreamingModel(answer, name="scripted"), session_store=store,
                  instructions=lambda state: f"You are on turn {state.turn}.", hooks={"before_llm": [hook(_windowed)]},
                  status=StatusOptions(requests=True))
    server = make_server(agent)
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        session_id = await new_session(http)
        await run(http, session_id, "first question")
        await run(http, session_id, "second question")
        events = (await http.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})).json()
        answers = [e for e in events if e["kind"] == "status" and e["source"] == "llm"]
        facts = answers[-1]["metadata"]["model_call"]
        assert (facts["input_tokens"], facts["output_tokens"]) == (30, 4)
        assert facts["duration_ms"] >= facts["ttft_ms"] >= 0, "streamed: a first token came before the end"
        call = (await http.get(f"/v1/sessions/{session_id}/model-calls/{answers[-1]['seq']}")).json()
    assert call["exact"] is True
    assert (call["input_tokens"], call["output_tokens"], call["ttft_ms"]) == (30, 4, facts["ttft_ms"])
    sent = [[p.get("text") for p in m["parts"]] for m in call["request"]["messages"]]
    assert sent == [[m.text] for m in got[-1].messages] == [["You are on turn 1."], ["second question"]], (
        "the instructions made by a function and the window a hook cut: as the provider got them")
    assert "recorded by the run" in call["notes"][0]


async def test_without_the_switch_no_request_is_recorded(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    await run(client, session_id, "hello")
    events = (await client.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})).json()
    answer = next(e for e in events if e["kind"] == "status" and e["source"] == "llm")
    assert "request" not in answer["metadata"]
    assert set(answer["metadata"]["model_call"]) == {"model", "input_tokens", "output_tokens", "duration_ms", "ttft_ms"}
    call = (await client.get(f"/v1/sessions/{session_id}/model-calls/{answer['seq']}")).json()
    assert call["exact"] is False


async def test_a_model_with_prices_records_each_calls_cost_and_the_trace_adds_them_up(
    make_server: Callable[..., LiveServer], store: SessionStore
) -> None:
    async def answer(request: ModelRequest) -> ModelResponse:
        if request.messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCallPart(id="c1", name="add", arguments={"a": 2, "b": 3})],
                                 usage=Usage(input_tokens=1000, output_tokens=200))
        return ModelResponse(text="5", usage=Usage(input_tokens=3000, output_tokens=100))

    model = WordStreamingModel(answer, name="priced")
    model.prices = Prices(input_per_mtok=2.5, output_per_mtok=10)
    server = make_server(Agent("assistant", model=model, tools=[add], session_store=store))
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        session_id = await new_session(http)
        await run(http, session_id, "add 2 and 3")
        events = (await http.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})).json()
        first, second = [e for e in events if e["kind"] == "status" and e["source"] == "llm"]
        call = (await http.get(f"/v1/sessions/{session_id}/model-calls/{first['seq']}")).json()
        (prompt,) = (await http.get(f"/v1/sessions/{session_id}/traces")).json()["prompts"]
    facts = first["metadata"]["model_call"]
    assert (facts["cost"], facts["currency"]) == (0.0045, "USD"), "1,000 in at 2.5 + 200 out at 10, per million"
    assert second["metadata"]["model_call"]["cost"] == 0.0085
    assert (call["cost"], call["currency"]) == (0.0045, "USD")
    assert [s["cost"] for s in prompt["spans"] if s["kind"] == "model"] == [0.0045, 0.0085]
    assert (prompt["cost"], prompt["currency"]) == (0.013, "USD")
