"""The inspector's routes (titles and search, timelines, model calls, forks) and the notes the server logs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from hookline import RunContext, State, hook
from hookline._run.status import model_line
from hookline.events import Event
from hookline.messages import Message
from hookline.models import ModelResponse
from hookline.server.forking import fork_session
from hookline.server.inspect_schemas import ForkBody
from hookline.server.inspection import CallEvents
from hookline.sessions import SessionStore
from hookline.usage import Usage
from support.counting_store import CountingStore
from support.waiting import await_until

from .agent import DANGER_LOG, make_agent
from .api import new_session
from .live import LiveServer

pytestmark = pytest.mark.anyio

Json = Any


async def run(http: httpx.AsyncClient, session_id: str, prompt: str) -> Json:
    response = await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": prompt})
    return response.json()


async def log(http: httpx.AsyncClient, session_id: str) -> list[Json]:
    response = await http.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})
    assert response.status_code == 200, response.text
    events: list[Json] = response.json()
    return events


@pytest.fixture
async def alice(auth_server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=auth_server.url, timeout=10,
                                 headers={"Authorization": "Bearer tok-alice"}) as http:
        yield http


@pytest.fixture
async def bob(auth_server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=auth_server.url, timeout=10,
                                 headers={"Authorization": "Bearer tok-bob"}) as http:
        yield http


# -- titles and search ---------------------------------------------------------------------------


async def test_session_titles_are_first_prompts_and_search_reads_messages(client: httpx.AsyncClient) -> None:
    first = await new_session(client)
    await run(client, first, "add two numbers please\nsecond line")
    second = await new_session(client)
    await run(client, second, "hello there")
    empty = await new_session(client)
    listed = (await client.get("/v1/inspect/sessions")).json()
    assert [(s["id"], s["title"]) for s in listed] == [
        (empty, ""), (second, "hello there"), (first, "add two numbers please")]
    found = (await client.get("/v1/inspect/sessions", params={"q": "THE TOOL SAID: 5"})).json()
    assert [s["id"] for s in found] == [first], "search reads answers too, case-insensitively"
    assert [s["id"] for s in (await client.get("/v1/inspect/sessions", params={"q": "hello"})).json()] == [second]
    too_long = await client.get("/v1/inspect/sessions", params={"q": "x" * 201})
    assert too_long.status_code == 422
    assert too_long.json()["error"] == "invalid_request"


async def test_a_recreated_session_gets_its_new_title(client: httpx.AsyncClient) -> None:
    await client.post("/v1/sessions", json={"id": "again"})
    await run(client, "again", "the first life")
    assert (await client.get("/v1/inspect/sessions")).json()[0]["title"] == "the first life"
    assert (await client.delete("/v1/sessions/again")).status_code == 204
    await client.post("/v1/sessions", json={"id": "again"})
    await run(client, "again", "the second life")
    assert (await client.get("/v1/inspect/sessions")).json()[0]["title"] == "the second life"


async def test_users_see_only_their_own_sessions_everywhere(alice: httpx.AsyncClient, bob: httpx.AsyncClient) -> None:
    session_id = await new_session(alice)
    await run(alice, session_id, "add 2 and 3")
    assert (await bob.get("/v1/inspect/sessions")).json() == []
    assert [s["id"] for s in (await alice.get("/v1/inspect/sessions")).json()] == [session_id]
    for path in ("timeline", "model-calls/1"):
        response = await bob.get(f"/v1/sessions/{session_id}/{path}")
        assert response.status_code == 404, path
        assert response.json()["error"] == "not_found"
    forked = await bob.post(f"/v1/sessions/{session_id}/fork", json={"at_seq": 1, "text": "mine now"})
    assert forked.status_code == 404
    anonymous = await alice.get("/v1/inspect/sessions", headers={"Authorization": ""})
    assert anonymous.status_code == 401


async def test_openapi_lists_the_inspector_routes(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    assert "get" in paths["/v1/inspect/sessions"]
    assert "get" in paths["/v1/sessions/{session_id}/timeline"]
    assert "get" in paths["/v1/sessions/{session_id}/model-calls/{seq}"]
    assert "post" in paths["/v1/sessions/{session_id}/fork"]


# -- timelines -----------------------------------------------------------------------------------


async def test_timeline_of_a_tool_run(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    await run(client, session_id, "add 2 and 3")
    await run(client, session_id, "hello")
    runs = (await client.get(f"/v1/sessions/{session_id}/timeline")).json()["runs"]
    assert [(r["title"], r["outcome"]) for r in runs] == [("add 2 and 3", "completed"), ("hello", "completed")]
    spans = runs[0]["spans"]
    assert [(s["kind"], s["name"]) for s in spans] == [("model", "scripted"), ("tool", "add"), ("model", "scripted")]
    tool = spans[1]
    assert tool["ran"] is True
    assert tool["is_error"] is False
    assert tool["duration_ms"] >= 0
    assert spans[0]["end_seq"] > spans[0]["seq"]
    assert all(s["duration_ms"] is not None and s["tokens"] == 0 for s in spans if s["kind"] == "model")
    assert runs[0]["started_at"] <= runs[0]["ended_at"] <= runs[1]["started_at"]


async def test_timeline_says_why_a_run_failed(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    assert (await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "fail"})).status_code == 502

    async def noted() -> bool:
        return (await log(client, session_id))[-1]["metadata"].get("error") is not None

    await await_until(noted, "the reason of the failure is in the log")
    events = await log(client, session_id)
    assert events[-1]["parts"][0]["text"] == "run failed"
    assert events[-1]["metadata"]["error"]["message"] == "the provider is down"
    assert events[-1]["metadata"]["error"]["status_code"] == 503
    (failed,) = (await client.get(f"/v1/sessions/{session_id}/timeline")).json()["runs"]
    assert failed["outcome"] == "failed"
    assert failed["error"] == "the provider is down"
    (call,) = [s for s in failed["spans"] if s["kind"] == "model"]
    detail = (await client.get(f"/v1/sessions/{session_id}/model-calls/{call['seq']}")).json()
    assert detail["response"] is None
    assert detail["error"] == "the provider is down"


def test_the_model_status_line_is_read_from_its_data_and_an_old_logs_from_its_text() -> None:
    response, seconds = ModelResponse(text="hi", usage=Usage(input_tokens=30, output_tokens=12)), 0.4567
    line, facts = model_line("gpt-x", response, seconds, None, None)
    answer = Event.status("a", "llm", "gpt-x is done", model_call=facts)
    assert CallEvents(answer=answer).reported == ("gpt-x", 42, 456.7)
    assert CallEvents(answer=Event.status("a", "llm", line)).reported == ("gpt-x", 42, 457), "a log of before"


@hook
def says_like_the_loop(state: State, ctx: RunContext[None]) -> None:
    ctx.status(f"turn {state.turn}: calling model")


async def test_a_hooks_line_that_reads_like_the_loops_is_no_model_call(make_server: Callable[..., LiveServer],
                                                                         store: SessionStore) -> None:
    agent = make_agent(store).clone(hooks={"before_llm": [says_like_the_loop]})
    async with httpx.AsyncClient(base_url=make_server(agent).url, timeout=10) as http:
        session_id = await new_session(http)
        await run(http, session_id, "add 2 and 3")
        (timeline,) = (await http.get(f"/v1/sessions/{session_id}/timeline")).json()["runs"]
        events = await log(http, session_id)
        hooks_line = next(e for e in events if e["metadata"].get("hook") == "says_like_the_loop")
        picked = await http.get(f"/v1/sessions/{session_id}/model-calls/{hooks_line['seq']}")
    assert [s["kind"] for s in timeline["spans"]] == ["model", "tool", "model"]
    assert picked.status_code == 422


# -- model calls ---------------------------------------------------------------------------------


async def test_model_call_rebuilds_the_request_and_shows_the_answer(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    await run(client, session_id, "add 2 and 3")
    events = await log(client, session_id)
    answer = next(e for e in reversed(events) if e["role"] == "assistant")
    detail = (await client.get(f"/v1/sessions/{session_id}/model-calls/{answer['seq']}")).json()
    assert detail["turn"] == 2
    assert answer["seq"] in detail["seqs"]
    assert [m["role"] for m in detail["request"]["messages"]] == ["user", "assistant", "tool"]
    assert detail["request"]["messages"][2]["parts"][0]["content"] == "5"
    assert {t["name"] for t in detail["request"]["tools"]} == {"add", "danger"}
    assert detail["request"]["model"] == "scripted"
    assert detail["request"]["provider"] == "function"
    assert detail["response"]["parts"][0]["text"] == "The tool said: 5."
    assert detail["tokens"] == 0
    assert detail["duration_ms"] is not None
    assert detail["notes"], "it says what it cannot know"
    by_start = (await client.get(f"/v1/sessions/{session_id}/model-calls/{detail['seqs'][0]}")).json()
    assert by_start == detail


async def test_model_call_refuses_other_events(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    await run(client, session_id, "hello")
    not_a_call = await client.get(f"/v1/sessions/{session_id}/model-calls/1")
    assert not_a_call.status_code == 422
    assert not_a_call.json()["error"] == "not_a_model_call"
    missing = await client.get(f"/v1/sessions/{session_id}/model-calls/999")
    assert missing.status_code == 404
    assert "no event 999" in missing.json()["message"]
    for bad in ("0", "-1", "x"):
        assert (await client.get(f"/v1/sessions/{session_id}/model-calls/{bad}")).status_code == 422


# -- forks ---------------------------------------------------------------------------------------


async def test_fork_at_a_user_message_reruns_from_there(client: httpx.AsyncClient) -> None:
    source = await new_session(client)
    await run(client, source, "hello one")
    await run(client, source, "hello two")
    before = await log(client, source)
    second_prompt = [e for e in before if e["role"] == "user"][1]
    response = await client.post(f"/v1/sessions/{source}/fork",
                                 json={"at_seq": second_prompt["seq"], "text": "hello fork", "id": "forked"})
    assert response.status_code == 201, response.text
    assert response.json()["id"] == "forked"
    assert response.headers["location"] == "/v1/sessions/forked"
    resumed = await client.post("/v1/sessions/forked/resume", json={"approvals": {}})
    assert resumed.json()["output"] == "You said: hello fork"
    forked = await log(client, "forked")
    assert [e["parts"][0]["text"] for e in forked if e["role"] in ("user", "assistant")] == [
        "hello one", "You said: hello one", "hello fork", "You said: hello fork"]
    copied = forked[0]["metadata"]["copied_from"]
    assert copied["session_id"] == source
    assert copied["seq"] == 1
    assert copied["created_at"].startswith(before[0]["created_at"][:19])
    note = next(e for e in forked if "forked_from" in e["metadata"])
    assert note["metadata"]["forked_from"] == {"session_id": source, "seq": second_prompt["seq"], "user": "default"}
    assert await log(client, source) == before, "the source session is left as it was"
    titles = {s["id"]: s["title"] for s in (await client.get("/v1/inspect/sessions")).json()}
    assert titles["forked"] == "hello one"


async def test_fork_at_a_tool_result_edits_what_the_model_reads(client: httpx.AsyncClient) -> None:
    source = await new_session(client)
    await run(client, source, "add 2 and 3")
    result = next(e for e in await log(client, source) if e["role"] == "tool")
    response = await client.post(f"/v1/sessions/{source}/fork", json={"at_seq": result["seq"], "content": "42"})
    assert response.status_code == 201, response.text
    fork_id = response.json()["id"]
    resumed = (await client.post(f"/v1/sessions/{fork_id}/resume", json={"approvals": {}})).json()
    assert resumed["output"] == "The tool said: 42."
    texts = [e["parts"][0]["text"] for e in await log(client, fork_id) if e["kind"] == "status"]
    assert "add returned 5" not in texts, "the edited result's old status line is not copied"
    assert any(t.startswith(f"forked from session {source} at event {result['seq']}") for t in texts)


async def test_a_fork_reads_only_the_log_it_copies(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "long.db")
    try:
        source = await store.create(session_id="long")
        await store.append_events(source.id, [Event.from_message(Message.user("q"), "user"),
                                               Event.from_message(Message.assistant("a"), "assistant")])
        await store.append_events(source.id, [Event.status("assistant", "agent", f"line {i}") for i in range(3000)])
        store.read = 0
        fork = await fork_session(store, source, ForkBody(at_seq=2), "default")
        edited = await fork_session(store, source, ForkBody(at_seq=1, text="q2"), "default")
        assert store.read <= 3, "the two events before the forks' events, not the 3,000 lines after them"
        assert [e.text for e in await store.events(fork.id) if e.kind == "message"] == ["q"]
        assert [e.text for e in await store.events(edited.id) if e.kind == "message"] == ["q2"]
    finally:
        await store.aclose()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"at_seq": 1, "text": "a", "content": "b"}, "at most one of `text`"),
        ({"at_seq": 1, "text": "   "}, "blank"),
        ({"at_seq": 0, "text": "a"}, "greater than or equal to 1"),
        ({"at_seq": 1, "text": "a", "id": "bad id"}, "invalid session id"),
        ({"at_seq": 1, "text": "a", "extra": 1}, "extra"),
    ],
)
async def test_fork_rejects_bad_bodies(client: httpx.AsyncClient, body: Json, message: str) -> None:
    source = await new_session(client)
    response = await client.post(f"/v1/sessions/{source}/fork", json=body)
    assert response.status_code == 422, response.text
    assert message.lower() in response.json()["message"].lower()


async def test_fork_refuses_what_the_log_cannot_give(client: httpx.AsyncClient) -> None:
    source = await new_session(client)
    await run(client, source, "add 2 and 3")
    events = await log(client, source)
    status = next(e for e in events if e["kind"] == "status")
    result = next(e for e in events if e["role"] == "tool")
    cases = [
        ({"at_seq": status["seq"], "text": "x"}, "is a status event"),
        ({"at_seq": 999, "text": "x"}, "has no event 999"),
        ({"at_seq": result["seq"], "text": "x"}, "send its new `content`"),
        ({"at_seq": 1, "content": "x"}, "send its new `text`"),
        ({"at_seq": result["seq"], "content": "x", "call_id": "nope"}, "holds no result of call 'nope'"),
    ]
    for body, message in cases:
        response = await client.post(f"/v1/sessions/{source}/fork", json=body)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["error"] == "invalid_fork"
        assert message in response.json()["message"]
    taken = await client.post(f"/v1/sessions/{source}/fork", json={"at_seq": 1, "text": "x", "id": source})
    assert taken.status_code == 409
    assert len((await client.get("/v1/sessions")).json()) == 1, "no fork was left behind"


# -- the approval audit --------------------------------------------------------------------------


async def paused(http: httpx.AsyncClient) -> tuple[str, str]:
    session_id = await new_session(http)
    result = await run(http, session_id, "danger")
    return session_id, result["interruptions"][0]["call_id"]


async def test_approvals_are_logged_with_the_user_and_the_time(alice: httpx.AsyncClient) -> None:
    DANGER_LOG.clear()
    session_id, call_id = await paused(alice)
    resumed = await alice.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {call_id: True}})
    assert resumed.json()["stop_reason"] == "completed"
    events = await log(alice, session_id)
    (line,) = [e for e in events if "approval" in e["metadata"]]
    assert line["parts"][0]["text"] == "alice approved danger(target='prod')"
    assert line["metadata"]["approval"] == {"call_id": call_id, "name": "danger", "decision": "approved",
                                            "reason": "", "user": "alice"}
    assert line["created_at"]
    running = next(e for e in events if e["metadata"].get("started"))
    assert line["seq"] < running["seq"], "the decision is on record before the call runs"
    again = await alice.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {call_id: True}})
    assert again.status_code == 409, again.text
    assert len([e for e in await log(alice, session_id) if "approval" in e["metadata"]]) == 1
    assert DANGER_LOG == ["prod"]


async def test_denials_are_logged_with_their_reason(client: httpx.AsyncClient) -> None:
    session_id, call_id = await paused(client)
    await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {call_id: "too risky"}})
    (line,) = [e for e in await log(client, session_id) if "approval" in e["metadata"]]
    assert line["parts"][0]["text"] == "default denied danger(target='prod'): too risky"
    assert line["metadata"]["approval"]["decision"] == "denied"
    assert line["metadata"]["approval"]["reason"] == "too risky"


async def test_refused_approvals_record_nothing(client: httpx.AsyncClient) -> None:
    session_id, call_id = await paused(client)
    before = await log(client, session_id)
    unknown = await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {call_id: True, "x": True}})
    assert unknown.status_code == 422
    assert await log(client, session_id) == before
