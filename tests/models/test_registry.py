"""`"provider:model"` strings resolve through the `hookline.models` entry points."""

from __future__ import annotations

import pytest

from hookline.errors import ConfigError
from hookline.messages import Message
from hookline.models import ModelRequest, resolve_model
from hookline.models.anthropic import AnthropicModel
from hookline.models.openai import PRESETS, OpenAIModel
from hookline.testing import FakeAnthropicServer, FakeOpenAIServer

pytestmark = pytest.mark.anyio


def test_unknown_prefix_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown model provider 'nope'") as caught:
        resolve_model("nope:some-model")

    assert "anthropic" in str(caught.value)
    assert "openai" in str(caught.value)


async def test_openai_spec_is_built_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, openai_server: FakeOpenAIServer
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.enqueue_text("hello")

    model = resolve_model("openai:gpt-4o-mini")
    async with model:
        response = await model.request(ModelRequest(messages=[Message.user("hi")]))

    assert isinstance(model, OpenAIModel)
    assert (model.name, model.provider) == ("gpt-4o-mini", "openai")
    assert response.text == "hello"
    assert openai_server.request_headers[0]["authorization"] == "Bearer env-key"


async def test_anthropic_spec_is_built_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, anthropic_server: FakeAnthropicServer
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.base_url)
    anthropic_server.enqueue_text("hello")

    model = resolve_model("anthropic:claude-haiku-4-5")
    async with model:
        response = await model.request(ModelRequest(messages=[Message.user("hi")]))

    assert isinstance(model, AnthropicModel)
    assert model.name == "claude-haiku-4-5"
    assert response.text == "hello"


def test_openai_spec_without_a_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        resolve_model("openai:gpt-4o-mini")


async def test_presets_know_their_base_urls_and_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="GROQ_API_KEY"):
        OpenAIModel.preset("groq", "llama-3.3-70b-versatile")
    with pytest.raises(ConfigError, match=r"known: .*ollama"):
        OpenAIModel.preset("nope", "m")

    monkeypatch.setenv("GROQ_API_KEY", "gsk-test")
    async with (
        OpenAIModel.preset("groq", "llama-3.3-70b-versatile") as groq,
        OpenAIModel.preset("ollama", "qwen2.5") as local,
    ):
        assert (groq.provider, local.provider) == ("groq", "ollama")
        assert str(groq._clients.client.base_url) == PRESETS["groq"].base_url + "/"
        assert groq._clients.client.api_key == "gsk-test"
        assert str(local._clients.client.base_url) == "http://localhost:11434/v1/"
