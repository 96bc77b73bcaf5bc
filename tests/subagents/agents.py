"""Agents of agents for the sub-agent tests, scripted by their conversation (not by a call count), so
that a process that resumes a session builds the same agents and gets the same answers.

`lead` asks `researcher` (its tool `research`); the researcher calls `delete`, which needs
approval, and answers with its result. `middle` puts one more agent between them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from hookline import Agent, ToolCallPart, tool
from hookline.hooklib import RequireApproval
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SessionStore


def delegate(call_id: str, tool_name: str, prefix: str) -> FunctionModel:
    """A model that answers a prompt with one call of `tool_name`, then with its result after `prefix`."""

    def answer(request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if last.role == "user":
            return ModelResponse(tool_calls=[ToolCallPart(id=call_id, name=tool_name, arguments={"input": last.text})])
        return ModelResponse(text=f"{prefix}{last.tool_results[0].content}")

    return FunctionModel(answer, name=f"{prefix.strip(': ') or 'model'}-model")


def worker(call_id: str, tool_name: str, arguments: dict[str, str], prefix: str) -> FunctionModel:
    """A model that calls `tool_name` once with `arguments`, then answers with its result after `prefix`."""

    def answer(request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if last.role == "user":
            return ModelResponse(tool_calls=[ToolCallPart(id=call_id, name=tool_name, arguments=arguments)])
        return ModelResponse(text=f"{prefix}{last.tool_results[0].content}")

    return FunctionModel(answer, name="worker-model")


def researcher(effects: list[str] | Path, *, approval: bool = True, hold: Path | None = None) -> Agent:
    """An agent whose one call, `delete`, needs approval (unless `approval` is false).

    Each run of `delete` is noted in `effects` (a list, or a file, one line each). With `hold`,
    the tool writes that file and then waits until it is gone (a test kills the process meanwhile).
    """

    @tool
    async def delete(path: str) -> str:
        """Delete a file."""
        if hold is not None and not hold.exists() and not _noted(effects):
            hold.write_text("running")
            while hold.exists():
                await asyncio.sleep(0.05)
        _note(effects, path)
        return f"deleted {path}"

    hooks = {"before_tool": [RequireApproval(["delete"])]} if approval else {}
    model = worker("r1", "delete", {"path": "/tmp/old"}, "researcher: ")
    return Agent("researcher", model=model, tools=[delete], hooks=hooks)  # type: ignore[arg-type]


def lead(inner: Agent, store: SessionStore | None = None, *, tool_name: str = "research") -> Agent:
    """An agent that hands its prompt to `inner` (as the tool `tool_name`, call id p1) and answers with its output."""
    return Agent("lead", model=delegate("p1", tool_name, "lead: "), tools=[inner.as_tool(tool_name, "Ask for help")],
                 session_store=store)


def middle(inner: Agent) -> Agent:
    """An agent between the lead and `inner` (its call id m1)."""
    return Agent("middle", model=delegate("m1", "research", "middle: "), tools=[inner.as_tool("research", "Ask")])


def _note(effects: list[str] | Path, path: str) -> None:
    if isinstance(effects, list):
        effects.append(path)
    else:
        with effects.open("a") as file:
            file.write(path + "\n")


def _noted(effects: list[str] | Path) -> bool:
    return bool(effects) if isinstance(effects, list) else effects.exists()
