"""Server-sent events read by a real httpx client over a real socket."""

from __future__ import annotations

import asyncio
import json
import socket

import anyio
import httpx
import pytest

from hookline import Event, TextPart
from hookline.events import EVENTS_ADAPTER
from hookline.server.sse import encode_event, wants_sse
from hookline.sessions import SessionStore
from support.waiting import await_until

from .agent import DANGER_LOG
from .api import SSE, Frame, model_called, new_session, sse_frames

pytestmark = pytest.mark.anyio


async def _run_frames(client: httpx.AsyncClient, session_id: str, prompt: str) -> list[Frame]:
    async with client.stream("POST", f"/v1/sessions/{session_id}/runs", json={"prompt": prompt}, headers=SSE) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        assert r.headers["cache-control"] == "no-cache"
        return [frame async for frame in sse_frames(r)]


async def _stored(client: httpx.AsyncClient, session_id: str) -> list[Event]:
    response = await client.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})
    return EVENTS_ADAPTER.validate_json(response.content)


async def _completed_log(client: httpx.AsyncClient, session_id: str) -> list[Event]:
    """The session's log (the `all` view) once its run has completed."""

    async def completed() -> list[Event] | None:
        stored = await _stored(client, session_id)
        return stored if stored and stored[-1].text == "run completed" else None

    log: list[Event] = await await_until(completed, f"the run of session {session_id} completed")
    return log


def _seqs(frames: list[Frame]) -> list[int]:
    return [int(f.id) for f in frames if f.id is not None]


async def test_run_streams_events_in_seq_order_and_ends_with_the_run(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    frames = await _run_frames(client, session_id, "add 2 and 3")
    events = [Event.model_validate_json(f.data) for f in frames]
    for frame, event in zip(frames, events, strict=True):
        assert frame.event == event.kind
        assert frame.id == (str(event.seq) if event.seq is not None else None)
    stored = [e for e in events if e.kind != "delta"]
    assert all(e.seq is not None for e in stored)
    assert _seqs(frames) == list(range(1, len(stored) + 1))
    assert events[0].kind == "message"
    assert events[0].role == "user"
    assert events[0].text == "add 2 and 3"
    assert events[-1].kind == "status"
    assert events[-1].text == "run completed"
    assert [e.model_dump() for e in stored] == [e.model_dump() for e in await _stored(client, session_id)]


async def test_deltas_stream_before_the_answer_without_ids(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    frames = await _run_frames(client, session_id, "hello big world")
    deltas = [f for f in frames if f.event == "delta"]
    assert len(deltas) == 5  # "You said: hello big world", one word at a time
    assert all(f.id is None for f in deltas)
    answer_index = next(i for i, f in enumerate(frames) if f.event == "message" and f.json["role"] == "assistant")
    assert frames.index(deltas[-1]) < answer_index
    assert "".join(f.json["parts"][0]["text"] for f in deltas) == "You said: hello big world"


async def test_status_events_stream_beside_messages(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    frames = await _run_frames(client, session_id, "add 2 and 3")
    lines = [f.json["parts"][0]["text"] for f in frames if f.event == "status"]
    assert "turn 1: calling model" in lines
    assert "running add(a=2, b=3)" in lines
    assert "add returned 5" in lines


async def test_reconnect_with_last_event_id_misses_nothing(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    seen: list[Frame] = []
    async with client.stream("POST", f"/v1/sessions/{session_id}/runs", json={"prompt": "slow"}, headers=SSE) as r:
        async for frame in sse_frames(r):
            seen.append(frame)
            if len(_seqs(seen)) == 2:
                break  # the connection drops mid-run
    last_id = _seqs(seen)[-1]
    url = f"/v1/sessions/{session_id}/events/stream"
    async with client.stream("GET", url, headers={"Last-Event-ID": str(last_id)}) as r:
        assert r.status_code == 200
        rest = [frame async for frame in sse_frames(r)]
    assert rest[-1].json["parts"][0]["text"] == "run completed", "the stream ends when the run does"
    everything = _seqs(seen) + _seqs(rest)
    stored = await _stored(client, session_id)
    assert everything == [e.seq for e in stored], "no gap and no repeat"


async def test_reconnect_with_query_parameter_and_after_the_run(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    frames = await _run_frames(client, session_id, "add 2 and 3")
    url = f"/v1/sessions/{session_id}/events/stream"
    async with client.stream("GET", url, params={"after_seq": 3}) as r:
        replayed = [frame async for frame in sse_frames(r)]
    assert _seqs(replayed) == [s for s in _seqs(frames) if s > 3]
    async with client.stream("GET", url, headers={"Last-Event-ID": "2"}, params={"after_seq": 5}) as r:
        assert _seqs([f async for f in sse_frames(r)])[0] == 3, "the header wins over the query"


async def test_markers_are_never_streamed(client: httpx.AsyncClient, store: SessionStore) -> None:
    session_id = await new_session(client)
    await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hello"})
    await store.append_event(session_id, Event.marker("assistant", call_id="c1", started=True))
    await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "again"})
    assert "marker" in {e.kind for e in await _stored(client, session_id)}
    async with client.stream("GET", f"/v1/sessions/{session_id}/events/stream") as r:
        frames = [frame async for frame in sse_frames(r)]
    assert frames
    assert "marker" not in {f.event for f in frames}
    assert "marker" not in {f.json["kind"] for f in frames}


async def test_bad_last_event_id_answers_422(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    for value in ("abc", "-1", str(2**70)):
        response = await client.get(f"/v1/sessions/{session_id}/events/stream", headers={"Last-Event-ID": value})
        assert response.status_code == 422


async def test_many_readers_of_one_run_each_get_every_event(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    results: dict[int, list[int]] = {}

    async def read(index: int) -> None:
        async with client.stream("GET", f"/v1/sessions/{session_id}/events/stream") as r:
            results[index] = _seqs([f async for f in sse_frames(r)])

    run = client.stream("POST", f"/v1/sessions/{session_id}/runs", json={"prompt": "slow"}, headers=SSE)
    async with run as r, anyio.create_task_group() as group:
        for index in range(5):
            group.start_soon(read, index)
        own = _seqs([f async for f in sse_frames(r)])
    expected = [e.seq for e in await _stored(client, session_id)]
    assert own == expected
    assert all(seqs == expected for seqs in results.values())


async def test_client_disconnect_mid_run_the_run_still_finishes(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    async with client.stream("POST", f"/v1/sessions/{session_id}/runs", json={"prompt": "slow"}, headers=SSE) as r:
        async for frame in sse_frames(r):
            assert frame.json["role"] == "user"
            break  # hang up after the first event, before the model has answered
    stored = await _completed_log(client, session_id)
    assert [e.text for e in stored if e.kind == "message"] == ["slow", "slow answer"]


async def test_json_client_disconnect_mid_run_the_run_still_finishes(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    request = asyncio.ensure_future(client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "slow"}))
    await model_called(client, session_id)
    request.cancel()  # hang up while the model is thinking
    with pytest.raises(asyncio.CancelledError):
        await request
    stored = await _completed_log(client, session_id)
    assert [e.text for e in stored if e.kind == "message"] == ["slow", "slow answer"]


async def test_hook_failure_mid_stream_sends_an_error_event(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    frames = await _run_frames(client, session_id, "boom")
    last = frames[-1]
    assert last.event == "status"
    assert last.id is None
    error = last.json["metadata"]["error"]
    assert error["error"] == "hook_failed"
    assert error["hook"] == "explode"
    assert error["point"] == "after_tool"
    assert last.json["metadata"]["http_status"] == 500
    assert any(f.json["parts"][0]["text"] == "run failed" for f in frames if f.event == "status")


async def test_model_failure_mid_stream_sends_an_error_event(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    frames = await _run_frames(client, session_id, "fail")
    # The prompt is recorded before the model is called, so the stream has begun: the
    # failure arrives as an error event, after the stored "run failed" status.
    assert frames[0].json["role"] == "user"
    assert frames[-1].json["metadata"]["error"] == {
        "error": "model_failed", "message": "the provider is down", "status_code": 503}


async def test_interrupt_and_resume_stream(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    DANGER_LOG.clear()
    frames = await _run_frames(client, session_id, "danger")
    paused = [f.json["metadata"]["interrupted"] for f in frames if "interrupted" in f.json["metadata"]]
    assert len(paused) == 1
    assert paused[0]["name"] == "danger"
    assert frames[-1].json["parts"][0]["text"] == "run interrupted"
    body = {"approvals": {paused[0]["call_id"]: True}}
    async with client.stream("POST", f"/v1/sessions/{session_id}/resume", json=body, headers=SSE) as r:
        resumed = [f async for f in sse_frames(r)]
    assert _seqs(resumed)[0] == _seqs(frames)[-1] + 1
    assert any(f.json.get("role") == "tool" for f in resumed)
    assert resumed[-1].json["parts"][0]["text"] == "run completed"
    assert DANGER_LOG == ["prod"]


def test_encoder_writes_one_data_line_of_valid_json() -> None:
    text = 'he said "hi"\nthen: {left}\r\n\u2028done'
    stored = Event(author="a", kind="message", role="assistant", parts=[TextPart(text=text)], seq=7)
    frame = encode_event(stored).decode()
    lines = frame.split("\n")
    assert lines[:2] == ["id: 7", "event: message"]
    assert lines[2].startswith("data: ")
    assert lines[3:] == ["", ""]
    assert json.loads(lines[2][6:])["parts"][0]["text"] == text
    delta = encode_event(Event(author="a", kind="delta", parts=[TextPart(text="x")])).decode()
    assert delta.startswith("event: delta\ndata: ")


@pytest.mark.parametrize(
    ("accept", "expected"),
    [("text/event-stream", True), ("application/json, text/event-stream;q=0.5", True),
     ("text/event-stream;q=0", False), ("application/json", False), ("", False), ("*/*", False)],
)
def test_wants_sse(accept: str, expected: bool) -> None:
    from starlette.requests import Request

    request = Request({"type": "http", "headers": [(b"accept", accept.encode())]})
    assert wants_sse(request) is expected


def _chunks(url: str, path: str, body: bytes) -> list[bytes]:
    """The chunks of a chunked answer as the server sent them (one per write of its body), over a raw socket."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as raw:
        raw.sendall(f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\nConnection: close\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        data = b""
        while part := raw.recv(65536):
            data += part
    rest = data.split(b"\r\n\r\n", 1)[1]
    chunks = []
    while True:
        size_line, rest = rest.split(b"\r\n", 1)
        if int(size_line, 16) == 0:
            return chunks
        chunks.append(rest[: int(size_line, 16)])
        rest = rest[int(size_line, 16) + 2:]


async def test_the_events_of_one_flush_go_out_in_one_write(client: httpx.AsyncClient) -> None:
    session_id = await new_session(client)
    path = f"/v1/sessions/{session_id}/runs"
    chunks = await asyncio.to_thread(_chunks, str(client.base_url), path, b'{"prompt": "add 2 and 3"}')
    assert all(chunk.endswith(b"\n\n") for chunk in chunks), "a chunk holds whole frames"
    # The answer that calls add, its llm status line and "running add(...)" are stored in one flush.
    (together,) = [chunk for chunk in chunks if b"running add(" in chunk]
    assert b'"tool_call"' in together, together
    assert len(chunks) < sum(chunk.count(b"\n\n") for chunk in chunks)
