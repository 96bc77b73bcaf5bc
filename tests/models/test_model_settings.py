"""`ModelSettings`: validated once, mapped by each adapter to its provider's parameters.

What a provider has no counterpart for is left out with a debug log on `hookline.models`,
never an error. The Responses API's mapping is tested in test_openai_responses.py; how the
agent, a run and a hook combine their settings in tests/core/test_model_settings_merge.py.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx2
import pytest

from hookline import ConfigError, Message, ModelSettings
from hookline.models import ModelRequest, ToolSpec
from hookline.models.anthropic import DEFAULT_MAX_TOKENS, THINKING_BUDGETS, AnthropicModel
from hookline.models.local import _mapped
from hookline.models.openai import OpenAIModel
from hookline.testing import FakeAnthropicServer, FakeOpenAIServer

pytestmark = pytest.mark.anyio

ADD = ToolSpec(name="add", parameters={"type": "object", "properties": {"a": {"type": "integer"}}})
EVERYTHING = ModelSettings(
    temperature=1.5, max_tokens=300, tool_choice="add", parallel_tool_calls=False, reasoning_effort="low",
    stop=["END", "STOP"], extra_body={"seed": 7}, extra_headers={"X-Request-Tag": "t-1"},
)


def ask(settings: ModelSettings, *, tools: bool = True) -> ModelRequest:
    return ModelRequest(messages=[Message.user("hi")], tools=[ADD] if tools else [], model_settings=settings)


# --- validation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"temperature": 2.5}, "temperature: Input should be less than or equal to 2"),
        ({"temperature": True}, "temperature: Input should be a valid number"),
        ({"max_tokens": 0}, "max_tokens: Input should be greater than or equal to 1"),
        ({"max_tokens": "100"}, "max_tokens: Input should be a valid integer"),
        ({"tool_choice": "  "}, "tool_choice: Value error, must not be empty"),
        ({"parallel_tool_calls": "no"}, "parallel_tool_calls: Input should be a valid boolean"),
        ({"reasoning_effort": "max"}, "reasoning_effort: Input should be 'minimal', 'low', 'medium' or 'high'"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop: List should have at most 4 items"),
        ({"stop": [""]}, "stop: Value error, a stop sequence must not be empty"),
        ({"extra_headers": {"X-N": 1}}, "extra_headers.X-N: Input should be a valid string"),
        ({"temprature": 0.1}, "temprature: Extra inputs are not permitted"),
    ],
)
def test_a_bad_setting_is_a_config_error_naming_it(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError, match="invalid model settings: ") as raised:
        ModelSettings(**fields)

    assert named in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_settings_parse_from_a_dict_and_refuse_other_types() -> None:
    assert ModelSettings.parse({"temperature": 0}) == ModelSettings(temperature=0.0)
    assert ModelSettings.parse(None) == ModelSettings()
    assert ModelSettings.parse(EVERYTHING) is EVERYTHING
    with pytest.raises(ConfigError, match="must be a ModelSettings or a dict, not list"):
        ModelSettings.parse([("temperature", 0)])  # type: ignore[arg-type]


def test_later_set_fields_win_and_extras_merge_key_by_key() -> None:
    agent = ModelSettings(temperature=0.2, max_tokens=100, extra_headers={"A": "1", "B": "agent"})
    run = ModelSettings(temperature=0.7, extra_headers={"B": "run"}, extra_body={"seed": 1})

    merged = agent.merged(run, None, ModelSettings(stop=["X"]))

    assert merged == ModelSettings(temperature=0.7, max_tokens=100, stop=["X"], extra_body={"seed": 1},
                                   extra_headers={"A": "1", "B": "run"})
    assert agent.given() == {"temperature": 0.2, "max_tokens": 100, "extra_headers": {"A": "1", "B": "agent"}}
    assert repr(ModelSettings(max_tokens=5)) == "ModelSettings(max_tokens=5)"


# --- Chat Completions ----------------------------------------------------------------------


async def test_chat_completions_maps_every_field(openai_server: FakeOpenAIServer) -> None:
    openai_server.enqueue_text("a")
    openai_server.enqueue_text("b")
    raw = {"max_completion_tokens": 9, "temperature": 0.0, "tool_choice": "auto"}
    async with OpenAIModel("gpt-4o-mini", base_url=openai_server.base_url, api_key="k", settings=raw) as model:
        await model.request(ask(EVERYTHING))
        await model.request(ask(ModelSettings(tool_choice="required", parallel_tool_calls=True), tools=False))

    body, without = openai_server.requests
    assert (body["temperature"], body["max_tokens"], body["stop"]) == (1.5, 300, ["END", "STOP"])
    assert "max_completion_tokens" not in body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "add"}}
    assert (body["parallel_tool_calls"], body["reasoning_effort"], body["seed"]) == (False, "low", 7)
    assert openai_server.request_headers[0]["x-request-tag"] == "t-1"
    assert "tool_choice" not in without
    assert "parallel_tool_calls" not in without


class ToFake(httpx2.AsyncBaseTransport):
    """Sends every request to the fake server, whatever host it names (here OpenAI's own)."""

    def __init__(self, url: str) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.target = httpx2.URL(url)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.url = request.url.copy_with(scheme=self.target.scheme, host=self.target.host, port=self.target.port)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_openai_itself_gets_max_completion_tokens(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    openai_server.enqueue_text("a")
    async with httpx2.AsyncClient(transport=ToFake(openai_server.url)) as client:
        model = OpenAIModel("o4-mini", api_key="k", http_client=client)
        await model.request(ask(ModelSettings(max_tokens=50), tools=False))
        await model.aclose()

    [body] = openai_server.requests
    assert body["max_completion_tokens"] == 50
    assert "max_tokens" not in body


# --- Anthropic -----------------------------------------------------------------------------


async def request_bodies(server: FakeAnthropicServer, *requests: ModelRequest, **raw: Any) -> list[dict[str, Any]]:
    for _ in requests:
        server.enqueue_text("ok")
    async with AnthropicModel("claude-sonnet-4-6", base_url=server.base_url, api_key="k", settings=raw) as model:
        for request in requests:
            await model.request(request)
    return server.requests


async def test_anthropic_maps_the_fields_it_has(anthropic_server: FakeAnthropicServer) -> None:
    settings = EVERYTHING.model_copy(update={"reasoning_effort": None})

    [body] = await request_bodies(anthropic_server, ask(settings))

    assert (body["temperature"], body["max_tokens"], body["stop_sequences"]) == (1.0, 300, ["END", "STOP"])
    assert body["tool_choice"] == {"type": "tool", "name": "add", "disable_parallel_tool_use": True}
    assert body["seed"] == 7
    assert "thinking" not in body
    assert anthropic_server.request_headers[0]["x-request-tag"] == "t-1"


@pytest.mark.parametrize(
    ("choice", "parallel", "sent"),
    [
        ("auto", None, {"type": "auto"}),
        ("none", False, {"type": "none"}),
        ("required", True, {"type": "any", "disable_parallel_tool_use": False}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
    ],
)
async def test_anthropic_tool_choice(
    anthropic_server: FakeAnthropicServer, choice: str | None, parallel: bool | None, sent: dict[str, Any]
) -> None:
    settings = ModelSettings(tool_choice=choice, parallel_tool_calls=parallel)

    with_tools, without = await request_bodies(anthropic_server, ask(settings), ask(settings, tools=False))

    assert with_tools["tool_choice"] == sent
    assert "tool_choice" not in without


async def test_reasoning_effort_turns_thinking_on_within_max_tokens(anthropic_server: FakeAnthropicServer) -> None:
    bodies = await request_bodies(
        anthropic_server,
        ask(ModelSettings(reasoning_effort="high")),
        ask(ModelSettings(reasoning_effort="high", max_tokens=3000)),
        ask(ModelSettings(reasoning_effort="minimal")),
    )

    budgets = [(body["thinking"]["budget_tokens"], body["max_tokens"]) for body in bodies]
    assert budgets == [
        (THINKING_BUDGETS["high"], THINKING_BUDGETS["high"] + DEFAULT_MAX_TOKENS),
        (2999, 3000),
        (1024, 1024 + DEFAULT_MAX_TOKENS),
    ]


async def test_with_thinking_on_what_anthropic_refuses_is_left_out_and_logged(
    anthropic_server: FakeAnthropicServer, caplog: pytest.LogCaptureFixture
) -> None:
    forced = ModelSettings(reasoning_effort="medium", temperature=0.2, tool_choice="add", parallel_tool_calls=False)
    tight = ModelSettings(reasoning_effort="low", max_tokens=1000)
    with caplog.at_level(logging.DEBUG, logger="hookline.models"):
        thinking, no_room = await request_bodies(anthropic_server, ask(forced), ask(tight))

    assert thinking["thinking"] == {"type": "enabled", "budget_tokens": THINKING_BUDGETS["medium"]}
    assert "temperature" not in thinking
    assert thinking["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert "thinking" not in no_room
    assert no_room["max_tokens"] == 1000
    assert "anthropic: model settings left out (thinking is on): temperature, tool_choice" in caplog.text
    assert "max_tokens leaves no room for 1024 thinking tokens): reasoning_effort" in caplog.text


# --- the offline model ---------------------------------------------------------------------


def test_the_local_model_takes_what_llama_cpp_has(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="hookline.models"):
        mapped = _mapped(ask(EVERYTHING))
        untooled = _mapped(ask(ModelSettings(tool_choice="add"), tools=False))

    assert mapped == {"temperature": 1.5, "max_tokens": 300, "stop": ["END", "STOP"], "tool_choice": "add", "seed": 7}
    assert untooled == {}
    assert "local: model settings left out (no counterpart in llama.cpp): " in caplog.text
    assert "extra_headers, parallel_tool_calls, reasoning_effort" in caplog.text
