"""The scripted agent the server tests serve (`make_agent`).

Its model is a `FunctionModel` whose script reads the last message:
- "add ..."    -> calls the `add` tool, then answers with its result;
- "danger ..." -> calls the `danger` tool, which the `guard` hook interrupts for approval;
- "slow ..."   -> answers after `SLOW_SECONDS` ("slow 3 ...": after 3 s);
- "fail ..."   -> the provider fails (`ModelError`, 503);
- "boom ..."   -> calls `add`, and the `explode` after_tool hook raises;
- anything else -> "You said: <text>".
Its `stream()` yields the answer word by word, so deltas really stream.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

from hookline import Agent, ModelError, State, ToolCallPart, hook, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse, ModelStreamEvent, ResponseDone, TextDelta
from hookline.sessions import SessionStore

SLOW_SECONDS = 0.6
"""How long the model thinks over a "slow" prompt: the run is still going while a test acts on it."""
WORD_DELAY = 0.01
"""The model's time per streamed word, as a real one takes per token."""


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


DANGER_LOG: list[str] = []


@tool
def danger(target: str) -> str:
    """Do something irreversible to `target`."""
    DANGER_LOG.append(target)
    return f"wiped {target}"


@hook
def guard(state: State) -> None:
    for call in state.tool_calls:
        if call.name == "danger":
            state.interrupt(call.id, "danger needs a human's approval")


@hook
def explode(state: State) -> None:
    if any("boom" in m.text for m in state.messages if m.role == "user"):
        raise RuntimeError("the explode hook blew up")


def _call(name: str, **arguments: Any) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCallPart(id=f"call-{uuid.uuid4().hex[:10]}", name=name, arguments=arguments)])


async def script(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    if last.role == "tool":
        result = last.tool_results[0]
        return ModelResponse(text=f"The tool said: {result.content}.")
    text = last.text
    if text.startswith("add"):
        return _call("add", a=2, b=3)
    if text.startswith("danger"):
        return _call("danger", target="prod")
    if text.startswith("boom"):
        return _call("add", a=1, b=1)
    if text.startswith("slow"):
        await asyncio.sleep(_seconds_asked(text) or SLOW_SECONDS)  # the model's work
        return ModelResponse(text="slow answer")
    if text.startswith("fail"):
        raise ModelError("the provider is down", status_code=503, provider="function")
    return ModelResponse(text=f"You said: {text}")


def _seconds_asked(text: str) -> float | None:
    """The seconds "slow 3 ..." asks for; None when its second word is not a number."""
    words = text.split()
    try:
        return float(words[1]) if len(words) > 1 else None
    except ValueError:
        return None


class WordStreamingModel(FunctionModel):
    """The scripted model, streaming its answer one word at a time."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        response = await self.request(request)
        words = response.text.split(" ") if response.text else []
        for index, word in enumerate(words):
            await asyncio.sleep(WORD_DELAY)  # the model's work on the next word
            yield TextDelta(word if index == len(words) - 1 else word + " ")
        yield ResponseDone(response)


def make_agent(store: SessionStore | None = None, model_script: Any = script) -> Agent:
    """The agent, on `store`, its model following `model_script`."""
    return Agent(
        "assistant",
        model=WordStreamingModel(model_script, name="scripted"),
        tools=[add, danger],
        hooks={"before_tool": [guard], "after_tool": [explode]},
        session_store=store,
    )
