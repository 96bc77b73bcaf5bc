"""Shared pieces of the core-loop tests: a scripted model that keeps every request it gets,
an independent checker of the conversation invariant, a few tools and a tracing hook.

Test modules import these helpers with `from .conftest import ...`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hookline import HookPoint, Message, State, ToolCallPart, ToolResultPart, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.usage import Usage

Step = ModelResponse | Callable[[ModelRequest], Any]


def call(call_id: str, name: str, /, **arguments: Any) -> ToolCallPart:
    """A tool call as a model would make it."""
    return ToolCallPart(id=call_id, name=name, arguments=arguments)


def calls(*parts: ToolCallPart, text: str = "", input_tokens: int = 0, output_tokens: int = 0) -> ModelResponse:
    """A model answer holding tool calls."""
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    return ModelResponse(text=text, tool_calls=list(parts), usage=usage)


def answer(text: str, *, input_tokens: int = 0, output_tokens: int = 0) -> ModelResponse:
    """A final text answer."""
    return ModelResponse(text=text, usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens))


def conversation_error(messages: Sequence[Message], *, allow_open_tail: bool = False) -> str | None:
    """An independent check of the conversation invariant; None when it holds.

    Each tool call of an assistant message is answered exactly once by the tool messages
    right after it; a tool message answers only such calls; a user message that holds
    calls answers exactly those calls itself; system messages hold neither.
    """
    index = 0
    while index < len(messages):
        message = messages[index]
        problem = _message_error(message, index)
        if problem:
            return problem
        index += 1
        own_calls = [c.id for c in message.tool_calls]
        if message.role != "assistant" or not own_calls:
            continue
        answered: list[str] = []
        while index < len(messages) and messages[index].role == "tool":
            if not all(isinstance(p, ToolResultPart) for p in messages[index].parts):
                return f"#{index}: tool message holds a non-result part"
            answered.extend(p.call_id for p in messages[index].tool_results)
            index += 1
        at_open_tail = allow_open_tail and index == len(messages)
        wrong = len(set(answered)) != len(answered) or not set(answered) <= set(own_calls)
        if wrong or (not at_open_tail and set(answered) != set(own_calls)):
            return f"calls {sorted(own_calls)} answered by {sorted(answered)}"
    return None


def _message_error(message: Message, index: int) -> str | None:
    """What is wrong with one message on its own, before looking at its neighbours."""
    own_calls = [c.id for c in message.tool_calls]
    own_results = [r.call_id for r in message.tool_results]
    if message.role == "tool":
        return f"#{index}: tool message without a call before it"
    if message.role == "system" and (own_calls or own_results):
        return f"#{index}: system message holds calls or results"
    if message.role == "user" and sorted(own_calls) != sorted(own_results):
        return f"#{index}: user message with unmatched calls/results"
    if message.role == "assistant" and own_results:
        return f"#{index}: assistant message holds a result"
    if len(set(own_calls)) != len(own_calls):
        return f"#{index}: repeated call id"
    return None


class Script:
    """A scripted model: the n-th model call gets the n-th step (a response, or a function
    of the request). Keeps a copy of every request and fails loudly on an invalid
    conversation or an unscripted call.

    `Script(...).model` is the `FunctionModel` to give an `Agent`.
    """

    def __init__(self, *steps: Step, name: str = "scripted", repeat_last: bool = False) -> None:
        self.steps = list(steps)
        self.requests: list[ModelRequest] = []
        self.repeat_last = repeat_last
        self.model = FunctionModel(self, name=name)

    def __call__(self, request: ModelRequest) -> Any:
        messages = [m.model_copy(deep=True) for m in request.messages]
        self.requests.append(ModelRequest(messages=messages, tools=list(request.tools)))
        number = len(self.requests)
        problem = conversation_error(request.messages)
        assert problem is None, f"model call {number} got an invalid conversation: {problem}"
        if number > len(self.steps):
            assert self.repeat_last, f"unscripted model call {number}"
            assert self.steps, "a script needs at least one step"
            step = self.steps[-1]
        else:
            step = self.steps[number - 1]
        return step(request) if callable(step) else step

    @property
    def count(self) -> int:
        """How many model calls were made."""
        return len(self.requests)

    def tool_names(self, number: int) -> list[str]:
        """The names of the tools offered on the `number`-th call (1-based)."""
        return [spec.name for spec in self.requests[number - 1].tools]

    def results(self, number: int) -> list[ToolResultPart]:
        """Every tool result the `number`-th request (1-based) held, in order."""
        return [p for m in self.requests[number - 1].messages for p in m.tool_results]

    def shapes(self, number: int) -> list[str]:
        """A compact view of the `number`-th request: `user:hi`, `assistant:calls(c1)`, `tool:c1`."""
        return [shape(m) for m in self.requests[number - 1].messages]


def shape(message: Message) -> str:
    """`user:hi`, `assistant:calls(c1,c2)`, `tool:c1`, `assistant:done`."""
    if message.role == "tool":
        return "tool:" + ",".join(p.call_id for p in message.tool_results)
    if message.tool_calls:
        return f"{message.role}:calls({','.join(c.id for c in message.tool_calls)})"
    return f"{message.role}:{message.text}"


def shapes(messages: Sequence[Message]) -> list[str]:
    """`shape` of each message."""
    return [shape(m) for m in messages]


class Tracer:
    """A class hook recording `(point, turn)` each time it runs; put it under every point."""

    def __init__(self) -> None:
        self.trace: list[tuple[str, int]] = []

    def run(self, state: State) -> None:
        assert state.point is not None
        self.trace.append((state.point.value, state.turn))

    def points(self) -> list[str]:
        return [point for point, _ in self.trace]


def at_every_point(item: Any) -> dict[str, list[Any]]:
    """`{point: [item]}` for every hook point."""
    return {point.value: [item] for point in HookPoint}


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b
