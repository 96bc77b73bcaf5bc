"""Fixtures for the adapter tests: a fake provider server per test, and a model pointed at it.

Every fake is checked at teardown: a scripted answer left unused, or a request that
found nothing scripted, fails the test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest

from hookline.models import Model, ModelRequest, ModelResponse
from hookline.models.anthropic import AnthropicModel
from hookline.models.openai import OpenAIModel
from hookline.retry import RetryPolicy
from hookline.testing import FakeAnthropicServer, FakeOpenAIServer
from hookline.testing._model_fault_cases import collect as collect_stream

FAST_RETRY = RetryPolicy(max_attempts=3, initial_delay=0.01, max_delay=0.05, max_total_time=10.0, timeout=5.0)
"""Retries as in production, with waits short enough for tests."""


Collect = Callable[[Model, ModelRequest], Awaitable[tuple[list[str], ModelResponse]]]


@pytest.fixture
def collect() -> Collect:
    """Stream a request; return the text deltas and the final response."""
    return collect_stream


@pytest.fixture
def fast_retry() -> RetryPolicy:
    return FAST_RETRY


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server
        server.assert_complete()


@pytest.fixture
def anthropic_server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server
        server.assert_complete()


@pytest.fixture
async def openai_model(openai_server: FakeOpenAIServer) -> AsyncIterator[OpenAIModel]:
    async with OpenAIModel(
        "gpt-4o-mini", base_url=openai_server.base_url, api_key="test-key", retry=FAST_RETRY
    ) as model:
        yield model


@pytest.fixture
async def anthropic_model(anthropic_server: FakeAnthropicServer) -> AsyncIterator[AnthropicModel]:
    model = AnthropicModel("claude-haiku-4-5", base_url=anthropic_server.base_url, api_key="test-key", retry=FAST_RETRY)
    async with model:
        yield model
