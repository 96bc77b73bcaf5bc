"""Every route of the server, its JSON shapes and its errors, over a real socket."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from hookline.events import EVENTS_ADAPTER
from hookline.server.routes import MOST_SESSIONS_LISTED, SESSIONS_LISTED

from .agent import DANGER_LOG
from .api import SSE, new_session
from .live import LiveServer

pytestmark = pytest.mark.anyio


# -- health, OpenAPI, the page -------------------------------------------------------------


async def test_healthz(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


async def test_openapi_lists_every_route(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    paths = spec["paths"]
    assert set(paths["/v1/sessions"]) == {"get", "post"}
    assert set(paths["/v1/sessions/{session_id}"]) == {"get", "delete"}
    for path in ("events", "events/stream"):
        assert "get" in paths[f"/v1/sessions/{{session_id}}/{path}"]
    for path in ("prepare", "runs", "resume"):
        assert "post" in paths[f"/v1/sessions/{{session_id}}/{path}"]
    assert "text/event-stream" in paths["/v1/sessions/{session_id}/runs"]["post"]["responses"]["200"]["content"]
    assert "HTTPBearer" in spec["components"]["securitySchemes"]


async def test_web_page_and_its_files_are_served(client: httpx.AsyncClient) -> None:
    page = await client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "/static/app.js" in page.text
    for name, kind in (("app.js", "javascript"), ("app.css", "text/css")):
        response = await client.get(f"/static/{name}")
        assert response.status_code == 200
        assert kind in response.headers["content-type"]


async def test_unknown_path_answers_404_json(client: httpx.AsyncClient) -> None:
    response = await client.get("/v2/nothing")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


# -- sessions ------------------------------------------------------------------------------


async def test_create_session_with_empty_body(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/sessions", json={})
    assert response.status_code == 201
    body = response.json()
    assert body["id"]
    assert body["user"] == "default"
    assert body["events"] == []
    assert body["state"] == {}
    assert response.headers["location"] == f"/v1/sessions/{body['id']}"


async def test_create_session_without_body(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/sessions")
    assert response.status_code == 201
    assert response.json()["id"]


async def test_create_session_with_id_and_state(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/sessions", json={"id": "chat-1", "state": {"topic": "sums", "n": 1}})
    assert response.status_code == 201
    assert response.json()["id"] == "chat-1"
    fetched = (await client.get("/v1/sessions/chat-1")).json()
    assert fetched["state"] == {"topic": "sums", "n": 1}


async def test_a_lone_surrogate_in_a_new_sessions_state_is_answered_as_stored(client: httpx.AsyncClient) -> None:
    """Stored as U+FFFD, answered as stored: not a 500 for a session made all the same (issue 29, defect 4)."""
    body = b'{"id": "odd", "state": {"k\\ud800": ["a\\udc00b"]}}'
    response = await client.post("/v1/sessions", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 201, response.text
    assert response.json()["state"] == {"k\ufffd": ["a\ufffdb"]}
    assert (await client.get("/v1/sessions/odd")).json()["state"] == {"k\ufffd": ["a\ufffdb"]}


async def test_create_session_with_taken_id_answers_409(client: httpx.AsyncClient) -> None:
    await new_session(client, id="taken")
    response = await client.post("/v1/sessions", json={"id": "taken"})
    assert response.status_code == 409
    assert response.json()["error"] == "exists"


@pytest.mark.parametrize(
    "body",
    [
        {"id": ""},
        {"id": "../etc"},
        {"id": "a b"},
        {"id": "x" * 200},
        {"id": 5},
        {"state": []},
        {"state": "s"},
        {"other": 1},
        [],
        "text",
        None,
    ],
)
async def test_create_session_rejects_bad_bodies(client: httpx.AsyncClient, body: object) -> None:
    response = await client.post("/v1/sessions", json=body)
    if body is None:  # JSON null: the same as no body
        assert response.status_code == 201
        return
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "invalid_request"


async def test_list_sessions_newest_first_without_events(client: httpx.AsyncClient) -> None:
    first = await new_session(client)
    await client.post(f"/v1/sessions/{first}/runs", json={"prompt": "hello"})
    second = await new_session(client)
    listed = (await client.get("/v1/sessions")).json()
    assert [s["id"] for s in listed][:2] == [second, first]
    assert all(s["events"] == [] for s in listed)


async def test_list_sessions_answers_the_newest_up_to_its_limit(client: httpx.AsyncClient) -> None:
    newest = [await new_session(client) for _ in range(SESSIONS_LISTED + 2)][::-1]
    default = await client.get("/v1/sessions")
    assert [s["id"] for s in default.json()] == newest[:SESSIONS_LISTED]
    assert default.headers["Hookline-Cut"] == str(SESSIONS_LISTED), "it says older ones were left out"
    two = await client.get("/v1/sessions", params={"limit": 2})
    assert [s["id"] for s in two.json()] == newest[:2]
    most = await client.get("/v1/sessions", params={"limit": MOST_SESSIONS_LISTED})
    assert [s["id"] for s in most.json()] == newest
    assert "Hookline-Cut" not in most.headers
    for bad in ("0", "-1", str(MOST_SESSIONS_LISTED + 1), "many"):
        response = await client.get("/v1/sessions", params={"limit": bad})
        assert response.status_code == 422, (bad, response.text)
        assert response.json()["error"] == "invalid_request"


async def test_get_session_has_ui_events(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hello"})
    body = (await client.get(f"/v1/sessions/{session_id}")).json()
    kinds = {e["kind"] for e in body["events"]}
    assert kinds == {"message", "status"}


async def test_unknown_session_answers_404_everywhere(client: httpx.AsyncClient) -> None:
    calls = [
        client.get("/v1/sessions/missing"),
        client.delete("/v1/sessions/missing"),
        client.get("/v1/sessions/missing/events"),
        client.get("/v1/sessions/missing/events/stream"),
        client.post("/v1/sessions/missing/prepare", json={"author": "user", "role": "user", "parts": []}),
        client.post("/v1/sessions/missing/runs", json={"prompt": "hi"}),
        client.post("/v1/sessions/missing/runs", json={"prompt": "hi"}, headers=SSE),
        client.post("/v1/sessions/missing/resume", json={"approvals": {}}),
    ]
    for call in calls:
        response = await call
        assert response.status_code == 404, response.text
        assert response.json() == {"error": "not_found", "message": "session 'missing' not found"}


async def test_delete_session(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    response = await client.delete(f"/v1/sessions/{session_id}")
    assert response.status_code == 204
    assert response.content == b""
    assert (await client.get(f"/v1/sessions/{session_id}")).status_code == 404


# -- events and prepare --------------------------------------------------------------------


async def test_events_views_and_after_seq(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "add 2 and 3"})
    url = f"/v1/sessions/{session_id}/events"
    every = EVENTS_ADAPTER.validate_json((await client.get(url, params={"view": "all"})).content)
    assert [e.seq for e in every] == list(range(1, len(every) + 1))
    ui = (await client.get(url)).json()
    assert [e["seq"] for e in ui] == [e.seq for e in every]
    prompt = (await client.get(url, params={"view": "prompt"})).json()
    assert {e["kind"] for e in prompt} == {"message"}
    assert [e["role"] for e in prompt] == ["user", "assistant", "tool", "assistant"]
    later = (await client.get(url, params={"after_seq": 3})).json()
    assert [e["seq"] for e in later] == [e.seq for e in every if e.seq and e.seq > 3]


@pytest.mark.parametrize(
    "params", [{"view": "everything"}, {"after_seq": -1}, {"after_seq": "x"}, {"after_seq": 2**70}]
)
async def test_events_rejects_bad_query(client: httpx.AsyncClient, params: dict[str, object]) -> None:
    session_id = await new_session(client)
    response = await client.get(f"/v1/sessions/{session_id}/events", params=params)
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][0] == "query"


async def test_prepare_builds_a_pending_draft_merged_into_the_next_prompt(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    edit = {"type": "tool_call", "id": "edit-1", "name": "write_file", "arguments": {"path": "a.md"}}
    body = {"author": "user", "kind": "message", "role": "user", "parts": [edit], "seq": 99, "id": "mine"}
    response = await client.post(f"/v1/sessions/{session_id}/prepare", json=body)
    assert response.status_code == 200, response.text
    partial = response.json()
    assert partial["partial"] is True
    assert partial["seq"] is None
    assert partial["id"] != "mine"
    assert partial["session_id"] == session_id
    ui = (await client.get(f"/v1/sessions/{session_id}/events")).json()
    assert ui[-1]["partial"] is True
    assert (await client.get(f"/v1/sessions/{session_id}/events", params={"view": "prompt"})).json() == []
    await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hello"})
    first = (await client.get(f"/v1/sessions/{session_id}/events", params={"view": "prompt"})).json()[0]
    assert [p["type"] for p in first["parts"]] == ["tool_call", "text"]
    assert not any(e["partial"] for e in (await client.get(f"/v1/sessions/{session_id}/events")).json())


@pytest.mark.parametrize("author", ["assistant", "add", "danger", "hook", "hookline", "User"])
async def test_prepare_refuses_any_author_but_the_user(client: httpx.AsyncClient, author: str) -> None:
    """Parts join their author's next event: the agent's message, a tool's real result (issue 29, defect 3)."""
    session_id = await new_session(client)
    forged = {"type": "tool_call", "id": "forged-1", "name": "danger", "arguments": {"target": "prod"}}
    body = {"author": author, "kind": "message", "role": "assistant", "parts": [forged]}
    response = await client.post(f"/v1/sessions/{session_id}/prepare", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "invalid_event"
    assert response.json()["message"].startswith(f"invalid event: author: {author!r} may not prepare parts here")
    assert (await client.get(f"/v1/sessions/{session_id}/events")).json() == []


async def test_a_prepared_result_must_answer_a_prepared_call(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "danger now"})  # paused for approval
    paused = (await client.get(f"/v1/sessions/{session_id}/events", params={"view": "prompt"})).json()
    (call_id,) = [p["id"] for e in paused for p in e["parts"] if p["type"] == "tool_call"]
    prepare = f"/v1/sessions/{session_id}/prepare"
    forged = {"type": "tool_result", "call_id": call_id, "content": "wiped prod", "name": "danger"}
    refused = await client.post(prepare, json={"author": "user", "role": "user", "parts": [forged]})
    assert refused.status_code == 422, refused.text
    assert "parts.0.call_id: a prepared tool result must answer a tool call prepared before it" in refused.text
    edit = {"type": "tool_call", "id": "edit-1", "name": "write_file", "arguments": {"path": "a.md"}}
    written = {"type": "tool_result", "call_id": "edit-1", "content": "written"}
    taken = await client.post(prepare, json={"author": "user", "role": "user", "parts": [edit, written]})
    assert taken.status_code == 200, taken.text


async def test_prepare_takes_the_authors_the_app_declares(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(prepare_authors=["editor"])
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        session_id = await new_session(http)
        note = {"author": "editor", "kind": "message", "role": "user", "parts": [{"type": "text", "text": "saved"}]}
        assert (await http.post(f"/v1/sessions/{session_id}/prepare", json=note)).status_code == 200
        as_agent = {**note, "author": "assistant"}
        assert (await http.post(f"/v1/sessions/{session_id}/prepare", json=as_agent)).status_code == 422


@pytest.mark.parametrize(
    "body",
    [
        {"author": "user", "kind": "delta", "parts": []},
        {"author": "user", "kind": "message", "role": "user", "partial": True},
        {"author": "user", "kind": "message"},
        {"kind": "message", "role": "user"},
        {"author": "", "kind": "message", "role": "user"},
        {"author": "user", "role": "wizard"},
        {"author": "user", "role": "user", "parts": [{"type": "video"}]},
        {"author": "user", "role": "user", "unknown": 1},
        [],
    ],
)
async def test_prepare_rejects_bad_events(client: httpx.AsyncClient, body: object) -> None:
    session_id = await new_session(client)
    response = await client.post(f"/v1/sessions/{session_id}/prepare", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["error"] in ("invalid_request", "invalid_event")


# -- runs and resume as JSON ---------------------------------------------------------------


async def test_run_answers_the_run_result(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    response = await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "add 2 and 3"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    result = response.json()
    assert result["output"] == "The tool said: 5."
    assert result["stop_reason"] == "completed"
    assert result["usage"]["model_calls"] == 2
    assert result["usage"]["tool_calls"] == 1
    assert [m["role"] for m in result["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert result["interruptions"] == []
    assert result["session_id"] == session_id


async def test_runs_continue_the_conversation(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "one"})
    await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "two"})
    prompt = (await client.get(f"/v1/sessions/{session_id}/events", params={"view": "prompt"})).json()
    texts = [p["text"] for e in prompt for p in e["parts"]]
    assert texts == ["one", "You said: one", "two", "You said: two"]


@pytest.mark.parametrize(
    "content",
    [b"{}", b'{"prompt": ""}', b'{"prompt": "   "}', b'{"prompt": 5}', b'{"prompt": null}', b'{"prompt": "hi", "x": 1}',
     b"{bad json", b"[]", b'"hi"', b"", b'{"prompt": "\\ud800"}'],
)
async def test_run_rejects_malformed_bodies_with_422(client: httpx.AsyncClient, content: bytes) -> None:
    session_id = await new_session(client)
    for headers in ({"Content-Type": "application/json"}, {"Content-Type": "application/json", **SSE}):
        response = await client.post(f"/v1/sessions/{session_id}/runs", content=content, headers=headers)
        assert response.status_code == 422, (content, response.text)
        body = response.json()
        assert body["error"] == "invalid_request"
        assert body["message"]


async def test_run_without_prompt_names_the_field(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    body = (await client.post(f"/v1/sessions/{session_id}/runs", json={})).json()
    assert body["message"] == "body.prompt: Field required"
    assert body["detail"] == [{"loc": ["body", "prompt"], "msg": "Field required", "type": "missing"}]


async def test_model_error_answers_502(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    response = await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "fail now"})
    assert response.status_code == 502
    assert response.json() == {"error": "model_failed", "message": "the provider is down", "status_code": 503}


async def test_hook_error_answers_500_naming_the_hook(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    response = await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "boom"})
    assert response.status_code == 500
    body = response.json()
    assert body["error"] == "hook_failed"
    assert body["hook"] == "explode"
    assert body["point"] == "after_tool"
    # What was recorded before the failure stays consistent: the session still takes runs.
    assert (await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hi"})).status_code == 200


async def test_second_run_on_a_busy_session_answers_409(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    async with client.stream("POST", f"/v1/sessions/{session_id}/runs", json={"prompt": "slow"}, headers=SSE):
        for call in (
            client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hi"}),
            client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hi"}, headers=SSE),
            client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {}}),
            client.delete(f"/v1/sessions/{session_id}"),
        ):
            response = await call
            assert response.status_code == 409, response.text
            assert response.json()["error"] == "busy"


async def test_interrupt_then_resume_with_approval(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    DANGER_LOG.clear()
    result = (await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "danger please"})).json()
    assert result["stop_reason"] == "interrupted"
    (pause,) = result["interruptions"]
    assert pause["name"] == "danger"
    assert pause["arguments"] == {"target": "prod"}
    assert pause["reason"] == "danger needs a human's approval"
    assert DANGER_LOG == []
    resumed = await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {pause["call_id"]: True}})
    assert resumed.status_code == 200
    assert resumed.json()["stop_reason"] == "completed"
    assert resumed.json()["output"] == "The tool said: wiped prod."
    assert DANGER_LOG == ["prod"]
    again = await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {pause["call_id"]: True}})
    assert again.status_code == 409, again.text
    assert again.json()["error"] == "nothing_paused"
    assert DANGER_LOG == ["prod"], "a call whose result is recorded never runs again"


async def test_resume_with_refusal(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    DANGER_LOG.clear()
    pause = (await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "danger"})).json()["interruptions"][0]
    refusal = {"approvals": {pause["call_id"]: "not today"}}
    resumed = await client.post(f"/v1/sessions/{session_id}/resume", json=refusal)
    assert resumed.json()["output"] == "The tool said: the user refused the call to danger: not today."
    assert DANGER_LOG == []


@pytest.mark.parametrize(
    "body", [{}, {"approvals": []}, {"approvals": {"c": 1}}, {"approvals": {"c": None}}, {"approvals": {}, "x": 1}]
)
async def test_resume_rejects_bad_bodies(client: httpx.AsyncClient, body: object) -> None:
    session_id = await new_session(client)
    response = await client.post(f"/v1/sessions/{session_id}/resume", json=body)
    assert response.status_code == 422, response.text


# -- limits and CORS -----------------------------------------------------------------------


@pytest.fixture
async def small_client(make_server: Callable[..., LiveServer]) -> AsyncIterator[httpx.AsyncClient]:
    server = make_server(max_body_bytes=1000, max_media_body_bytes=1000)
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        yield http


async def test_body_over_the_limit_answers_413(small_client: httpx.AsyncClient) -> None:
    session_id = await new_session(small_client)
    big = {"prompt": "x" * 2000}
    response = await small_client.post(f"/v1/sessions/{session_id}/runs", json=big)
    assert response.status_code == 413
    assert response.json()["error"] == "too_large"

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(20):
            yield b" " * 100

    chunked = await small_client.post(f"/v1/sessions/{session_id}/runs", content=chunks())
    assert chunked.status_code == 413
    small = await small_client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "x" * 900})
    assert small.status_code == 200


async def test_a_declared_body_over_the_limit_is_read_so_the_client_gets_its_413(
    make_server: Callable[..., LiveServer],
) -> None:
    """Answered before its body was read, the client still sending saw the connection reset (issue 29, defect 6)."""
    server = make_server(max_body_bytes=100_000, max_media_body_bytes=100_000)
    body = b"x" * 3_000_000  # more than loopback buffers hold while the server answers
    answers = []
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        for _ in range(10):
            try:
                answer = await http.post("/v1/sessions", content=body, headers={"Content-Type": "application/json"})
                answers.append(answer.status_code)
            except httpx.TransportError as exc:
                answers.append(type(exc).__name__)
    assert answers == [413] * 10


def test_a_client_that_expects_100_continue_gets_the_413_before_it_sends(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server(max_body_bytes=100_000, max_media_body_bytes=100_000)
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 3000000\r\nExpect: 100-continue\r\n\r\n")
        head = conn.recv(65536)
    assert head.startswith(b"HTTP/1.1 413 "), head


async def test_cors_is_off_by_default(client: httpx.AsyncClient) -> None:
    headers = {"Origin": "https://example.org", "Access-Control-Request-Method": "POST"}
    response = await client.options("/v1/sessions", headers=headers)
    assert "access-control-allow-origin" not in response.headers


async def test_cors_when_configured(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(cors_origins=["https://app.example.org"], tokens={"t": "u"})
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        headers = {"Origin": "https://app.example.org", "Access-Control-Request-Method": "POST",
                   "Access-Control-Request-Headers": "authorization,content-type"}
        preflight = await http.options("/v1/sessions", headers=headers)
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://app.example.org"
        other = await http.options("/v1/sessions", headers={**headers, "Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers
        page = {"Origin": "https://app.example.org", "Authorization": "Bearer t"}
        answer = await http.get("/v1/sessions", headers=page)
    exposed = {name.strip().lower() for name in answer.headers["access-control-expose-headers"].split(",")}
    assert exposed >= {"location", "link", "retry-after", "hookline-cut"}, "a page reads the pages' cursor and the cut"
