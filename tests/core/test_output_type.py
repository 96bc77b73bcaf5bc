"""`Agent(output_type=...)`: the final answer validated into a type, with one retry."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from hookline import Agent, ConfigError, ModelError
from hookline.models import FunctionModel, ModelRequest, ModelResponse

pytestmark = pytest.mark.anyio


class Weather(BaseModel):
    city: str
    degrees: int


def scripted(*answers: str) -> tuple[FunctionModel, list[ModelRequest]]:
    requests: list[ModelRequest] = []
    queue = list(answers)

    def script(request: ModelRequest) -> ModelResponse:
        requests.append(request)
        return ModelResponse(text=queue.pop(0))

    return FunctionModel(script), requests


async def test_the_answer_is_validated_into_the_output_type() -> None:
    model, requests = scripted('{"city": "Oslo", "degrees": 3}')
    result = await Agent(model=model, output_type=Weather).prompt("weather?")
    assert result.output == Weather(city="Oslo", degrees=3)
    assert requests[0].output_schema is not None
    assert requests[0].output_schema["properties"]["degrees"]["type"] == "integer"


async def test_an_invalid_answer_is_sent_back_once_with_the_error() -> None:
    model, requests = scripted('{"city": "Oslo"}', '{"city": "Oslo", "degrees": 3}')
    result = await Agent(model=model, output_type=Weather).prompt("weather?")
    assert result.output.degrees == 3
    retry_prompt = requests[1].messages[-1]
    assert retry_prompt.role == "user"
    assert "degrees" in retry_prompt.text


async def test_a_second_invalid_answer_fails_clearly() -> None:
    model, _ = scripted("sunny", "still sunny")
    with pytest.raises(ModelError, match="does not match the output type"):
        await Agent(model=model, output_type=Weather).prompt("weather?")


def test_an_output_type_that_is_not_json_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="output_type"):
        Agent(model=FunctionModel(lambda r: ModelResponse()), output_type=object())
