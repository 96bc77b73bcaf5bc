"""`State`: the live run, as every hook sees it, and the decisions hooks record on it.

Hooks change the run only through this object. Flow control (`control`) is recorded here;
per-call decisions (`skip_tool`, `deny_tool`, `interrupt`), injected messages and a replaced
tool result go to the loop's `TurnBuffer`. The loop applies them once every hook of the point
has run; then it checks the conversation.

`State` sits below `Agent` (the agent imports the loop, which builds the state), so it holds
the running agent without importing its class, as Starlette's `Request.app` does.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Awaitable, Mapping
from typing import Any, SupportsIndex

from hookline._run.turn_buffer import TurnBuffer
from hookline.compaction import COMPACTION_AUTHOR, COMPACTION_KEY
from hookline.decision import Decision
from hookline.events import Event
from hookline.hook_points import HookPoint
from hookline.messages import Message, ToolCallPart, ToolResultPart
from hookline.models.base import ModelSettings
from hookline.tools import to_content
from hookline.usage import Usage

__all__ = ["Control", "State", "TrackedMessages"]


class TrackedMessages(list[Message]):
    """A list of messages that notes whether it was changed.

    The loop checks the conversation only after a hook actually edited it, and the prompt
    view extends the list it gave the last model call only while nothing edited either.
    The loop's own appends go through `list.append`, unnoted.
    """

    changed: bool = False
    """Whether it was changed since the loop last checked (the loop resets it)."""
    edits: int = 0
    """How many times it was changed, ever."""

    def _touch(self) -> None:
        self.changed = True
        self.edits += 1

    def __setitem__(self, index: Any, value: Any) -> None:
        self._touch()
        super().__setitem__(index, value)

    def __delitem__(self, index: SupportsIndex | slice) -> None:
        self._touch()
        super().__delitem__(index)

    def __iadd__(self, values: Any) -> TrackedMessages:  # type: ignore[override,misc]
        self._touch()
        super().__iadd__(values)
        return self

    def __imul__(self, times: SupportsIndex) -> TrackedMessages:
        self._touch()
        super().__imul__(times)
        return self

    def append(self, value: Message) -> None:  # noqa: D102
        self._touch()
        super().append(value)

    def insert(self, index: SupportsIndex, value: Message) -> None:  # noqa: D102
        self._touch()
        super().insert(index, value)

    def extend(self, values: Any) -> None:  # noqa: D102
        self._touch()
        super().extend(values)

    def pop(self, index: SupportsIndex = -1) -> Message:  # noqa: D102
        self._touch()
        return super().pop(index)

    def remove(self, value: Message) -> None:  # noqa: D102
        self._touch()
        super().remove(value)

    def clear(self) -> None:  # noqa: D102
        self._touch()
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:  # noqa: D102
        self._touch()
        super().sort(*args, **kwargs)

    def reverse(self) -> None:  # noqa: D102
        self._touch()
        super().reverse()


class Control:
    """Flow-control requests from hooks; the loop reads them after each point."""

    __slots__ = ("continue_requested", "exit_reason", "exit_requested", "rerun_requested")

    def __init__(self) -> None:
        self.exit_requested = False
        self.exit_reason = ""
        self.continue_requested = False
        self.rerun_requested = False

    def exit(self, reason: str = "") -> None:
        """Stop the run once the hooks of this point have run (`stop_reason="hook_exit"`).

        What this point precedes does not happen: from `before_llm` the model is not called,
        from `before_tool` no tool runs (the calls are answered as not run).
        """
        self.exit_requested = True
        self.exit_reason = reason

    def continue_run(self) -> None:
        """In `on_exit`: do not stop; call the model again."""
        self.continue_requested = True

    def rerun_llm(self) -> None:
        """In `after_llm`: discard this response and call the model again."""
        self.rerun_requested = True

    def reset(self) -> None:
        """Forget one-shot requests (continue, rerun) before a point runs."""
        self.continue_requested = False
        self.rerun_requested = False


class State:
    """The live run, passed to every hook.

    The loop builds it and passes its own `TurnBuffer` as `buffer`, where what hooks decide
    waits to be applied (a state built alone gets a buffer of its own).

    Attributes:
        messages: The live conversation the model will see; hooks may edit it.
        data: A dict for the user's own keys, saved with the session.
        control: Flow control: `exit(reason)`, `continue_run()`, `rerun_llm()`.
        response: In `after_llm`: the model's message (may be edited or replaced).
        model_settings: The settings of the next model call; in `before_llm`, assign to change them
            for that call.
        tool_calls: In `before_tool`: the pending calls.
        tool_call: In `after_tool`: the call that ran.
        turn: The 1-based number of the current model call (0 in `before_run`).
        usage: What the run has used so far.
        agent: The running `Agent`.
        session_id: The session's id, or None.
        point: The hook point now running.
    """

    __slots__ = (
        "_buffer",
        "_messages",
        "_model_settings",
        "agent",
        "control",
        "data",
        "point",
        "response",
        "session_id",
        "tool_call",
        "tool_calls",
        "turn",
        "usage",
    )

    def __init__(
        self,
        agent: Any,
        messages: list[Message],
        *,
        data: dict[str, Any] | None = None,
        session_id: str | None = None,
        buffer: TurnBuffer | None = None,
        model_settings: ModelSettings | None = None,
    ) -> None:
        self.agent: Any = agent
        self._messages = TrackedMessages(messages)
        self.data: dict[str, Any] = data if data is not None else {}
        self.session_id = session_id
        self.control = Control()
        self.usage = Usage()
        self.turn = 0
        self.point: HookPoint | None = None
        self.response: Message | None = None
        self.tool_calls: list[ToolCallPart] = []
        self.tool_call: ToolCallPart | None = None
        self._buffer = buffer if buffer is not None else TurnBuffer()
        self._model_settings = model_settings if model_settings is not None else ModelSettings()

    @property
    def messages(self) -> TrackedMessages:
        """The live conversation the model will see; hooks may edit it in place or replace it."""
        return self._messages

    @messages.setter
    def messages(self, value: list[Message]) -> None:
        self._messages = TrackedMessages(value)
        self._messages.changed = True

    @property
    def model_settings(self) -> ModelSettings:
        """The settings of the next model call: the agent's, the run's over them, then this call's.

        In `before_llm`, assign a `ModelSettings` (or a dict of its fields) to change them for
        this one call: the fields it sets win, the others keep their values (each assignment is
        laid over the last). The next call starts again from the run's settings.
        """
        held = self._buffer.model_settings
        return self._model_settings if held is None else self._model_settings.merged(held)

    @model_settings.setter
    def model_settings(self, value: ModelSettings | Mapping[str, Any]) -> None:
        if self.point is not HookPoint.BEFORE_LLM:
            raise RuntimeError(f"state.model_settings can only be set in before_llm, not in {self.point}")
        given = ModelSettings.parse(value)
        held = self._buffer.model_settings
        self._buffer.model_settings = given if held is None else held.merged(given)

    @property
    def tool_result(self) -> ToolResultPart | None:
        """In `after_tool`: the call's result. Assign a `ToolResultPart`, or any value as its content."""
        return self._buffer.tool_result

    @tool_result.setter
    def tool_result(self, value: Any) -> None:
        current = self._buffer.tool_result
        if current is None or self.tool_call is None:
            raise RuntimeError("state.tool_result can only be replaced in after_tool")
        if not isinstance(value, ToolResultPart):
            value = current.model_copy(update={"content": to_content(value)})
        elif value.call_id != self.tool_call.id:
            raise ValueError(f"the new result answers call {value.call_id!r}, not {self.tool_call.id!r}")
        self._buffer.tool_result = value

    def inject(self, message: Message) -> None:
        """Add `message` to the conversation at a safe place, and to the run's record.

        The message joins `messages` once the hooks of the current point have run. While
        tool calls await their results (from `after_llm` until the results are recorded),
        it waits and is placed right after those results: it never lands between a call
        and its result.
        """
        if not isinstance(message, Message):
            raise TypeError(f"inject() takes a Message, e.g. Message.user('...'), not {type(message).__name__}")
        self._buffer.inject(message)

    def skip_tool(self, call_id: str, result: Any) -> None:
        """In `before_tool`: answer the call with `result` without running the tool."""
        call = self._pending_call(call_id, "skip_tool")
        if isinstance(result, ToolResultPart):
            if result.call_id != call_id:
                raise ValueError(f"skip_tool({call_id!r}) was given a result answering call {result.call_id!r}")
            part = result
        else:
            part = ToolResultPart(call_id=call_id, content=to_content(result), name=call.name)
        self._buffer.decisions[call_id] = Decision("skip", result=part)

    def deny_tool(self, call_id: str, reason: str = "") -> None:
        """In `before_tool`: refuse the call; the model is told it was denied, and why."""
        call = self._pending_call(call_id, "deny_tool")
        text = f"the call to {call.name} was denied" + (f": {reason}" if reason else "")
        self._buffer.decisions[call_id] = Decision(
            "deny", result=ToolResultPart(call_id=call_id, content=text, is_error=True, name=call.name), reason=reason
        )

    def interrupt(self, call_id: str, reason: str = "") -> None:
        """In `before_tool`: pause the run for human approval of this call (needs a session to resume)."""
        self._pending_call(call_id, "interrupt")
        self._buffer.decisions[call_id] = Decision("interrupt", reason=reason)

    def compact(self, cut: int, summary: Message, **details: Any) -> None:
        """Replace the first `cut` messages of the conversation with `summary`, and record the compaction.

        Once the hooks of this point have run, the loop records `summary` in the log as a
        message authored "compaction", whose `metadata["compaction"]` holds an `id`, how many
        messages it `replaced`, how many it `kept` after it, and `details`. The log keeps
        every message; the next run on the session (in any process, or a fork) starts from
        the summary and the kept messages, without summarising again, until the compaction is
        undone (`hookline.compaction.compacted`).

        Raises:
            ValueError: `cut` keeps nothing or replaces nothing, or parts tool results from their call.
        """
        messages = self._messages
        if not 0 < cut < len(messages) or messages[cut].role == "tool":
            raise ValueError(f"state.compact({cut}): the cut must keep the last message and never part tool "
                             f"results from their call (a conversation of {len(messages)} messages)")
        record = {"id": uuid.uuid4().hex, "replaced": cut, "kept": len(messages) - cut, **details}
        messages[:cut] = [summary]
        self._buffer.records.append(Event(author=COMPACTION_AUTHOR, kind="message", role=summary.role,
                                          parts=list(summary.parts), metadata={COMPACTION_KEY: record}))

    def trip_guardrail(self, name: str, reason: str, *, stop: bool = True, **details: Any) -> None:
        """Record that guardrail `name` tripped, and why; with `stop`, end the run (`stop_reason="guardrail"`).

        Once the hooks of this point have run, the loop records the trip: a status line
        "guardrail no_pii tripped: ..." (a marker with agent status off) whose
        `metadata["guardrail"]` holds `name`, `reason`, `action` ("stop" or "reject") and
        `details`. A stop from `after_llm` holds the model's message back: it never joins the
        conversation nor the log. Without `stop` the run goes on (e.g. a tool guardrail that
        answered the call with `skip_tool`). The hooks of `hookline.hooklib.guardrails` call it.
        """
        self._buffer.trips.append((str(name), str(reason), stop, details))

    def run_beside_model(self, check: Awaitable[None], name: str = "check") -> None:
        """In `before_llm`: run `check` while the model answers this call, instead of before it.

        The model's streamed text is held until every such check has ended; a check that
        trips a guardrail (`trip_guardrail`) cancels the model call, and nothing of its
        answer reaches the log or a stream. A check that raises fails the run (`HookError`,
        naming `name`).
        """
        if self.point is not HookPoint.BEFORE_LLM:
            if inspect.iscoroutine(check):
                check.close()  # never to be awaited: no "never awaited" warning
            raise RuntimeError(f"state.run_beside_model() can only be called in before_llm, not in {self.point}")
        self._buffer.beside.append((name, check))

    def _pending_call(self, call_id: str, method: str) -> ToolCallPart:
        if self.point is not HookPoint.BEFORE_TOOL:
            raise RuntimeError(f"state.{method}() can only be called in before_tool, not in {self.point}")
        for call in self.tool_calls:
            if call.id == call_id:
                return call
        known = ", ".join(c.id for c in self.tool_calls)
        raise ValueError(f"state.{method}({call_id!r}): no pending call has that id; pending: {known}")

    def __repr__(self) -> str:
        return f"State(point={self.point}, turn={self.turn}, messages={len(self._messages)})"
