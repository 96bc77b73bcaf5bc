"""A run that crashes (an exception hookline does not know) is logged once: its traceback, naming its session."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator

import httpx
import pytest

from hookline.models import ModelRequest, ModelResponse
from hookline.sessions import SessionStore

from .agent import make_agent
from .api import SSE, new_session
from .live import LiveServer

pytestmark = pytest.mark.anyio

INTERNAL = {"error": "internal_error", "message": "internal server error (see the server log)"}


async def crash(request: ModelRequest) -> ModelResponse:
    raise RuntimeError("the model's own code has a bug")


@pytest.fixture
async def crashing(make_server: Callable[..., LiveServer], store: SessionStore) -> AsyncIterator[httpx.AsyncClient]:
    """A client of a server whose model raises `RuntimeError` on every call."""
    server = make_server(make_agent(store, model_script=crash))
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        yield http


@pytest.fixture
def errors(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """`caplog` at ERROR, with uvicorn's records too (it logs an exception an app lets out, and does not propagate)."""
    uvicorn = logging.getLogger("uvicorn.error")
    uvicorn.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.ERROR):
            yield caplog
    finally:
        uvicorn.removeHandler(caplog.handler)


def shown(records: list[logging.LogRecord]) -> str:
    formatter = logging.Formatter("%(levelname)s %(name)s %(message)s")
    return "\n".join(formatter.format(record) for record in records)


@pytest.mark.parametrize("headers", [{}, SSE], ids=["json", "sse"])
async def test_a_crashing_run_logs_its_traceback_once_naming_its_session(
    crashing: httpx.AsyncClient, errors: pytest.LogCaptureFixture, headers: dict[str, str]
) -> None:
    session_id = await new_session(crashing)
    response = await crashing.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "hi"}, headers=headers)

    if headers:
        assert response.status_code == 200, response.text
        assert "run failed: internal server error (see the server log)" in response.text
    else:
        assert response.status_code == 500, response.text
        assert response.json() == INTERNAL
    failed = [r for r in errors.records if r.levelno >= logging.ERROR]
    assert len(failed) == 1, f"one ERROR record per failed run, not {len(failed)}:\n{shown(failed)}"
    (record,) = failed
    assert session_id in record.getMessage()
    # The server's RedactingFilter formats the traceback into `exc_text` (redacted) and drops `exc_info`.
    assert record.exc_text is not None
    assert record.exc_text.startswith("Traceback")
    assert record.exc_text.endswith("RuntimeError: the model's own code has a bug")
