"""Agents for the CLI tests, loaded by `hookline run --agent <this file>:<name>`.

Each is backed by a `FunctionModel` script, so the CLI runs the real loop offline.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hookline import Agent, HookPoint, RunContext, State, StatusOptions, ToolCallPart, hook, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.retry import RetryPolicy

if TYPE_CHECKING:
    from hookline.server import DepsContext


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def transfer(amount: int) -> str:
    """Send money (needs approval)."""
    return f"sent {amount}"


def _results(request: ModelRequest) -> list[str]:
    return [r.content for m in request.messages for r in m.tool_results]


def _add_script(request: ModelRequest) -> ModelResponse:
    # One tool call per user prompt, then an answer built from its result.
    last = request.messages[-1]
    if last.role == "user":
        return ModelResponse(tool_calls=[ToolCallPart(id=f"c{len(request.messages)}", name="add",
                                                      arguments={"a": 2, "b": 3})])
    return ModelResponse(text=f"the sum is {_results(request)[-1]}")


def _transfer_script(request: ModelRequest) -> ModelResponse:
    if request.messages[-1].role == "user":
        return ModelResponse(tool_calls=[ToolCallPart(id="t1", name="transfer", arguments={"amount": 10})])
    return ModelResponse(text=f"outcome: {_results(request)[-1]}")


def _loop_script(request: ModelRequest) -> ModelResponse:
    call = ToolCallPart(id=f"l{len(request.messages)}", name="add", arguments={"a": 1, "b": 1})
    return ModelResponse(tool_calls=[call])


SLOW_SECONDS = 30.0
"""How long the slow agents' model takes: far past any Ctrl-C test's deadline."""


async def _threaded_script(request: ModelRequest) -> ModelResponse:
    # As the offline model does: the work runs in a worker thread that nothing can stop.
    await asyncio.to_thread(time.sleep, SLOW_SECONDS)
    return ModelResponse(text="too late")


async def _ignore_cancellation(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(deadline - time.monotonic())


async def _stubborn_script(request: ModelRequest) -> ModelResponse:
    # Code that swallows cancellation: only the CLI's grace period ends the process.
    await _ignore_cancellation(SLOW_SECONDS)
    return ModelResponse(text="too late")


STOP_SECONDS = 1.0
"""How long the lingering agent's model takes to stop once cancelled: late, yet within the CLI's 1.5 s grace."""

_left_behind: list[object] = []  # keeps what the lingering model leaves behind from being collected


async def _never_closes() -> AsyncIterator[str]:
    try:
        yield "first"
    finally:
        await _ignore_cancellation(SLOW_SECONDS)  # aclose() waits for this


async def _lingering_script(request: ModelRequest) -> ModelResponse:
    # Leaves what no cleanup can end: a task that ignores cancellation, an async generator
    # whose aclose() does, a worker thread; then stops STOP_SECONDS after it is cancelled.
    _left_behind.append(asyncio.create_task(_ignore_cancellation(SLOW_SECONDS)))
    stream = _never_closes()
    _left_behind.append(stream)
    await anext(stream)
    _left_behind.append(asyncio.create_task(asyncio.to_thread(time.sleep, SLOW_SECONDS)))
    print("the lingering model waits", file=sys.stderr, flush=True)
    try:
        await asyncio.sleep(SLOW_SECONDS)
    except asyncio.CancelledError:
        await asyncio.shield(asyncio.sleep(STOP_SECONDS))
        raise
    return ModelResponse(text="too late")


class _UnclosableModel(FunctionModel):
    """A scripted model whose close never ends: it ignores cancellation (a client stuck shutting down)."""

    async def aclose(self) -> None:
        print("the model closes", file=sys.stderr, flush=True)
        await _ignore_cancellation(SLOW_SECONDS)


class _BlockingClose:
    """A hook whose synchronous close() blocks the event loop's thread (a client flushing to a dead host)."""

    def run(self, state: State) -> None:
        pass

    def close(self) -> None:
        print("the hook closes", file=sys.stderr, flush=True)
        time.sleep(SLOW_SECONDS)


@hook
def _needs_approval(state: State) -> None:
    for call in state.tool_calls:
        if call.name == "transfer":
            state.interrupt(call.id, "moves money")


@hook
def _broken(state: State) -> None:
    raise RuntimeError("the hook broke")


agent = Agent("tester", model=FunctionModel(_add_script, name="scripted"), tools=[add])
guarded = Agent("guarded", model=FunctionModel(_transfer_script, name="scripted"), tools=[transfer],
                hooks={HookPoint.BEFORE_TOOL: [_needs_approval]})
looping = Agent("looping", model=FunctionModel(_loop_script, name="scripted"), tools=[add])
failing = Agent("failing", model=FunctionModel(_add_script, name="scripted"), tools=[add],
                hooks={HookPoint.BEFORE_LLM: [_broken]})
threaded = Agent("threaded", model=FunctionModel(_threaded_script, name="scripted"), tools=[add])
stubborn = Agent("stubborn", model=FunctionModel(_stubborn_script, name="scripted"), tools=[add])
lingering = Agent("lingering", model=FunctionModel(_lingering_script, name="scripted"), tools=[add])
unclosable = Agent("unclosable", model=_UnclosableModel(_add_script, name="scripted"), tools=[add])
blocking_close = Agent("blocking", model=FunctionModel(_add_script, name="scripted"), tools=[add],
                       hooks={HookPoint.BEFORE_RUN: [_BlockingClose()]})
quiet_tools = Agent("quiet", model=FunctionModel(_add_script, name="scripted"), tools=[add],
                    status=StatusOptions(tool=False))
not_an_agent = 42


def make_agent() -> Agent:
    """A factory: the CLI calls it."""
    return Agent("made", model=FunctionModel(_add_script, name="scripted"), tools=[add])


def unreachable() -> Agent:
    """An OpenAI-compatible model at `$TEST_UNREACHABLE_URL`, where nothing listens (no retries)."""
    from hookline.models import OpenAIModel

    model = OpenAIModel("gpt-4o-mini", base_url=os.environ["TEST_UNREACHABLE_URL"], api_key="test",
                        retry=RetryPolicy(max_attempts=1))
    return Agent("unreachable", model=model)


@dataclass(frozen=True)
class Tenant:
    """The deps of the `tenanted` agent's runs."""

    name: str


@tool
def whoami(ctx: RunContext[Tenant]) -> str:
    """Name the tenant of this run."""
    return ctx.deps.name


def _whoami_script(request: ModelRequest) -> ModelResponse:
    if request.messages[-1].role == "user":
        return ModelResponse(tool_calls=[ToolCallPart(id="w1", name="whoami", arguments={})])
    return ModelResponse(text=f"you are {_results(request)[-1]}")


tenanted = Agent("tenanted", model=FunctionModel(_whoami_script, name="scripted"), tools=[whoami], deps_type=Tenant)


def tenant_deps(context: DepsContext) -> Tenant:
    """The deps factory of `tenanted` (`hookline serve ...:tenanted --deps tenant_deps`)."""
    return Tenant(f"the tenant of {context.user}")


@tool
def connect() -> str:
    """Connect to the warehouse (it fails, quoting its credentials)."""
    raise RuntimeError("cannot connect with password=hunter2-pw to the warehouse")


def _connect_script(request: ModelRequest) -> ModelResponse:
    if request.messages[-1].role == "user":
        return ModelResponse(tool_calls=[ToolCallPart(id="k1", name="connect", arguments={})])
    return ModelResponse(text="the warehouse is out of reach")


leaky = Agent("leaky", model=FunctionModel(_connect_script, name="scripted"), tools=[connect])
