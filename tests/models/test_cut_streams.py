"""A cut or garbled answer is an error, never an answer: both adapters, streaming and not.

A stream that ends before the provider's finish event (the connection dropped) and a body
that is cut short or not JSON raise a retryable `ModelError` and are retried; an event of
the wrong shape raises a `ModelError` naming the provider, never a KeyError or TypeError.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator

import pytest

from hookline import Agent, ModelError, PromptRequest
from hookline.messages import Message, ToolCallPart
from hookline.models import Model, ModelRequest, ModelResponse, ResponseDone, TextDelta
from hookline.models.anthropic import AnthropicModel
from hookline.models.openai import OpenAIModel
from hookline.retry import RetryPolicy
from hookline.sessions.memory import InMemorySessionStore
from hookline.testing import FakeAnthropicServer, FakeOpenAIServer, Reply, ScriptedServer

pytestmark = pytest.mark.anyio

Collect = Callable[[Model, ModelRequest], Awaitable[tuple[list[str], ModelResponse]]]
FAST_RETRY = RetryPolicy(max_attempts=3, initial_delay=0.01, max_delay=0.05, max_total_time=10.0, timeout=5.0)

ANSWER = "The capital of France is Paris."
ONCE = RetryPolicy(max_attempts=1, timeout=5.0)


@pytest.fixture(params=["openai", "anthropic"])
def server(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    fake: ScriptedServer = FakeOpenAIServer() if request.param == "openai" else FakeAnthropicServer()
    with fake:
        yield fake
        fake.assert_complete()


def model_for(server: ScriptedServer, retry: RetryPolicy = FAST_RETRY) -> Model:
    if isinstance(server, FakeOpenAIServer):
        return OpenAIModel("gpt-4o-mini", base_url=server.base_url, api_key="k", retry=retry)
    return AnthropicModel("claude-haiku-4-5", base_url=server.base_url, api_key="k", retry=retry)


def ask() -> ModelRequest:
    return ModelRequest(messages=[Message.user("What is the capital of France?")])


async def stream_events(model: Model) -> list[TextDelta | ResponseDone]:
    return await stream_into(model, [])


async def stream_into(model: Model, events: list[TextDelta | ResponseDone]) -> list[TextDelta | ResponseDone]:
    """Stream a request into `events`, which keeps what came before an error."""
    async for event in model.stream(ask()):
        events.append(event)
    return events


# --- a stream cut short ----------------------------------------------------------------


@pytest.mark.parametrize("abrupt", [True, False], ids=["connection-dropped", "body-ended"])
async def test_a_cut_stream_is_a_retryable_error_not_an_answer(server: ScriptedServer, abrupt: bool) -> None:
    server.enqueue_cut_stream(ANSWER, abrupt=abrupt)

    events: list[TextDelta | ResponseDone] = []
    async with model_for(server, ONCE) as model:
        with pytest.raises(ModelError) as caught:
            await stream_into(model, events)

    assert not any(isinstance(event, ResponseDone) for event in events)
    assert "".join(event.text for event in events if isinstance(event, TextDelta)) == ANSWER
    assert caught.value.retryable
    assert caught.value.status_code is None
    assert caught.value.provider == server_provider(server)
    assert ("connection" in str(caught.value)) if abrupt else ("ended before the answer did" in str(caught.value))


@pytest.mark.parametrize("abrupt", [True, False], ids=["connection-dropped", "body-ended"])
async def test_a_cut_stream_is_retried_and_the_text_is_not_shown_twice(
    server: ScriptedServer, collect: Collect, abrupt: bool
) -> None:
    server.enqueue_cut_stream(ANSWER, abrupt=abrupt)
    server.enqueue_text(ANSWER)

    async with model_for(server) as model:
        deltas, response = await collect(model, ask())

    assert response.text == ANSWER
    assert "".join(deltas) == ANSWER
    assert len(server.requests) == 2


async def test_a_retry_that_answers_otherwise_is_shown_whole(server: ScriptedServer, collect: Collect) -> None:
    server.enqueue_cut_stream("Paris, I think", keep=4)
    server.enqueue_text(ANSWER)

    async with model_for(server) as model:
        deltas, response = await collect(model, ask())

    assert response.text == ANSWER
    shown = "".join(deltas)
    assert shown.endswith(ANSWER)
    assert "Paris, I think".startswith(shown.removesuffix(ANSWER))


async def test_a_tool_call_cut_before_its_end_is_retried(server: ScriptedServer, collect: Collect) -> None:
    call = ToolCallPart(id="call_1", name="add", arguments={"a": 2, "b": 3})
    server.enqueue_cut_stream(Reply(tool_calls=[call]))
    server.enqueue_tool_calls([call])

    async with model_for(server) as model:
        deltas, response = await collect(model, ask())

    assert deltas == []
    assert [(call.name, call.arguments) for call in response.tool_calls] == [("add", {"a": 2, "b": 3})]


async def test_a_stream_cut_on_every_attempt_raises_after_the_last(server: ScriptedServer) -> None:
    for _ in range(FAST_RETRY.max_attempts):
        server.enqueue_cut_stream(ANSWER, abrupt=False)

    async with model_for(server) as model:
        with pytest.raises(ModelError, match="ended before the answer did") as caught:
            await stream_events(model)

    assert caught.value.retryable
    assert len(server.requests) == FAST_RETRY.max_attempts


async def test_a_stalled_stream_times_out_and_is_retried(server: ScriptedServer, collect: Collect) -> None:
    server.enqueue_stalled_stream(ANSWER, after=3, seconds=30.0)
    server.enqueue_text(ANSWER)
    policy = RetryPolicy(max_attempts=2, initial_delay=0.01, timeout=1.0)

    async with model_for(server, policy) as model:
        deltas, response = await collect(model, ask())

    assert response.text == "".join(deltas) == ANSWER
    assert len(server.requests) == 2


async def test_a_stalled_stream_on_the_last_attempt_is_a_timeout(server: ScriptedServer) -> None:
    server.enqueue_stalled_stream(ANSWER, after=2, seconds=30.0)

    async with model_for(server, RetryPolicy(max_attempts=1, timeout=0.3)) as model:
        with pytest.raises(ModelError, match="timed out") as caught:
            await stream_events(model)

    assert caught.value.status_code is None


# --- garbage -----------------------------------------------------------------------------


async def test_a_garbage_event_is_retried(server: ScriptedServer, collect: Collect) -> None:
    server.enqueue_garbled_stream(ANSWER, at=2)
    server.enqueue_text(ANSWER)

    async with model_for(server) as model:
        deltas, response = await collect(model, ask())

    assert response.text == "".join(deltas) == ANSWER


async def test_garbage_on_every_attempt_names_the_provider_and_the_problem(server: ScriptedServer) -> None:
    for _ in range(FAST_RETRY.max_attempts):
        server.enqueue_garbled_stream(ANSWER, at=2)

    async with model_for(server) as model:
        with pytest.raises(ModelError, match=rf"^{server_provider(server)} sent a malformed response: not JSON"):
            await stream_events(model)


OPENAI_SHAPES = [
    'data: {"id": "x", "object": "chat.completion.chunk", "choices": "not a list"}',
    'data: {"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": 7}]}',
    "data: 42",
]
ANTHROPIC_SHAPES = [
    'event: content_block_delta\ndata: {"type": "content_block_delta"}',
    'event: message_start\ndata: {"type": "message_start", "message": 3}',
    'event: message_delta\ndata: {"type": "message_delta", "delta": null}',
]


@pytest.mark.parametrize("case", range(3))
async def test_an_event_of_the_wrong_shape_is_a_model_error(server: ScriptedServer, case: int) -> None:
    shapes = OPENAI_SHAPES if isinstance(server, FakeOpenAIServer) else ANTHROPIC_SHAPES
    server.enqueue_garbled_stream(ANSWER, at=1, frame=shapes[case])

    async with model_for(server) as model:
        with pytest.raises(ModelError, match=rf"^{server_provider(server)} sent a malformed response") as caught:
            await stream_events(model)

    assert not caught.value.retryable  # the same server would send the same shape again
    assert len(server.requests) == 1


# --- a JSON body cut short or not JSON -----------------------------------------------------


@pytest.mark.parametrize("fault", ["cut-abruptly", "cut-cleanly", "malformed-json", "html"])
async def test_a_body_cut_short_or_not_json_is_retried(server: ScriptedServer, fault: str) -> None:
    if fault == "html":
        server.enqueue_raw("<html>502 Bad Gateway</html>", media_type="text/html")
    elif fault == "malformed-json":
        server.enqueue_malformed_json()
    else:
        server.enqueue_cut_body(ANSWER, abrupt=fault == "cut-abruptly")
    server.enqueue_text(ANSWER)

    async with model_for(server) as model:
        response = await model.request(ask())

    assert response.text == ANSWER
    assert len(server.requests) == 2


async def test_a_body_cut_on_every_attempt_raises_a_retryable_error(server: ScriptedServer) -> None:
    for _ in range(FAST_RETRY.max_attempts):
        server.enqueue_cut_body(ANSWER, abrupt=False)

    async with model_for(server) as model:
        with pytest.raises(ModelError, match="malformed response: not JSON") as caught:
            await model.request(ask())

    assert caught.value.retryable
    assert len(server.requests) == FAST_RETRY.max_attempts


# --- through the loop: nothing partial is stored ---------------------------------------------


@pytest.mark.parametrize("path", ["await", "stream"])
async def test_a_run_whose_answer_is_cut_stores_no_answer(server: ScriptedServer, path: str) -> None:
    for _ in range(2):
        (server.enqueue_cut_stream if path == "stream" else server.enqueue_cut_body)(ANSWER, abrupt=False)
    store = InMemorySessionStore()
    model = model_for(server, RetryPolicy(max_attempts=2, initial_delay=0.01))
    agent = Agent(name="geo", model=model, session_store=store)

    with pytest.raises(ModelError):
        await run(agent.prompt("What is the capital of France?").session("s-1"), path)
    await agent.close()

    stored = await store.events("s-1", view="prompt")
    assert [event.role for event in stored] == ["user"]
    assert len(server.requests) == 2


def server_provider(server: ScriptedServer) -> str:
    return "openai" if isinstance(server, FakeOpenAIServer) else "anthropic"


async def run(request: PromptRequest, path: str) -> None:
    if path == "stream":
        async for _ in request.stream():
            pass
    else:
        await request
