"""Scripted model answers with fixed token counts, so the spans' usage figures are known."""

from __future__ import annotations

from typing import Any

from hookline import ToolCallPart
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.usage import Usage


def script(*steps: ModelResponse) -> FunctionModel:
    """A model answering with `steps` in order, whatever it is asked."""
    answers = list(steps)

    def next_answer(request: ModelRequest) -> ModelResponse:
        assert answers, "the model was called more often than scripted"
        return answers.pop(0)

    return FunctionModel(next_answer)


def call(call_id: str, name: str, /, **arguments: Any) -> ModelResponse:
    """A model answer holding one tool call (3 input and 2 output tokens)."""
    return ModelResponse(tool_calls=[ToolCallPart(id=call_id, name=name, arguments=arguments)],
                         usage=Usage(input_tokens=3, output_tokens=2), model_name="scripted-1")


def answer(text: str) -> ModelResponse:
    """A final text answer (5 input and 1 output tokens)."""
    return ModelResponse(text=text, usage=Usage(input_tokens=5, output_tokens=1), model_name="scripted-1")
