"""`Agent`: what an agent is (its model, instructions, tools, hooks), and where its runs start.

```python
agent = Agent(model="openai:gpt-4o-mini", instructions="You are terse.", tools=[add])
result = await agent.prompt("2+3?")
result = agent.prompt("2+3?").run_sync()
async for event in agent.prompt("go").session("s-1").stream(): ...
```
"""

from __future__ import annotations

import asyncio
import os
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Literal

from pydantic import TypeAdapter

from hookline._checks import positive
from hookline._run.resume import Approval, AuditLines, parse_approvals
from hookline._sync import sync_runner
from hookline.agent_spec import Instructions, ToolCatalog
from hookline.context import RunContext
from hookline.errors import ConfigError
from hookline.events import StatusOptions
from hookline.hook_points import HookPoint
from hookline.hooks import BoundHook, call_optional, normalize_hooks
from hookline.messages import Message, Part
from hookline.models import Model, ModelSettings, ToolSpec, resolve_model
from hookline.prompt_request import PromptRequest
from hookline.result import Interruption, RunResult
from hookline.sessions import SessionStore
from hookline.state import State
from hookline.subagents import open_child, run_subagent
from hookline.tools import Tool, ToolFunction, as_tool
from hookline.toolsets import ToolIndex
from hookline.toolsets import Toolset as ToolProvider

__all__ = ["Agent", "Instructions", "Interruption", "PromptRequest", "RunResult", "ToolCatalog", "default_model_spec"]

Toolset = Sequence[Tool | ToolFunction | ToolProvider] | Callable[[State], Sequence[Tool | ToolFunction]] | None
"""Tools and toolsets (e.g. `MCPToolset`), or a function of the state picking tools (called before every model call)."""


def default_model_spec() -> str:
    """The model used when none is given: `HOOKLINE_MODEL`, else OpenAI if keyed, else local."""
    if spec := os.environ.get("HOOKLINE_MODEL"):
        return spec
    if os.environ.get("OPENAI_API_KEY"):
        return "openai:gpt-4o-mini"
    return "local:smollm2"


class Agent:
    """An agent: a model, instructions, tools and hooks, run as a multi-turn tool loop.

    Args:
        name: The author name in events.
        model: A `"provider:model"` string or a `Model`; None uses `default_model_spec()`.
        instructions: A system prompt, or `callable(state) -> str` called before every model call.
        tools: Tools, plain functions and toolsets (e.g. `MCPToolset`), or one `callable(state) -> list`
            resolved every turn.
        hooks: `{hook point: [hooks]}`; unknown points raise `ConfigError`.
        max_turns: Model calls allowed per run.
        on_max_turns: `"raise"` (`MaxTurnsExceeded`) or `"final_answer"` (one last call without tools).
        tool_concurrency: How many tool calls of one turn run at once (1: one after another).
        status: Which status events are written.
        session_store: The default store for `.session(...)`; None: an in-memory store.
        output_type: A type the final answer is validated into (e.g. a pydantic model).
        app: The application name sessions are created under.
        model_settings: `ModelSettings` (or a dict of its fields) for every model call; a run's
            (`.model_settings(...)`) and a `before_llm` hook's are laid over them.
        deps_type: The type of the deps every run must be given (`.deps(value)`), checked with
            `isinstance`; tools and hooks read them as `ctx.deps` (see `RunContext`).
        exit_conditions: Names of tools whose successful run ends the run: once the results of
            that turn are recorded, `stop_reason` is "completed" and the output is what the
            tool returned (no `on_exit` hook runs, as with `state.control.exit`).
    """

    def __init__(
        self,
        name: str = "agent",
        *,
        model: str | Model | None = None,
        instructions: Instructions = None,
        tools: Toolset = None,
        hooks: Mapping[str | HookPoint, Sequence[Any]] | None = None,
        max_turns: int = 10,
        on_max_turns: Literal["raise", "final_answer"] = "raise",
        tool_concurrency: int = 4,
        status: StatusOptions | None = None,
        session_store: SessionStore | None = None,
        output_type: Any = None,
        app: str = "default",
        model_settings: ModelSettings | Mapping[str, Any] | None = None,
        deps_type: Any = None,
        exit_conditions: Sequence[str] = (),
    ) -> None:
        _check(isinstance(name, str) and bool(name.strip()), f"name must be a non-empty string, not {name!r}")
        _check(positive(max_turns), f"max_turns must be a positive integer, not {max_turns!r}")
        _check(on_max_turns in ("raise", "final_answer"),
               f"on_max_turns must be 'raise' or 'final_answer', not {on_max_turns!r}")
        _check(positive(tool_concurrency), f"tool_concurrency must be a positive integer, not {tool_concurrency!r}")
        _check(instructions is None or isinstance(instructions, str) or callable(instructions),
               f"instructions must be a string or a function of the state, not {type(instructions).__name__}")
        _check(status is None or isinstance(status, StatusOptions), "status must be a StatusOptions")
        _check(session_store is None or isinstance(session_store, SessionStore), "session_store must be a SessionStore")
        self.name = name
        self._model_spec = model
        self._model: Model | None = resolve_model(model) if model is not None else None
        self.instructions = instructions
        self.hooks: dict[HookPoint, tuple[BoundHook, ...]] = normalize_hooks(hooks)
        self.max_turns = max_turns
        self.on_max_turns = on_max_turns
        self.tool_concurrency = tool_concurrency
        self.status = status or StatusOptions()
        self._session_store = session_store
        self.app = app
        self.model_settings = ModelSettings.parse(model_settings)
        self.output_type = output_type
        self.output_adapter: TypeAdapter[Any] | None = _output_adapter(output_type)
        self.tools: Toolset = tools
        """The tools as given (`tools_for(state)` gives those of a turn)."""
        self._static_tools, self._tool_picker, self._toolsets = _normalize_tools(tools)
        self._tool_index = ToolIndex(self._static_tools, self._toolsets) if self._toolsets else None
        self._static_specs = [t.spec for t in self._static_tools.values()]
        self.deps_type = _checked_deps_type(deps_type)
        self.exit_conditions = _exit_conditions(exit_conditions)
        if self._tool_picker is None and not self._toolsets:
            _check_exit_tools(self.exit_conditions, self._static_tools)
        self._warm = False
        self._tool_cache: dict[int, Tool] = {}

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, model={self.model.name if self._model else self._model_spec!r})"

    def clone(self, **changes: Any) -> Agent:
        """A new agent configured as this one, with `changes` (arguments of `Agent`) laid over it.

        `agent.clone(model=other)`, `agent.clone(tools=[*agent.tools, extra])`. The hooks,
        tools and model are shared, not copied; the new agent warms its hooks up on its own.

        Raises:
            ConfigError: A change is no argument of `Agent`, or an invalid one.
        """
        config: dict[str, Any] = {
            "name": self.name, "model": self._model or self._model_spec, "instructions": self.instructions,
            "tools": self.tools, "hooks": dict(self.hooks), "max_turns": self.max_turns,
            "on_max_turns": self.on_max_turns, "tool_concurrency": self.tool_concurrency, "status": self.status,
            "session_store": self._session_store, "output_type": self.output_type, "app": self.app,
            "model_settings": self.model_settings, "deps_type": self.deps_type,
            "exit_conditions": sorted(self.exit_conditions),
        }
        unknown = sorted(set(changes) - set(config))
        if unknown:
            raise ConfigError(f"clone() takes arguments of Agent, not {', '.join(map(repr, unknown))}")
        return Agent(**{**config, **changes})

    @property
    def model(self) -> Model:
        """The model, resolved on first use when none was given."""
        if self._model is None:
            self._model = resolve_model(default_model_spec())
        return self._model

    @property
    def session_store(self) -> SessionStore:
        """The default session store (an in-memory one unless one was given)."""
        if self._session_store is None:
            from hookline.sessions import InMemorySessionStore

            self._session_store = InMemorySessionStore()
        return self._session_store

    def tools_for(self, state: State) -> dict[str, Tool]:
        """The tools offered this turn, by name (a dynamic toolset is asked again every turn)."""
        if self._tool_picker is None:
            return self._static_tools if self._tool_index is None else self._tool_index.current()
        picked = self._tool_picker(state)
        tools: dict[str, Tool] = {}
        for item in picked:
            resolved = item if isinstance(item, Tool) else self._cached_tool(item)
            tools[resolved.name] = resolved
        return tools

    def specs_for(self, tools: dict[str, Tool]) -> list[ToolSpec]:
        """The specs of `tools`, as a model request carries them."""
        if tools is self._static_tools:
            return list(self._static_specs)
        return [t.spec for t in tools.values()]

    def tool_catalog(self) -> ToolCatalog:
        """The tools this agent offers, for a reader outside a run (e.g. the inspector rebuilding a model call)."""
        if self._tool_picker is not None:
            return ToolCatalog((), chosen_per_turn=True)
        if self._tool_index is None:
            return ToolCatalog(tuple(self._static_specs))
        try:
            return ToolCatalog(tuple(self.specs_for(self._tool_index.current())))
        except ConfigError:  # not connected (`warm_up` connects them)
            return ToolCatalog(tuple(self._static_specs), toolsets_offline=True)

    def _cached_tool(self, function: ToolFunction) -> Tool:
        key = id(function)
        cached = self._tool_cache.get(key)
        if cached is None or cached.function is not function:
            cached = self._tool_cache[key] = as_tool(function)
        return cached

    def prompt(self, prompt: str | Message | Sequence[str | Part]) -> PromptRequest:
        """Start building a run on `prompt`; await it, `.run_sync()` it or `.stream()` it.

        `prompt` is text, a user `Message`, or a list of text and parts making one:
        `agent.prompt(["What is in this picture?", ImagePart.from_path("cat.png")])`.
        """
        return PromptRequest(self, prompt)

    def resume(
        self,
        session_id: str,
        approvals: Mapping[str, Approval] | None = None,
        *,
        user: str | None = None,
        store: SessionStore | None = None,
        wait: float = 5.0,
        audit: AuditLines | None = None,
    ) -> PromptRequest:
        """Continue an interrupted run from its session log: await it, `.run_sync()` or `.stream()` it.

        A run whose process died while the model answered asks the model again; approvals
        that name a call which awaits no decision raise `ConfigError`, and nothing is recorded.

        Args:
            session_id: The session of the interrupted run.
            approvals: `{call_id: True}` runs a call; `False` or a reason string refuses it;
                `{call_id: {"args": {...}}}` runs it with these arguments instead of the model's
                (checked against the tool's schema, and recorded as the user's edit before the
                call runs); `{"approve": False, "reason": "..."}` refuses it too. A paused call
                left out stays paused.
            user: The session's owner, to check it; None finds the session by id alone.
            store: The session store (default: the agent's).
            wait: Seconds to wait for another run on this session before `SessionBusy`.
            audit: Gives the events to record right before the paused calls run or are refused
                (e.g. who decided each one), from those calls and the approvals; only a run that
                applies the approvals records them, under the session's run lock.
        """
        parsed = parse_approvals(approvals)
        request = PromptRequest(self, None).session(session_id, user=user, store=store, wait=wait, create=False)
        request._options.approvals, request._options.audit = parsed, audit
        return request

    def as_tool(self, name: str, description: str) -> Tool:
        """This agent as a tool of another agent: one argument `input: str`, its output the result.

        The calling run's deps are passed on, and this agent's status events reach the calling
        run's log and stream, tagged `metadata["agent"]` with this agent's name (and their text
        prefixed with it: "researcher: run completed"). When the calling run has a session, this
        agent runs in a child session of the same store, linked to the call; when it pauses for
        approval, the calling run pauses too, listing its paused calls (see `hookline.subagents`).
        """

        async def ask(input: str, ctx: RunContext[Any]) -> str:
            child = await open_child(ctx, self.name)
            if child is None:
                request = self.prompt(input)
            elif child.started:  # the call runs again: the sub-agent goes on from its log
                request = self.resume(child.session_id, child.answers, user=child.user, store=child.store)
            else:
                request = self.prompt(input).session(child.session_id, user=child.user, store=child.store)
                request._options.opening = (child.link,)
            return await run_subagent(request, ctx, self.name)

        return Tool(ask, name=name, description=description)

    async def warm_up(self) -> None:
        """Warm up every hook once (`warm_up_async()` or `warm_up()`), and connect the toolsets.

        The first run warms them if nobody did; runs started while that happens do not
        warm them a second time. Every run connects the toolsets, which costs nothing when
        they are connected and their tool lists are current.
        """
        if not self._warm:
            self._warm = True
            for item in self._unique_hooks():
                await call_optional(item, "warm_up", "warm_up_async")
        for toolset in self._toolsets:
            await toolset.connect()
        if self._tool_index is not None:
            tools = self._tool_index.current()  # two tools with one name fail the run before it starts
            _check_exit_tools(self.exit_conditions, tools)

    async def close(self) -> None:
        """Close every hook once (`close_async()` or `close()`), the toolsets (all at once), and the model.

        Each is closed even when another fails (a toolset left open may leave a server
        process running); then the first failure is raised.
        """
        failures: list[Exception] = []
        for item in self._unique_hooks():
            await _noting(failures, call_optional(item, "close", "close_async"))
        self._warm = False
        for outcome in await asyncio.gather(*(t.aclose() for t in self._toolsets), return_exceptions=True):
            if isinstance(outcome, Exception):
                failures.append(outcome)
            elif isinstance(outcome, BaseException):
                raise outcome
        if self._model is not None:
            await _noting(failures, self._model.aclose())
        if failures:
            raise failures[0]

    def close_sync(self) -> None:
        """`close()` from synchronous code, on the event loop that `run_sync` uses."""
        sync_runner().run(self.close())

    def _unique_hooks(self) -> list[Any]:
        seen: dict[int, Any] = {}
        for bound in (b for hooks in self.hooks.values() for b in hooks):
            seen.setdefault(id(bound.hook), bound.hook)
        return list(seen.values())

    async def __aenter__(self) -> Agent:
        await self.warm_up()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self.close()


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ConfigError(message)


def _checked_deps_type(deps_type: Any) -> Any:
    if deps_type is None:
        return None
    try:
        isinstance(None, typing.get_origin(deps_type) or deps_type)
    except TypeError:
        raise ConfigError(f"deps_type must be a class that isinstance() can check, not {deps_type!r}") from None
    return deps_type


def _exit_conditions(names: Sequence[str]) -> frozenset[str]:
    if isinstance(names, str) or not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
        raise ConfigError(f"exit_conditions must be a list of tool names, e.g. ['final_answer'], not {names!r}")
    return frozenset(names)


def _check_exit_tools(names: frozenset[str], tools: Mapping[str, Tool]) -> None:
    unknown = sorted(names - set(tools))
    if unknown:
        raise ConfigError(f"exit_conditions name no tool of the agent: {', '.join(map(repr, unknown))}; "
                          f"its tools: {', '.join(tools) or 'none'}")


def _output_adapter(output_type: Any) -> TypeAdapter[Any] | None:
    if output_type is None or output_type is str:
        return None
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(output_type)
        adapter.json_schema()
    except Exception as exc:
        raise ConfigError(f"output_type {output_type!r} cannot be described as JSON: {exc}") from exc
    return adapter


def _normalize_tools(
    tools: Toolset,
) -> tuple[dict[str, Tool], Callable[[State], Sequence[Any]] | None, tuple[ToolProvider, ...]]:
    if tools is None:
        return {}, None, ()
    if isinstance(tools, Tool | ToolProvider):
        raise ConfigError("tools must be a list, e.g. tools=[add]")
    if callable(tools) and not isinstance(tools, Sequence):
        return {}, tools, ()
    if isinstance(tools, str | bytes) or not isinstance(tools, Sequence):
        raise ConfigError(f"tools must be a list of tools or a function of the state, not {type(tools).__name__}")
    resolved: dict[str, Tool] = {}
    toolsets: list[ToolProvider] = []
    for item in tools:
        if isinstance(item, ToolProvider):
            toolsets.append(item)
            continue
        converted = as_tool(item)
        if converted.name in resolved:
            raise ConfigError(f"two tools are named {converted.name!r}; give one another name with @tool(name=...)")
        resolved[converted.name] = converted
    return resolved, None, tuple(toolsets)


async def _noting(failures: list[Exception], closing: Awaitable[Any]) -> None:
    """Await `closing`; what it raises joins `failures`."""
    try:
        await closing
    except Exception as exc:
        failures.append(exc)
