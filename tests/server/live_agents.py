"""The agent the live-stream tests serve with `hookline serve <this file>:agent` (no tests here).

Its model reads the last user prompt:
- "steps <n> <seconds>" -> calls `steps`, a tool that reports "step i of n" (a status line,
  a partial result `{"done": i, "of": n}` and a log record) every seconds/n seconds, then
  answers "stepped";
- "tell <n> <delay>"    -> streams the answer "w0 w1 ... w<n-1>" one word every `delay` s;
- anything else         -> "You said: <text>".
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from hookline import Agent, RunContext, ToolCallPart, tool
from hookline.models import Model, ModelRequest, ModelResponse, ModelStreamEvent, ResponseDone, TextDelta

logger = logging.getLogger("live_agents")


@tool
async def steps(n: int, seconds: float, ctx: RunContext[None]) -> str:
    """Work for `seconds`, in `n` steps, reporting each."""
    for i in range(1, n + 1):
        ctx.status(f"step {i} of {n}")
        ctx.partial({"done": i, "of": n})
        logger.warning("logged step %d", i)
        await asyncio.sleep(seconds / n)
    return f"{n} steps done"


def told(n: int) -> str:
    """The answer to "tell <n> ...": n words."""
    return " ".join(f"w{i}" for i in range(n))


class LiveModel(Model):
    """The scripted model: a tool call for "steps", a slowly streamed answer for "tell"."""

    name = "live"
    provider = "function"

    async def request(self, request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if last.role == "tool":
            return ModelResponse(text="stepped")
        words = last.text.split()
        if words[:1] == ["steps"]:
            call = ToolCallPart(id=f"steps-{len(request.messages)}", name="steps",
                                arguments={"n": int(words[1]), "seconds": float(words[2])})
            return ModelResponse(tool_calls=[call])
        if words[:1] == ["tell"]:
            return ModelResponse(text=told(int(words[1])))
        return ModelResponse(text=f"You said: {last.text}")

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        response = await self.request(request)
        words = request.messages[-1].text.split()
        delay = float(words[2]) if words[:1] == ["tell"] and request.messages[-1].role == "user" else 0.0
        pieces = response.text.split(" ") if response.text else []
        for index, word in enumerate(pieces):
            await asyncio.sleep(delay)
            yield TextDelta(word if index == len(pieces) - 1 else word + " ")
        yield ResponseDone(response)


agent = Agent("live", model=LiveModel(), tools=[steps])
