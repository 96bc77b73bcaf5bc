"""A run's webhook (issue 28): POSTed when the run ends, signed as Standard Webhooks signs, retried, on record.

The receiver is a real HTTP server on loopback (so these servers allow private addresses);
the signature is checked here from its definition, not with the server's own `sign`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from hookline.server import Webhooks
from hookline.testing._serve import serve_in_thread
from support.waiting import await_until

from .api import full_log, new_session
from .live import LiveServer

pytestmark = pytest.mark.anyio

KEY = b"the receiver's key"
SECRET = "whsec_" + base64.b64encode(KEY).decode()


class Receiver:
    """A webhook receiver: answers each POST with the next scripted status (then 200), keeps each request."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = statuses
        self.got: list[tuple[dict[str, str], bytes]] = []
        self.app = Starlette(routes=[Route("/hook", self.hook, methods=["POST"])])

    async def hook(self, request: Request) -> Response:
        self.got.append((dict(request.headers), await request.body()))
        return Response(status_code=self.statuses.pop(0) if self.statuses else 200)


@pytest.fixture
def receiver_for() -> Iterator[Callable[[list[int]], tuple[Receiver, str]]]:
    """Starts receivers answering the given statuses: each one and its URL."""
    with ExitStack() as stack:

        def serve(statuses: list[int]) -> tuple[Receiver, str]:
            receiver = Receiver(statuses)
            return receiver, f"{stack.enter_context(serve_in_thread(receiver.app))}/hook"

        yield serve


def signed(headers: dict[str, str], body: bytes) -> bool:
    content = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(KEY, content, hashlib.sha256).digest()).decode()
    return headers["webhook-signature"] == f"v1,{expected}"


def fast(**more: Any) -> Webhooks:
    return Webhooks(secret=SECRET, allow_private=True, retry_delays=(0.05, 0.05), timeout=5.0, **more)


async def run_with_webhook(http: httpx.AsyncClient, url: str) -> tuple[str, str]:
    """A background run in a new session, with a webhook: its session's id and its own."""
    session_id = await new_session(http)
    answer = await http.post(f"/v1/sessions/{session_id}/runs",
                             json={"prompt": "hi", "background": True, "webhook": url})
    assert answer.status_code == 202, answer.text
    return session_id, answer.json()["run_id"]


async def attempts(http: httpx.AsyncClient, session_id: str, count: int) -> list[dict[str, Any]]:
    async def noted() -> list[dict[str, Any]] | None:
        found = [e["metadata"]["webhook"] for e in await full_log(http, session_id) if "webhook" in e["metadata"]]
        return found if len(found) >= count else None

    return await await_until(noted, f"{count} webhook attempts on record")


async def test_the_outcome_is_posted_signed_and_each_attempt_is_on_record(
    make_server: Callable[..., LiveServer], receiver_for: Callable[[list[int]], tuple[Receiver, str]]
) -> None:
    receiver, url = receiver_for([])
    server = make_server(webhooks=fast())
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        session_id, run_id = await run_with_webhook(http, url)
        (note,) = await attempts(http, session_id, 1)
        info = (await http.get(f"/v1/runs/{run_id}")).json()
        timeline = (await http.get(f"/v1/sessions/{session_id}/timeline")).json()
    assert len(timeline["runs"]) == 1, "the attempt's marker is a note of the run, not a run of its own"
    ((headers, body),) = receiver.got
    assert signed(headers, body)
    assert headers["webhook-id"] == run_id
    assert abs(int(headers["webhook-timestamp"]) - time.time()) < 60
    assert headers["content-type"] == "application/json"
    sent = json.loads(body)
    assert (sent["run_id"], sent["session_id"], sent["state"]) == (run_id, session_id, "completed")
    assert sent["result"]["output"] == "You said: hi"
    assert (note["run_id"], note["attempts"], note["delivered"], note["last_status"]) == (run_id, 1, True, 200)
    assert note["url"] == url
    assert info["webhook"] == {"attempts": 1, "delivered": True, "last_status": 200, "last_error": None}


async def test_a_failing_receiver_is_tried_again_and_a_refusing_one_is_not(
    make_server: Callable[..., LiveServer], receiver_for: Callable[[list[int]], tuple[Receiver, str]]
) -> None:
    flaky, flaky_url = receiver_for([503, 429])
    refusing, refusing_url = receiver_for([400])
    server = make_server(webhooks=fast())
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        session_id, _ = await run_with_webhook(http, flaky_url)
        notes = await attempts(http, session_id, 3)
    assert [(n["attempts"], n["last_status"], n["delivered"]) for n in notes] == [(1, 503, False), (2, 429, False),
                                                                                 (3, 200, True)]
    assert len({headers["webhook-id"] for headers, _ in flaky.got}) == 1, "one id on every attempt"
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        session_id, _ = await run_with_webhook(http, refusing_url)
        (note,) = await attempts(http, session_id, 1)
    assert (note["last_status"], note["delivered"]) == (400, False)
    assert len(refusing.got) == 1


async def test_an_unreachable_receiver_is_tried_each_time_then_given_up(
    make_server: Callable[..., LiveServer]
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nothing listens there once it closes
    server = make_server(webhooks=fast())
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        session_id, run_id = await run_with_webhook(http, f"http://127.0.0.1:{port}/hook")
        notes = await attempts(http, session_id, 3)
        info = (await http.get(f"/v1/runs/{run_id}")).json()
    assert [n["attempts"] for n in notes] == [1, 2, 3]
    assert all("ConnectError" in n["last_error"] for n in notes)
    assert info["webhook"]["delivered"] is False


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/hook", "http://localhost/hook", "http://[::1]/hook",
                                 "http://10.1.2.3/hook", "http://169.254.169.254/latest"])
async def test_a_private_address_is_refused_before_the_run(
    make_server: Callable[..., LiveServer], url: str
) -> None:
    server = make_server(webhooks=Webhooks(secret=SECRET))
    async with httpx.AsyncClient(base_url=server.url) as http:
        session_id = await new_session(http)
        answer = await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hi", "webhook": url})
        assert (answer.status_code, answer.json()["error"]) == (400, "bad_request")
        assert "not a public address" in answer.json()["message"]
        assert await full_log(http, session_id) == [], "nothing ran, nothing was written"


async def test_a_name_resolving_to_a_private_address_is_refused_when_called(
    make_server: Callable[..., LiveServer]
) -> None:
    name = socket.gethostname()
    try:
        resolved = socket.gethostbyname(name)
    except OSError:
        pytest.skip(f"{name} does not resolve here")
    if not resolved.startswith(("127.", "10.", "192.168.", "172.")):
        pytest.skip(f"{name} resolves to {resolved}, a public address")
    server = make_server(webhooks=Webhooks(secret=SECRET, retry_delays=(0.05,)))
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        session_id, _ = await run_with_webhook(http, f"http://{name}:9/hook")
        (note,) = await attempts(http, session_id, 1)
    assert note["delivered"] is False
    assert note["last_error"] == f"refused: {name} resolves to {resolved}, not a public address"


async def test_a_server_without_a_secret_refuses_webhooks(make_server: Callable[..., LiveServer],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOOKLINE_WEBHOOK_SECRET", raising=False)
    server = make_server()
    async with httpx.AsyncClient(base_url=server.url) as http:
        session_id = await new_session(http)
        answer = await http.post(f"/v1/sessions/{session_id}/runs",
                                 json={"prompt": "hi", "webhook": "https://example.com/hook"})
    assert (answer.status_code, answer.json()["error"]) == (400, "bad_request")
    assert "HOOKLINE_WEBHOOK_SECRET" in answer.json()["message"]


async def test_the_secret_comes_from_the_environment(
    make_server: Callable[..., LiveServer], receiver_for: Callable[[list[int]], tuple[Receiver, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOOKLINE_WEBHOOK_SECRET", SECRET)
    receiver, url = receiver_for([])
    server = make_server(webhooks=None)
    async with httpx.AsyncClient(base_url=server.url) as http:
        session_id = await new_session(http)
        answer = await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hi", "webhook": url})
    assert (answer.status_code, answer.json()["error"]) == (400, "bad_request")
    assert "not a public address" in answer.json()["message"], "a secret was found; loopback is refused by default"
    assert receiver.got == []


@pytest.mark.parametrize("url", ["ftp://example.com/x", "https://user:pw@example.com/x", "example.com/hook"])
async def test_a_webhook_that_is_no_http_url_is_422(client: httpx.AsyncClient, url: str) -> None:
    session_id = await new_session(client)
    answer = await client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hi", "webhook": url})
    assert answer.status_code == 422
    assert "http:// or https:// URL" in answer.text
