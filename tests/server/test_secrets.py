"""No error answer and no log line of the server carries a DSN's password, a token or the store's internals."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from hookline import Agent, State, ToolCallPart, hook, tool
from hookline._redact import redact
from hookline.errors import HookError, ModelError, StoreError
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.server import create_app
from hookline.server.errors import STORE_UNAVAILABLE, RedactingFilter, error_body
from hookline.sessions import InMemorySessionStore
from hookline.sessions.postgres import PostgresSessionStore
from support.postgres_db import with_password

from .agent import make_agent
from .api import SSE, new_session, sse_frames
from .live import LiveServer

pytestmark = pytest.mark.anyio

SECRET = "hunter2-pw"


def leaked(text: str) -> list[str]:
    """What of a credential or the store's address `text` gives away."""
    return [needle for needle in (SECRET, "postgresql://", "127.0.0.1:5432") if needle in text]


def log_text(records: list[logging.LogRecord]) -> str:
    formatter = logging.Formatter("%(levelname)s %(name)s %(message)s")
    return "\n".join(formatter.format(record) for record in records)


@pytest.fixture
def secret_store_url(postgres_url: str) -> str:
    return with_password(postgres_url, SECRET)


@pytest.fixture
def pg_server(secret_store_url: str) -> Iterator[LiveServer]:
    store = PostgresSessionStore(secret_store_url)
    server = LiveServer(create_app(make_agent(store), store, tokens={})).start()
    yield server
    server.stop()


@pytest.fixture
async def pg_client(pg_server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=pg_server.url, timeout=10) as http:
        yield http


async def test_a_store_that_fails_answers_503_without_its_dsn(
    secret_store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    missing = secret_store_url.rsplit("/", 1)[0] + "/hookline_no_such_database"
    store = PostgresSessionStore(missing)
    server = LiveServer(create_app(make_agent(store), store, tokens={})).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            response = await http.post("/v1/sessions", json={})
    finally:
        server.stop()
    assert response.status_code == 503
    assert response.json() == {"error": "store_unavailable", "message": STORE_UNAVAILABLE}
    logged = log_text(caplog.records)
    assert "hookline_no_such_database" in logged, "the server log says what failed ..."
    assert SECRET not in logged, "... without the password"
    assert "Traceback" in logged


@pytest.mark.parametrize("headers", [{}, SSE], ids=["json", "sse"])
async def test_a_prompt_with_nul_on_postgres_gives_nothing_away(
    pg_client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture, headers: dict[str, str]
) -> None:
    caplog.set_level(logging.DEBUG)
    session_id = await new_session(pg_client)
    async with pg_client.stream("POST", f"/v1/sessions/{session_id}/runs", json={"prompt": "a\x00b"},
                                headers=headers) as response:
        body = "\n".join([frame.data async for frame in sse_frames(response)]) if headers else (
            (await response.aread()).decode())
    assert response.status_code in (200, 503), body
    assert leaked(body) == []
    assert SECRET not in log_text(caplog.records)


def test_error_bodies_are_redacted() -> None:
    status, body = error_body(StoreError(f"PostgreSQL database postgresql://app:{SECRET}@db:5432/x failed: boom"))
    assert (status, body.message) == (503, STORE_UNAVAILABLE)
    status, body = error_body(ModelError(f"proxy http://u:{SECRET}@proxy:3128 refused", status_code=502))
    assert status == 502
    assert body.message == "proxy http://***@proxy:3128 refused"
    _, body = error_body(HookError(f"sent Authorization: Bearer {SECRET}", hook="h", point="before_llm"))
    assert SECRET not in body.message


def test_the_server_log_is_redacted_message_and_traceback() -> None:
    try:
        raise StoreError(f"cannot reach postgresql://app:{SECRET}@db:5432/x")
    except StoreError as exc:
        record = logging.LogRecord("hookline.server", logging.ERROR, __file__, 1, "failed: %s", (exc,), None)
        record.exc_info = (type(exc), exc, exc.__traceback__)
    assert RedactingFilter().filter(record)
    text = logging.Formatter().format(record)
    assert SECRET not in text
    assert "postgresql://***@db:5432/x" in text
    assert "Traceback" in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"postgresql://app:{SECRET}@db:5432/x", "postgresql://***@db:5432/x"),
        (f"postgres://app:p@{SECRET}@db/x", "postgres://***@db/x"),
        ("redis://:pw@cache:6379", "redis://***@cache:6379"),
        (f"host=db password={SECRET} dbname=x", "host=db password=*** dbname=x"),
        (f"https://api.example.com/v1?api_key={SECRET}&q=1", "https://api.example.com/v1?api_key=***&q=1"),
        (f'{{"access_token": "{SECRET}"}}', '{"access_token": "***"}'),
        (f"Authorization: Bearer {SECRET}", "Authorization: Bearer ***"),
        ("a known bearer token is required (Authorization: Bearer ...)",
         "a known bearer token is required (Authorization: Bearer ...)"),
        ("token entry 2 is not 'token:user'", "token entry 2 is not 'token:user'"),
        ("http://127.0.0.1:8000/v1/sessions/a@b", "http://127.0.0.1:8000/v1/sessions/a@b"),
        (f"hook failed: token={SECRET}", "hook failed: token=***"),
        (f'GET /v1/sessions?access_token={SECRET} HTTP/1.1" 200', 'GET /v1/sessions?access_token=*** HTTP/1.1" 200'),
        (f"postgresql://app:a/{SECRET}@db:5432/x", "postgresql://***@db:5432/x"),
        (f"postgresql://app:a/b@{SECRET}@db/x?sslmode=require", "postgresql://***@db/x?sslmode=require"),
        (f"client_secret={SECRET}", "client_secret=***"),
        ("max_tokens=100, 412 tokens", "max_tokens=100, 412 tokens"),
    ],
)
def test_redact(text: str, expected: str) -> None:
    assert redact(text) == expected


# -- issue 29, defect 7: a tool's exception, a hook's token, the added rules ------------------------


@tool
def warehouse() -> str:
    """Reach the warehouse (it fails, quoting its credentials)."""
    raise RuntimeError(f"cannot connect with password={SECRET}")


@hook
def leaky_hook(state: State) -> None:
    if any("hook" in m.text for m in state.messages if m.role == "user"):
        raise RuntimeError(f"the callback was refused: token={SECRET}")


def _warehouse_script(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    if last.role == "user" and last.text == "tool":
        return ModelResponse(tool_calls=[ToolCallPart(id="w1", name="warehouse", arguments={})])
    return ModelResponse(text="done")


@pytest.fixture
async def leaky_client() -> AsyncIterator[httpx.AsyncClient]:
    agent = Agent("leaky", model=FunctionModel(_warehouse_script), tools=[warehouse],
                  hooks={"before_llm": [leaky_hook]})
    server = LiveServer(create_app(agent, InMemorySessionStore(), tokens={})).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            yield http
    finally:
        server.stop()


async def test_a_tools_exception_reaches_no_answer_with_its_password(leaky_client: httpx.AsyncClient) -> None:
    session_id = await new_session(leaky_client)
    ran = await leaky_client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "tool"})
    assert ran.status_code == 200, ran.text
    events = await leaky_client.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})
    streamed = await leaky_client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "tool"}, headers=SSE)
    for answer in (ran, events, streamed):
        assert SECRET not in answer.text
    assert "warehouse failed: RuntimeError: cannot connect with password=***" in events.text


async def test_a_hooks_token_reaches_no_answer(
    leaky_client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    session_id = await new_session(leaky_client)
    failed = await leaky_client.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hook"})
    assert failed.status_code == 500
    assert failed.json()["error"] == "hook_failed"
    assert "token=***" in failed.json()["message"]
    events = await leaky_client.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})
    for text in (failed.text, events.text, log_text(caplog.records)):
        assert SECRET not in text
