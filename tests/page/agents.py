"""The agent the page's own tests serve (no tests here): a scripted model that streams slowly.

Its model reads the last user prompt:
- "steps <n> <seconds>" -> calls `steps` (tests/server/live_agents.py): "step i of n", a partial
  result {"done": i, "of": n} and a log line every seconds/n seconds; then answers "stepped";
- "tell <n> <delay>"    -> streams "w0 w1 ... w<n-1>", one word every `delay` seconds;
- "markdown <delay>"    -> streams `MARKDOWN` one line every `delay` seconds;
- "think"               -> reasons first (streamed reasoning deltas), then answers "The answer is 42.";
- "danger ..."          -> calls `danger` (tests/server/agent.py), paused for approval; "pair" calls it twice at once;
- "crash"               -> the model raises a RuntimeError (no `ModelError`: a bug of its own);
- anything else         -> "You said: <text>".
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from hookline import Agent, ReasoningPart, StatusOptions, ToolCallPart
from hookline.models import (
    Model,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
    ReasoningDelta,
    ResponseDone,
    TextDelta,
)
from hookline.sessions import SessionStore
from server.agent import danger, guard
from server.live_agents import steps, told

MARKDOWN = """## Plan

Here is **the plan** for `deploy`:

- build the image
- push it

### Risks

1. a slow registry
2. a full disk"""
"""The Markdown answer of "markdown": two headings (## and ###), bold, code, a list and a numbered list."""
REASONING = "Six times seven: that is forty-two."
"""The reasoning of "think"."""


class PageModel(Model):
    """The scripted model of the page's tests."""

    name = "page-model"
    provider = "function"

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Answer the last prompt as the module says."""
        last = request.messages[-1]
        if last.role == "tool":
            return ModelResponse(text=f"The tool said: {last.tool_results[0].content}.")
        words = last.text.split()
        first = words[0] if words else ""
        if first == "steps":
            call = ToolCallPart(id=f"steps-{len(request.messages)}", name="steps",
                                arguments={"n": int(words[1]), "seconds": float(words[2])})
            return ModelResponse(tool_calls=[call])
        if first in ("danger", "pair"):
            targets = ["prod", "qa"] if first == "pair" else ["prod"]
            return ModelResponse(tool_calls=[ToolCallPart(id=f"danger-{len(request.messages)}-{t}", name="danger",
                                                          arguments={"target": t}) for t in targets])
        if first == "crash":
            raise RuntimeError("the model crashed: KeyError 'x'")
        if first == "tell":
            return ModelResponse(text=told(int(words[1])))
        if first == "markdown":
            return ModelResponse(text=MARKDOWN)
        if first == "think":
            return ModelResponse(text="The answer is 42.", reasoning=[ReasoningPart(text=REASONING)])
        return ModelResponse(text=f"You said: {last.text}")

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Stream the answer: word by word (slowly for "tell"), line by line for "markdown"."""
        response = await self.request(request)
        last = request.messages[-1]
        words = last.text.split() if last.role == "user" else []
        delay = float(words[-1]) if words[:1] in (["tell"], ["markdown"]) else 0.01
        for piece in response.reasoning:
            for word in piece.text.split(" "):
                await asyncio.sleep(0.05)
                yield ReasoningDelta(word + " ")
        if words[:1] == ["markdown"]:
            pieces = [line + "\n" for line in response.text.split("\n")]
        else:
            pieces = [w + " " for w in response.text.split(" ")] if response.text else []
        if pieces:
            pieces[-1] = pieces[-1].rstrip()
        for piece in pieces:
            await asyncio.sleep(delay)
            yield TextDelta(piece)
        yield ResponseDone(response)


def page_agent(store: SessionStore) -> Agent:
    """The agent of the page's tests, on `store`, with its reasoning streamed."""
    return Agent("assistant", model=PageModel(), tools=[steps, danger], hooks={"before_tool": [guard]},
                 session_store=store, status=StatusOptions(reasoning=True))
