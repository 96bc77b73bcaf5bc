"""A scripted model for the core-loop tests, and the small pieces a script is made of.

`Script(answer("hi"))` answers each model call with its next step and keeps a copy of
every request, checked against the conversation invariant (`invariant.py`) as it comes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hookline import Message, ToolCallPart, ToolResultPart, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.usage import Usage

from .invariant import conversation_error

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


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b
