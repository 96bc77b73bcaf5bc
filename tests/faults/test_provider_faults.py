"""A provider's failure is retried or raised as `ModelError`, and never leaves a broken or partial log.

Each fault is served by hookline's own fake provider servers (real sockets, the real wire
formats, the official SDKs) in the middle of a run on a durable SQLite session, after one
tool turn: 429 with Retry-After, 5xx, a timeout, a stream cut short (abruptly or cleanly), a
stalled stream, garbage in a stream, a JSON body cut in half or malformed, retries exhausted,
a 400. For each, on the JSON path (`await`) and the streaming path (`.stream()`):

- the run either completes after retries, with the whole answer, or fails with `ModelError`
  (documented retries must complete; a 400 or exhausted retries must fail);
- the stored log is a valid conversation and holds no partial answer;
- the API key appears in no error and no stored event;
- a later prompt on the same session completes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

from hookline import Agent, Event, ModelError, RunResult, ToolCallPart, tool
from hookline.models import Model
from hookline.models.anthropic import AnthropicModel
from hookline.models.openai import OpenAIModel
from hookline.retry import RetryPolicy
from hookline.sessions import SQLiteSessionStore
from hookline.testing import FakeAnthropicServer, FakeOpenAIServer, ScriptedServer

from ._harness import assistant_texts, log_problems

pytestmark = [pytest.mark.faults, pytest.mark.anyio]

FULL = "the sum is 5"
PARTIAL = "PARTIAL answer that must never be stored as one"
SECRET = "sk-faults-secret-7f3a9c"
POLICY = RetryPolicy(max_attempts=3, initial_delay=0.01, max_delay=0.05, max_total_time=30.0, timeout=1.0)
Path_ = Literal["await", "stream"]
Outcome = Literal["completes", "fails", "either"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@dataclass(frozen=True)
class Fault:
    """What a provider sends instead of one answer, and what the run must then do."""

    name: str
    inject: Callable[[ScriptedServer], None]
    outcome: Outcome
    paths: tuple[Path_, ...] = ("await", "stream")
    status_code: int | None = None
    """For a run that must fail: the status code its `ModelError` carries."""
    min_seconds: float = 0.0
    """For a run that must complete: how long it must have waited (a Retry-After)."""


def _server_errors(server: ScriptedServer) -> None:
    server.enqueue_error(500, message="internal error")
    server.enqueue_error(529 if isinstance(server, FakeAnthropicServer) else 503, message="overloaded")


def _exhausted(server: ScriptedServer) -> None:
    for _ in range(POLICY.max_attempts):
        server.enqueue_error(503, message="the engine is overloaded")


FAULTS = [
    Fault("429 with Retry-After", lambda s: s.enqueue_error(429, message="slow down", retry_after=0.3),
          "completes", min_seconds=0.3),
    Fault("500 then 503/529", _server_errors, "completes"),
    Fault("timeout", lambda s: s.enqueue_delay(20.0, text=PARTIAL), "completes"),
    Fault("retries exhausted", _exhausted, "fails", status_code=503),
    Fault("400 is not retried", lambda s: s.enqueue_error(400, message="bad request"), "fails", status_code=400),
    Fault("stream cut abruptly", lambda s: s.enqueue_cut_stream(PARTIAL), "either", paths=("stream",)),
    Fault("stream ends without finish", lambda s: s.enqueue_cut_stream(PARTIAL, abrupt=False), "either",
          paths=("stream",)),
    Fault("stream stalls", lambda s: s.enqueue_stalled_stream(PARTIAL, after=2, seconds=20.0), "either",
          paths=("stream",)),
    Fault("garbage frame", lambda s: s.enqueue_garbled_stream(PARTIAL, at=2), "either", paths=("stream",)),
    Fault("JSON body cut abruptly", lambda s: s.enqueue_cut_body(PARTIAL), "either", paths=("await",)),
    Fault("JSON body cut cleanly", lambda s: s.enqueue_cut_body(PARTIAL, abrupt=False), "either", paths=("await",)),
    Fault("malformed JSON body", lambda s: s.enqueue_malformed_json(), "either", paths=("await",)),
]
CASES = [
    pytest.param(fault, path, id=f"{fault.name}-{path}") for fault in FAULTS for path in fault.paths
]


@pytest.fixture(params=["openai", "anthropic"])
def server(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    fake = FakeOpenAIServer() if request.param == "openai" else FakeAnthropicServer()
    with fake:
        yield fake


def make_model(server: ScriptedServer) -> Model:
    if isinstance(server, FakeOpenAIServer):
        return OpenAIModel("gpt-4o-mini", base_url=server.base_url, api_key=SECRET, retry=POLICY)
    return AnthropicModel("claude-haiku-4-5", base_url=server.base_url, api_key=SECRET, retry=POLICY)


async def run(agent: Agent, prompt: str, path: Path_) -> RunResult:
    request = agent.prompt(prompt).session("faulty")
    if path == "await":
        return await request
    async for _ in request.stream():
        pass
    assert request.result is not None
    return request.result


@pytest.mark.parametrize(("fault", "path"), CASES)
async def test_a_provider_fault_is_retried_or_raised_and_the_log_stays_whole(
    server: ScriptedServer, fault: Fault, path: Path_, tmp_path: Path
) -> None:
    server.enqueue_tool_calls([ToolCallPart(id="call_1", name="add", arguments={"a": 2, "b": 3})])
    fault.inject(server)
    if fault.outcome != "fails":
        server.enqueue_text(FULL)
    async with SQLiteSessionStore(tmp_path / "provider.db") as store, make_model(server) as model:
        agent = Agent(name="calc", model=model, tools=[add], session_store=store)
        started = time.monotonic()
        error: ModelError | None = None
        try:
            result = await run(agent, "what is 2+3?", path)
        except ModelError as exc:
            error = exc
        took = time.monotonic() - started
        check_outcome(fault, error, result.output if error is None else None, took)
        log = await store.events("faulty", view="all")
        check_log(log, error)

        if error is None or fault.outcome == "fails":  # else the scripted answer still waits
            server.enqueue_text(FULL)
        again = await run(agent, "and again?", path)
        assert again.output == FULL
        check_log(await store.events("faulty", view="all"), None)
    assert not server.unscripted, "the client sent requests nobody scripted"
    server.assert_complete()


def check_outcome(fault: Fault, error: ModelError | None, output: str | None, took: float) -> None:
    if fault.outcome == "completes":
        assert error is None, f"{fault.name} is retried as documented, yet the run failed: {error}"
    if fault.outcome == "fails":
        assert error is not None, f"{fault.name}: the run must fail with ModelError"
    if error is None:
        assert output == FULL, f"the run completed with {output!r}, not the whole answer"
        assert took >= fault.min_seconds, f"the run did not wait for Retry-After ({took:.2f} s)"
        return
    assert SECRET not in str(error)
    if fault.status_code is not None:
        assert error.status_code == fault.status_code
        assert ("overloaded" if fault.status_code == 503 else "bad request") in str(error), (
            f"the error does not carry the provider's message: {error}"
        )


def check_log(log: list[Event], error: ModelError | None) -> None:
    problems = log_problems(log)
    assert not problems, f"the log broke after {error!r}: {problems}"
    texts = assistant_texts(log)
    assert not any(PARTIAL in text for text in texts), f"a partial answer was stored: {texts}"
    assert all(text in ("", FULL) for text in texts), texts
    assert not any(SECRET in e.model_dump_json() for e in log), "the API key reached the log"
    if error is not None:
        assert texts[-1] == "", "a failed model call must not leave an answer behind"
