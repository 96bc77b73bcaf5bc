"""Log records as status, per source (issue 13, item 7): besides tool code (on by default), the
records emitted by hooks and during model calls become status events when `StatusOptions` asks,
each in its own run only."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator

import pytest

from hookline import Agent, Event, State, StatusOptions, hook, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.models.openai import OpenAIModel
from hookline.retry import RetryPolicy
from hookline.testing import FakeOpenAIServer

from .scripted import Script, answer, call, calls

pytestmark = pytest.mark.anyio

FAST_RETRY = RetryPolicy(max_attempts=3, initial_delay=0.01, max_delay=0.05, timeout=5.0)


@pytest.fixture
def logger() -> Iterator[logging.Logger]:
    found = logging.getLogger("tests.core.logs")
    level = found.level
    yield found
    found.setLevel(level)


@pytest.fixture
async def openai_model() -> AsyncIterator[tuple[FakeOpenAIServer, OpenAIModel]]:
    with FakeOpenAIServer() as server:
        async with OpenAIModel("gpt-4o-mini", base_url=server.base_url, api_key="test", retry=FAST_RETRY) as model:
            yield server, model
        server.assert_complete()


def _logged(events: list[Event], source: str) -> list[Event]:
    return [e for e in events if e.kind == "status" and e.source == source and "logger" in e.metadata]


def _noisy_hook(logger: logging.Logger) -> object:
    @hook(name="noisy")
    def noisy(state: State) -> None:
        logger.warning("turn %d looks long", state.turn)

    return noisy


async def test_hook_records_are_captured_when_asked(logger: logging.Logger) -> None:
    agent = Agent("bot", model=Script(answer("hi")).model, hooks={"before_llm": [_noisy_hook(logger)]},
                  status=StatusOptions(hook_logs=True))
    events = [e async for e in agent.prompt("hi").stream()]
    (record,) = _logged(events, "agent")
    assert (record.author, record.text) == ("bot", "warning: turn 1 looks long")
    assert record.metadata == {"hook": "noisy", "point": "before_llm", "logger": "tests.core.logs",
                               "level": "WARNING"}


async def test_hook_records_are_not_captured_by_default(logger: logging.Logger) -> None:
    agent = Agent(model=Script(answer("hi")).model, hooks={"before_llm": [_noisy_hook(logger)]})
    events = [e async for e in agent.prompt("hi").stream()]
    assert _logged(events, "agent") == []


async def test_model_records_are_captured_when_asked(
    openai_model: tuple[FakeOpenAIServer, OpenAIModel],
) -> None:
    server, model = openai_model
    server.enqueue_error(503)
    server.enqueue_text("hello")
    agent = Agent("bot", model=model, status=StatusOptions(model_logs=True))
    events = [e async for e in agent.prompt("hi").stream()]

    (record,) = _logged(events, "llm")
    assert record.text.startswith("warning: openai call failed (attempt 1): ")
    assert record.text.endswith(" s")
    assert record.metadata == {"logger": "hookline.retry", "level": "WARNING"}
    assert [e.text for e in events if e.kind == "message"][-1] == "hello"


async def test_model_records_are_not_captured_by_default(openai_model: tuple[FakeOpenAIServer, OpenAIModel]) -> None:
    server, model = openai_model
    server.enqueue_error(503)
    server.enqueue_text("hello")
    events = [e async for e in Agent(model=model).prompt("hi").stream()]
    assert _logged(events, "llm") == []


async def test_records_of_a_scripted_model_count_as_the_models(logger: logging.Logger) -> None:
    def script(request: ModelRequest) -> ModelResponse:
        logger.error("the model is thinking hard")
        return ModelResponse(text="done")

    agent = Agent(model=FunctionModel(script), status=StatusOptions(model_logs=True, hook_logs=True))
    events = [e async for e in agent.prompt("hi").stream()]
    assert [e.text for e in _logged(events, "llm")] == ["error: the model is thinking hard"]
    assert _logged(events, "agent") == []


async def test_tool_records_can_be_switched_off(logger: logging.Logger) -> None:
    @tool
    def chatty() -> str:
        """Log and return."""
        logger.warning("chatting")
        return "ok"

    def run(status: StatusOptions) -> object:
        script = Script(calls(call("c1", "chatty")), answer("done"))
        return Agent(model=script.model, tools=[chatty], status=status).prompt("go")

    on = [e async for e in run(StatusOptions()).stream()]  # type: ignore[attr-defined]
    off = [e async for e in run(StatusOptions(tool_logs=False)).stream()]  # type: ignore[attr-defined]
    assert [e.text for e in _logged(on, "tool")] == ["warning: chatting"]
    assert _logged(off, "tool") == []
    assert "chatty returned ok" in [e.text for e in off if e.kind == "status"], "the tool's own lines stay"


async def test_records_outside_hooks_and_model_calls_are_not_captured(logger: logging.Logger) -> None:
    def instructions(state: State) -> str:
        logger.warning("building instructions")
        return "Be brief."

    agent = Agent(model=Script(answer("hi")).model, instructions=instructions,
                  status=StatusOptions(hook_logs=True, model_logs=True))
    events = [e async for e in agent.prompt("hi").stream()]
    assert not any("building instructions" in e.text for e in events)


async def test_concurrent_runs_capture_only_their_own_hook_records(logger: logging.Logger) -> None:
    both_logged = asyncio.Barrier(2)

    @hook
    async def slow(state: State) -> None:
        logger.warning("%s before", state.agent.name)
        await both_logged.wait()  # the other run's hook has logged meanwhile
        logger.warning("%s after", state.agent.name)

    def agent(name: str) -> Agent:
        return Agent(name, model=Script(answer("hi")).model, hooks={"before_run": [slow]},
                     status=StatusOptions(hook_logs=True))

    async def logged(name: str) -> list[str]:
        return [e.text for e in _logged([e async for e in agent(name).prompt("go").stream()], "agent")]

    ann, bob = await asyncio.gather(logged("ann"), logged("bob"))
    assert ann == ["warning: ann before", "warning: ann after"]
    assert bob == ["warning: bob before", "warning: bob after"]


_AFTER_A_RUN = """
import logging
from hookline import Agent, tool
from hookline.models import FunctionModel, ModelResponse
from hookline.messages import ToolCallPart

@tool
def add(a: int, b: int) -> int:
    logging.getLogger("tool").warning("adding")
    return a + b

def script(request):
    if request.messages[-1].role == "user":
        return ModelResponse(tool_calls=[ToolCallPart(id="c1", name="add", arguments={"a": 1, "b": 2})])
    return ModelResponse(text="3")

agent = Agent(model=FunctionModel(script), tools=[add])
assert agent.prompt("1+2?").session("s-1").run_sync().output == "3"
logging.getLogger("app.after").warning("after the run: %s", "still shown")
logging.getLogger("app.after").info("below the last resort's level")
"""


def test_a_program_without_logging_set_up_still_sees_its_warnings_after_a_run() -> None:
    """The capture's handler on the root logger must not silence `logging.lastResort` (issue 29, defect 1)."""
    done = subprocess.run([sys.executable, "-c", _AFTER_A_RUN], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == ["after the run: still shown"], "the tool's record went to the run, not stderr"
