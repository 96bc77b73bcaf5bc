"""The agent the A2A tests serve, in process (`make_agent`) and with `hookline serve agents.py:agent`.

Its model reads the last message:
- "add ..."     -> calls `add(2, 3)`, then answers with the result;
- "danger ..."  -> calls `danger`, which the `guard` hook pauses for approval;
- "wait ..."    -> calls `wait`, which says "waiting" and sleeps until cancelled;
- "pick ..."    -> calls `pick`, which asks the user a question (`RunContext.ask`);
- "fail ..."    -> the provider fails;
- anything else -> "You said: <text>".
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from hookline import Agent, ModelError, RunContext, State, ToolCallPart, hook, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SessionStore

DANGER_LOG: list[str] = []
"""What `danger` wiped, in this process."""


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def danger(target: str) -> str:
    """Do something irreversible to `target`."""
    DANGER_LOG.append(target)
    return f"wiped {target}"


@tool
async def wait(ctx: RunContext[None]) -> str:
    """Wait until cancelled."""
    ctx.status("waiting")
    await asyncio.sleep(3600)
    return "waited"


@tool
def pick(ctx: RunContext[None]) -> str:
    """Ask the user to pick a colour."""
    if ctx.reply is None:
        ctx.ask("which colour?", {"type": "object", "properties": {"colour": {"type": "string"}}})
        return ""
    return f"picked {ctx.reply.content}" if ctx.reply.action == "accept" else f"no colour ({ctx.reply.action})"


@hook
def guard(state: State) -> None:
    for call in state.tool_calls:
        if call.name == "danger":
            state.interrupt(call.id, "danger needs a human's approval")


def _call(name: str, **arguments: Any) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCallPart(id=f"call-{uuid.uuid4().hex[:10]}", name=name, arguments=arguments)])


def script(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    if last.role == "tool":
        return ModelResponse(text=f"The tool said: {last.tool_results[0].content}.")
    text = last.text
    for word, call in (("add", lambda: _call("add", a=2, b=3)), ("danger", lambda: _call("danger", target="prod")),
                       ("wait", lambda: _call("wait")), ("pick", lambda: _call("pick"))):
        if text.startswith(word):
            return call()
    if text.startswith("fail"):
        raise ModelError("the provider is down", status_code=503, provider="function")
    return ModelResponse(text=f"You said: {text}")


def make_agent(store: SessionStore | None = None, *, tools: list[Any] | None = None) -> Agent:
    """The agent, on `store` (extra `tools` beside its own)."""
    return Agent("remote", model=FunctionModel(script, name="scripted"),
                 tools=[add, danger, wait, pick, *(tools or [])], hooks={"before_tool": [guard]}, session_store=store)


agent = make_agent()
"""What `hookline serve agents.py:agent` serves (on the store `--db` names)."""
