"""`Agent` (what an agent is) and `PromptRequest` (one prompt, built fluently, then run).

```python
agent = Agent(model="openai:gpt-4o-mini", instructions="You are terse.", tools=[add])
result = await agent.prompt("2+3?")
result = agent.prompt("2+3?").run_sync()
async for event in agent.prompt("go").session("s-1").stream(): ...
```
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import os
import threading
import typing
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

from pydantic import TypeAdapter

from hookline._run.loop import Run
from hookline._run.prompt_record import SessionTarget
from hookline._run.recorder import StreamQueue
from hookline._run.resume import Answer, Approval, AuditLines, parse_approvals
from hookline.agent_spec import Instructions
from hookline.context import RunContext
from hookline.errors import ConfigError
from hookline.events import Event, StatusOptions
from hookline.hook_points import HookPoint
from hookline.hooks import BoundHook, call_optional, normalize_hooks
from hookline.messages import DocumentPart, FilePart, ImagePart, Message, Part, TextPart
from hookline.models import Model, ModelSettings, ToolSpec, resolve_model
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


@dataclass(frozen=True, slots=True)
class ToolCatalog:
    """The tools an agent offers its model, as far as they can be told outside a run (`Agent.tool_catalog()`)."""

    specs: tuple[ToolSpec, ...]
    """Their specs, as a model request carries them (none when `chosen_per_turn`)."""
    chosen_per_turn: bool = False
    """A function of the state picks the tools before every model call: which, only a run knows."""
    toolsets_offline: bool = False
    """Its toolsets (e.g. MCP servers) are not connected now: `specs` holds only the plain tools."""


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
        _check(_positive(max_turns), f"max_turns must be a positive integer, not {max_turns!r}")
        _check(on_max_turns in ("raise", "final_answer"),
               f"on_max_turns must be 'raise' or 'final_answer', not {on_max_turns!r}")
        _check(_positive(tool_concurrency), f"tool_concurrency must be a positive integer, not {tool_concurrency!r}")
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
        _sync_runner().run(self.close())

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


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _checked_deps_type(deps_type: Any) -> Any:
    if deps_type is None:
        return None
    try:
        isinstance(None, typing.get_origin(deps_type) or deps_type)
    except TypeError:
        raise ConfigError(f"deps_type must be a class that isinstance() can check, not {deps_type!r}") from None
    return deps_type


def _type_name(cls: Any) -> str:
    return cls.__name__ if isinstance(cls, type) else repr(cls)


def _exit_conditions(names: Sequence[str]) -> frozenset[str]:
    if isinstance(names, str) or not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
        raise ConfigError(f"exit_conditions must be a list of tool names, e.g. ['final_answer'], not {names!r}")
    return frozenset(names)


def _check_exit_tools(names: frozenset[str], tools: Mapping[str, Tool]) -> None:
    unknown = sorted(names - set(tools))
    if unknown:
        raise ConfigError(f"exit_conditions name no tool of the agent: {', '.join(map(repr, unknown))}; "
                          f"its tools: {', '.join(tools) or 'none'}")


def _prompt_message(prompt: str | Message | Sequence[str | Part] | None) -> Message | None:
    """The user message a prompt stands for; `ConfigError` when it holds nothing to answer."""
    if prompt is None or isinstance(prompt, Message):
        if prompt is not None and prompt.role != "user":
            raise ConfigError(f"the prompt must be a user Message, not a {prompt.role} one")
        return prompt
    if isinstance(prompt, str):  # the commonest prompt, without the list's checks
        if not prompt.strip():
            raise ConfigError("the prompt is empty: pass the text the agent should answer")
        return Message.from_valid_parts("user", [TextPart.from_valid(prompt)])
    items = prompt
    if not isinstance(items, Sequence) or not items:
        raise ConfigError(f"the prompt must be text, a user Message or a list of text and parts, not {prompt!r}")
    parts: list[Part] = []
    for item in items:
        if isinstance(item, str):
            parts.append(TextPart(text=item))
        elif isinstance(item, TextPart | ImagePart | FilePart | DocumentPart):
            parts.append(item)
        else:
            raise ConfigError(f"a prompt list holds text, TextPart, ImagePart, FilePart or DocumentPart, "
                              f"not {type(item).__name__}")
    if not any(not isinstance(p, TextPart) or p.text.strip() for p in parts):
        raise ConfigError("the prompt is empty: pass the text the agent should answer")
    return Message.from_valid_parts("user", parts)


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


_sync_loops = threading.local()


async def _noting(failures: list[Exception], closing: Awaitable[Any]) -> None:
    """Await `closing`; what it raises joins `failures`."""
    try:
        await closing
    except Exception as exc:
        failures.append(exc)


def _sync_runner() -> asyncio.Runner:
    runner: asyncio.Runner | None = getattr(_sync_loops, "runner", None)
    if runner is None:
        runner = _sync_loops.runner = asyncio.Runner()
        atexit.register(runner.close)
    return runner


@dataclass
class _Options:
    history: list[Message] | None = None
    max_turns: int | None = None
    session_id: str | None = None
    user: str | None = "default"
    store: SessionStore | None = None
    wait: float = 5.0
    approvals: dict[str, Answer] | None = None
    audit: AuditLines | None = None
    create: bool = True
    prompt_id: str | None = None
    model_settings: ModelSettings | None = None
    deps: Any = None
    has_deps: bool = False
    documents: tuple[DocumentPart, ...] = ()
    tools: tuple[Tool, ...] = ()
    opening: tuple[Event, ...] = ()


class PromptRequest:
    """One prompt to an agent, configured fluently and then run.

    `await request`, `request.run_sync()` or `async for event in request.stream()`.
    """

    def __init__(self, agent: Agent, prompt: str | Message | Sequence[str | Part] | None) -> None:
        self.agent = agent
        self.message = _prompt_message(prompt)  # None for a resumption (`Agent.resume`): the run goes on from the log
        self._options = _Options()
        self.result: RunResult | None = None
        """After `.stream()` finishes: the run's result."""
        self._active: Run | None = None

    def with_history(self, history: list[Message]) -> PromptRequest:
        """Use `history` as the prior conversation; this run's messages are appended to it."""
        if not isinstance(history, list) or not all(isinstance(m, Message) for m in history):
            raise ConfigError("with_history() takes a list of Message objects")
        self._options.history = history
        return self

    def multi_turn(self, max_turns: int) -> PromptRequest:
        """Allow this run up to `max_turns` model calls (overrides the agent's `max_turns`)."""
        if not _positive(max_turns):
            raise ConfigError(f"multi_turn() takes a positive integer, not {max_turns!r}")
        self._options.max_turns = max_turns
        return self

    def model_settings(
        self, settings: ModelSettings | Mapping[str, Any] | None = None, **fields: Any
    ) -> PromptRequest:
        """Use these model settings for this run, laid over the agent's (their set fields win).

        `agent.prompt("hi").model_settings(temperature=0, max_tokens=200)`, or pass a
        `ModelSettings` (or a dict of its fields); calling it again lays the new ones over.

        Raises:
            ConfigError: A field is unknown or its value is invalid.
        """
        given = ModelSettings.parse(settings).merged(ModelSettings.parse(fields))
        held = self._options.model_settings
        self._options.model_settings = given if held is None else held.merged(given)
        return self

    def deps(self, deps: Any) -> PromptRequest:
        """Give this run `deps`: its tools and hooks read them as `ctx.deps` (see `RunContext`).

        Raises:
            ConfigError: The agent has a `deps_type` and `deps` is not an instance of it.
        """
        expected = self.agent.deps_type
        if expected is not None and not isinstance(deps, typing.get_origin(expected) or expected):
            raise ConfigError(f"agent {self.agent.name!r} takes deps of type {_type_name(expected)}, "
                              f"not {type(deps).__name__}")
        self._options.deps, self._options.has_deps = deps, True
        return self

    def documents(self, *documents: DocumentPart) -> PromptRequest:
        """Give the model these documents for this run only.

        They join the latest user message of each model call of this run, merged into one
        block with any documents it holds; they are not stored in the session's log and
        are not sent again on later runs unless given again. Calling it again adds more.

        Raises:
            ConfigError: An argument is not a `DocumentPart`.
        """
        for document in documents:
            if not isinstance(document, DocumentPart):
                raise ConfigError(f"documents() takes DocumentPart objects, not {type(document).__name__}: "
                                  'DocumentPart(title="...", text="...")')
        self._options.documents += documents
        return self

    def tools(self, *tools: Tool) -> PromptRequest:
        """Offer the model these tools too, for this run only (a front end's own tools, say).

        Raises:
            ConfigError: An argument is not a `Tool`, or two tools (the agent's included) share a name.
        """
        for tool in tools:
            if not isinstance(tool, Tool):
                raise ConfigError(f"tools() takes Tool objects, not {type(tool).__name__}: wrap a function in @tool")
        names = [t.name for t in (*self._options.tools, *tools)]
        offered = {spec.name for spec in self.agent.tool_catalog().specs}
        taken = {n for n in names if names.count(n) > 1} | (set(names) & offered)
        if taken:
            raise ConfigError(f"tools() would offer two tools named {', '.join(sorted(taken))}: rename one")
        self._options.tools += tools
        return self

    def session(
        self,
        session_id: str,
        *,
        user: str | None = "default",
        store: SessionStore | None = None,
        wait: float = 5.0,
        create: bool = True,
        prompt_id: str | None = None,
    ) -> PromptRequest:
        """Load and append to session `session_id`.

        Args:
            session_id: The session's id.
            user: Its owner (None: any owner; a session created then belongs to "default").
            store: The store (default: the agent's `session_store`).
            wait: Seconds to wait for another run on this session before `SessionBusy`.
            create: Create the session when it is missing (else `SessionNotFound`).
            prompt_id: The id the prompt's event keeps in the log (a front end's own message
                id, to know it again); None: the store makes one.
        """
        if not isinstance(session_id, str) or not session_id:
            raise ConfigError(f"session() takes a non-empty session id, not {session_id!r}")
        if prompt_id is not None and (not isinstance(prompt_id, str) or not prompt_id):
            raise ConfigError(f"session() takes a non-empty string as prompt_id, not {prompt_id!r}")
        options = self._options
        options.session_id, options.user, options.store, options.wait = session_id, user, store, wait
        options.create, options.prompt_id = create, prompt_id
        return self

    def cancel(self) -> bool:
        """Stop this request's run, from any thread or task; return whether it was running.

        The run ends within moments with `stop_reason == "cancelled"`: the model call or the
        tools in progress are cancelled, calls left open are answered as not run (or as
        cancelled while running), and the log says "run cancelled". A tool running in a
        worker thread cannot be interrupted; its result is dropped.
        """
        run = self._active
        if run is None:
            return False
        run.cancel()
        return True

    def _run(self, queue: StreamQueue | None = None) -> Any:
        options = self._options
        if self.agent.deps_type is not None and not options.has_deps:
            raise ConfigError(f"agent {self.agent.name!r} needs deps of type {_type_name(self.agent.deps_type)}: "
                              "give them with agent.prompt(...).deps(value)")
        target = None
        if options.session_id is not None:
            store = options.store or self.agent.session_store
            target = SessionTarget(store, options.session_id, options.user, create=options.create, wait=options.wait,
                                   prompt_id=options.prompt_id, opening=options.opening)
        run = Run(self.agent, self.message, history=options.history, max_turns=options.max_turns, session=target,
                  queue=queue, approvals=options.approvals, audit=options.audit, deps=options.deps,
                  documents=options.documents, model_settings=self.agent.model_settings.merged(options.model_settings),
                  tools={t.name: t for t in options.tools})
        self._active = run
        return self._execute(run)

    async def _execute(self, run: Run) -> RunResult:
        try:
            return await run.execute()
        finally:
            if self._active is run:
                self._active = None

    def __await__(self) -> Generator[Any, None, RunResult]:
        return self._run().__await__()  # type: ignore[no-any-return]

    def run_sync(self) -> RunResult:
        """Run to the end, blocking (not from inside a running event loop: use `await` there).

        Every `run_sync` of a thread runs on one event loop that stays open, so the
        model's connection pool, opened on it by the first call, serves the next ones.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            # the caller's context, not the one the thread's runner copied on its first run (a stale span)
            return _sync_runner().run(self._run(), context=contextvars.copy_context())  # type: ignore[no-any-return]
        raise RuntimeError("run_sync() cannot run inside an event loop; use `await agent.prompt(...)` instead")

    async def stream(self, *, stored_copies: bool = False) -> AsyncIterator[Event]:
        """Run, yielding events as they happen: stored messages and status, and text deltas.

        Each event comes once, in the log's order. Most come as they are stored, with their
        `seq`; what user code reports while it runs (a tool's `ctx.status`/`ctx.partial`,
        log records, hooks' and sub-agents' lines) comes at once, before it is stored, with
        `seq` None and the `id` it will keep (and so do the events recorded before it and
        not yet stored). Closing the iterator early cancels the run.

        Args:
            stored_copies: Also yield the stored copy (with its `seq`) of each event that came
                before it was stored, once it is: what a relay serving reconnecting clients
                needs to learn where each event sits in the log.
        """
        queue = StreamQueue(commits=stored_copies)

        async def produce() -> RunResult:
            try:
                return await self._run(queue)  # type: ignore[no-any-return]
            finally:
                queue.put(None)

        task = asyncio.ensure_future(produce())
        try:
            ended = False
            while not ended:
                for event in await queue.take():
                    if event is None:  # the run's end: nothing follows
                        ended = True
                        break
                    yield event
            await task
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self.result = task.result()
