"""Schemathesis over the live server's /openapi.json: no request it can make answers 5xx.

Bounded: `EXAMPLES_PER_OPERATION` examples for each operation (about 100 in all), half of
them aimed at a real session so that bodies reach the store and the loop rather than
stopping at a 404. (Hypothesis drives each operation's strategy directly: schemathesis's
`from_fixture` loader does not work with pytest 9.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from hookline.models import ModelRequest, ModelResponse
from hookline.server import create_app

from .agent import make_agent
from .live import LiveServer

EXAMPLES_PER_OPERATION = 10
REAL_SESSION = "fuzz-target"
OPERATIONS = sorted(
    (method.upper(), path)
    for path, methods in create_app(make_agent(), tokens={}).openapi()["paths"].items()
    for method in methods
)


def echo(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    return ModelResponse(text=f"echo: {last.text or 'tool result'}")


@pytest.fixture
def live(make_server: Callable[..., LiveServer], store: Any) -> LiveServer:
    return make_server(agent=make_agent(store, model_script=echo))


def _check(case: Any, live: LiveServer) -> None:
    aim = hash(repr((case.body, case.path_parameters, case.query))) % 2 == 0
    if aim and "session_id" in (case.path_parameters or {}):
        httpx.post(f"{live.url}/v1/sessions", json={"id": REAL_SESSION})  # 201, or 409 once it exists
        case.path_parameters["session_id"] = REAL_SESSION
    response = case.call(timeout=10)
    assert response.status_code < 500, f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text}"
    if response.status_code >= 400 and response.content:
        assert "error" in response.json(), response.text


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_no_request_answers_5xx(live: LiveServer, method: str, path: str) -> None:
    operation = schemathesis.openapi.from_url(f"{live.url}/openapi.json")[path][method]

    @given(case=operation.as_strategy())
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    def fuzz(case: Any) -> None:
        _check(case, live)

    fuzz()
