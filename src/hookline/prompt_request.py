"""`PromptRequest`: one prompt to an agent, built fluently, then awaited, run or streamed.

```python
result = await agent.prompt("2+3?").session("s-1").deps(db)
result = agent.prompt("2+3?").run_sync()
async for event in agent.prompt("go").session("s-1").stream(): ...
```
"""

from __future__ import annotations

import asyncio
import contextvars
import typing
from collections.abc import AsyncIterator, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hookline._checks import positive, type_name
from hookline._run.loop import Run
from hookline._run.prompt_record import SessionTarget
from hookline._run.recorder import StreamQueue
from hookline._run.resume import Answer, AuditLines
from hookline._sync import sync_runner
from hookline.agent_spec import RequestedAgent
from hookline.errors import ConfigError
from hookline.events import Event
from hookline.messages import DocumentPart, FilePart, ImagePart, Message, Part, TextPart
from hookline.models import ModelSettings
from hookline.result import RunResult
from hookline.sessions import SessionStore
from hookline.tools import Tool

__all__ = ["PromptRequest"]


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

    def __init__(self, agent: RequestedAgent, prompt: str | Message | Sequence[str | Part] | None) -> None:
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
        if not positive(max_turns):
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
            raise ConfigError(f"agent {self.agent.name!r} takes deps of type {type_name(expected)}, "
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
            raise ConfigError(f"agent {self.agent.name!r} needs deps of type {type_name(self.agent.deps_type)}: "
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
            return sync_runner().run(self._run(), context=contextvars.copy_context())  # type: ignore[no-any-return]
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
