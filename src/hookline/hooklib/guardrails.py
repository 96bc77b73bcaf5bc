"""Guardrails: checks that stop a run, hold an answer back or refuse a tool call.

A guardrail wraps a *check*: a plain or async function that gets what it guards and
returns None when it passes, or a reason (a string) when it trips. A trip is recorded by
the loop as a status line "guardrail no_pii tripped: ..." whose `metadata["guardrail"]`
holds the guardrail's `name`, the `reason`, the `action` ("stop" or "reject") and the
`kind` ("input", "output" or "tool"); where it stops the run, the run ends with
`stop_reason == "guardrail"` and its last line carries `metadata["run_end"] == "guardrail"`
(`State.trip_guardrail`).

- `InputGuardrail` (at `before_llm`) checks the prompt, on a run's first model call; a trip
  stops the run before the model's answer appears. With `parallel=True` the check runs beside
  the model call: the call's streamed text is held until the check passes, and the call is
  cancelled when it trips.
- `OutputGuardrail` (at `after_llm`) checks each answer without tool calls; a trip stops the
  run and holds the answer back: it joins neither the conversation nor the log, and (with
  `hold_stream=True`, the default) its text never reaches a stream.
- `ToolGuardrail` (at `before_tool`) checks each tool call; a trip with `on_trip="reject"`
  answers the call with the reason as an error the model reads, and the run goes on; with
  `"stop"` the run stops, its calls not run.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from hookline.errors import ConfigError
from hookline.messages import Message, ToolCallPart, ToolResultPart

if TYPE_CHECKING:
    from hookline.state import State

__all__ = ["Check", "InputGuardrail", "OutputGuardrail", "ToolGuardrail"]

T = TypeVar("T")

Check = Callable[[T], "str | Awaitable[str | None] | None"]
"""A guardrail's check: what it guards, to None (it passes) or the reason it trips."""


def _name_of(check: Callable[..., Any], name: str | None, owner: str) -> str:
    if not callable(check):
        raise ConfigError(f"{owner} needs a check function, not {type(check).__name__}")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ConfigError(f"{owner}(name=...) takes a non-empty string, not {name!r}")
    return name or str(getattr(check, "__name__", owner))


async def _verdict(check: Callable[[T], Any], value: T) -> str | None:
    """What `check` says of `value`: None, or the reason it trips."""
    said = check(value)
    if inspect.isawaitable(said):
        said = await said
    if said is not None and not isinstance(said, str):
        raise TypeError(f"a guardrail's check returns None or a reason (a string), not {type(said).__name__}")
    return said or None


def _sync_verdict(check: Callable[[T], Any], value: T, owner: str) -> str | None:
    said = check(value)
    if inspect.isawaitable(said):
        if inspect.iscoroutine(said):
            said.close()
        raise TypeError(f"{owner}'s check is async: call run_async (the loop does)")
    if said is not None and not isinstance(said, str):
        raise TypeError(f"a guardrail's check returns None or a reason (a string), not {type(said).__name__}")
    return said or None


def _prompt(state: State) -> Message | None:
    for message in reversed(state.messages):
        if message.role == "user":
            return message
    return None


class InputGuardrail:
    """A guardrail on the prompt: register it at `before_llm`.

    On the first model call of a run (`state.turn == 1`), `check` gets the prompt (the
    conversation's last user message) and returns None, or the reason it trips; a trip
    stops the run with `stop_reason == "guardrail"` and the model's answer never appears.

    By default the check runs before the model is called: a trip costs no model call, a
    pass costs the check's time. With `parallel=True` it runs beside the model call
    (`State.run_beside_model`): the model's streamed text is held until the check ends;
    a trip cancels the call and nothing of its answer reaches the log or a stream, a pass
    lets the held text out and the call goes on. Worth it for a slow check (another model).

    Example:
        ```python
        def no_email(prompt: Message) -> str | None:
            return "the prompt holds an email address" if "@" in prompt.text else None

        agent = Agent(model=..., hooks={"before_llm": [InputGuardrail(no_email, parallel=True)]})
        ```

    Args:
        check: A plain or async function of the prompt `Message`: None, or the reason it trips.
        name: The guardrail's name in the record (default: the check's name).
        parallel: Run the check beside the model call instead of before it.
    """

    def __init__(self, check: Check[Message], *, name: str | None = None, parallel: bool = False) -> None:
        self.check = check
        self.name = _name_of(check, name, "InputGuardrail")
        self.parallel = parallel

    def __repr__(self) -> str:
        return f"InputGuardrail({self.name!r}, parallel={self.parallel})"

    def run(self, state: State) -> None:
        """Check the prompt with a plain `check` (the loop calls `run_async`, which takes both kinds)."""
        prompt = _prompt(state) if state.turn == 1 else None
        if prompt is not None:
            self._judge(state, _sync_verdict(self.check, prompt, "InputGuardrail"))

    async def run_async(self, state: State) -> None:
        """Check the prompt on the run's first model call: before it, or beside it (`parallel`)."""
        prompt = _prompt(state) if state.turn == 1 else None
        if prompt is None:
            return
        if self.parallel:
            state.run_beside_model(self._check_beside(state, prompt), self.name)
        else:
            self._judge(state, await _verdict(self.check, prompt))

    async def _check_beside(self, state: State, prompt: Message) -> None:
        self._judge(state, await _verdict(self.check, prompt))

    def _judge(self, state: State, reason: str | None) -> None:
        if reason is not None:
            state.trip_guardrail(self.name, reason, kind="input")


class OutputGuardrail:
    """A guardrail on the answer: register it at `after_llm`.

    `check` gets each model answer without tool calls (a candidate final answer) and
    returns None, or the reason it trips. A trip stops the run with `stop_reason ==
    "guardrail"` and holds the answer back: it joins neither the conversation, the log nor
    the result (`output` stays empty).

    With `hold_stream=True` (the default) the text of every model call of the agent is held
    from streams until its `after_llm` hooks have run, so an answer held back was never
    streamed: a stream gets each answer whole, once it passed. `hold_stream=False` streams
    the text as the model makes it; a tripped answer's deltas then went out, and its message
    never follows them.

    Example:
        ```python
        def no_secret(answer: Message) -> str | None:
            return "the answer names the password" if "hunter2" in answer.text else None

        agent = Agent(model=..., hooks={"after_llm": [OutputGuardrail(no_secret)]})
        ```

    Args:
        check: A plain or async function of the answer `Message`: None, or the reason it trips.
        name: The guardrail's name in the record (default: the check's name).
        hold_stream: Hold each model call's streamed text until the answer has passed.
    """

    def __init__(self, check: Check[Message], *, name: str | None = None, hold_stream: bool = True) -> None:
        self.check = check
        self.name = _name_of(check, name, "OutputGuardrail")
        self.holds_stream = hold_stream
        """What the loop reads: hold the streamed text of the agent's model calls until `after_llm` ran."""

    def __repr__(self) -> str:
        return f"OutputGuardrail({self.name!r}, hold_stream={self.holds_stream})"

    def run(self, state: State) -> None:
        """Check the answer with a plain `check` (the loop calls `run_async`, which takes both kinds)."""
        answer = state.response
        if answer is not None and not answer.tool_calls:
            self._judge(state, _sync_verdict(self.check, answer, "OutputGuardrail"))

    async def run_async(self, state: State) -> None:
        """Check the answer, when it holds no tool calls."""
        answer = state.response
        if answer is not None and not answer.tool_calls:
            self._judge(state, await _verdict(self.check, answer))

    def _judge(self, state: State, reason: str | None) -> None:
        if reason is not None:
            state.trip_guardrail(self.name, reason, kind="output")


class ToolGuardrail:
    """A guardrail on tool calls: register it at `before_tool`.

    `check` gets each pending call (of the tools named in `tools`, or of every tool) and
    returns None, or the reason it trips. On a trip, `on_trip="reject"` (the default)
    answers the call with the reason as an error result the model reads, without running
    it, and the run goes on; `on_trip="stop"` stops the run (`stop_reason ==
    "guardrail"`), its pending calls answered as not run.

    Example:
        ```python
        def inside_tmp(call: ToolCallPart) -> str | None:
            path = call.arguments.get("path", "") if isinstance(call.arguments, dict) else ""
            return None if path.startswith("/tmp/") else f"{path} is outside /tmp"

        agent = Agent(model=..., tools=[delete], hooks={"before_tool": [ToolGuardrail(inside_tmp, ["delete"])]})
        ```

    Args:
        check: A plain or async function of the `ToolCallPart`: None, or the reason it trips.
        tools: The names of the tools it guards (None: every tool).
        on_trip: "reject" (the model is told why, the run goes on) or "stop" (the run stops).
        name: The guardrail's name in the record (default: the check's name).
    """

    def __init__(self, check: Check[ToolCallPart], tools: Sequence[str] | None = None, *,
                 on_trip: Literal["reject", "stop"] = "reject", name: str | None = None) -> None:
        if on_trip not in ("reject", "stop"):
            raise ConfigError(f"ToolGuardrail(on_trip=...) must be 'reject' or 'stop', not {on_trip!r}")
        if tools is not None and (isinstance(tools, str) or not all(isinstance(t, str) for t in tools)):
            raise ConfigError(f"ToolGuardrail(tools=...) takes a list of tool names or None, not {tools!r}")
        self.check = check
        self.name = _name_of(check, name, "ToolGuardrail")
        self.tools = frozenset(tools) if tools is not None else None
        self.on_trip = on_trip

    def __repr__(self) -> str:
        return f"ToolGuardrail({self.name!r}, on_trip={self.on_trip!r})"

    def run(self, state: State) -> None:
        """Check each guarded call with a plain `check` (the loop calls `run_async`, which takes both kinds)."""
        for call in self._guarded(state):
            self._judge(state, call, _sync_verdict(self.check, call, "ToolGuardrail"))

    async def run_async(self, state: State) -> None:
        """Check each guarded pending call."""
        for call in self._guarded(state):
            self._judge(state, call, await _verdict(self.check, call))

    def _guarded(self, state: State) -> list[ToolCallPart]:
        return [c for c in state.tool_calls if self.tools is None or c.name in self.tools]

    def _judge(self, state: State, call: ToolCallPart, reason: str | None) -> None:
        if reason is None:
            return
        stop = self.on_trip == "stop"
        if not stop:
            text = f"the call to {call.name} was refused by guardrail {self.name}: {reason}"
            state.skip_tool(call.id, ToolResultPart(call_id=call.id, content=text, is_error=True, name=call.name))
        state.trip_guardrail(self.name, reason, stop=stop, kind="tool", call_id=call.id, tool=call.name)
