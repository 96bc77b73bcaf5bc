"""`ModelContract`: the test suite every provider adapter passes against its wire fake, for yours to run too.

hookline's `OpenAIModel` and `AnthropicModel` run this same suite against
`FakeOpenAIServer` and `FakeAnthropicServer`. An adapter of your own (a `Model` subclass
for another provider) runs it against a fake of that provider's wire format: a
`ScriptedServer` subclass that renders `Reply`s as the provider's JSON and server-sent
events (see `FakeOpenAIServer` for one). Subclass the contract in a pytest module:

```python
from hookline.testing.model_contract import ModelContract
from my_package import MyModel, FakeMyServer


class TestMyModel(ModelContract):
    def create_server(self) -> FakeMyServer:
        return FakeMyServer()

    def create_model(self, base_url: str, retry: RetryPolicy) -> MyModel:
        return MyModel("my-model-1", base_url=base_url, api_key="test", retry=retry)
```

The cases check what every adapter owes the loop, through hookline's own types: text,
tool calls with their ids and arguments (malformed ones kept raw), usage, streaming
(text deltas, then exactly one `ResponseDone`), user-authored tool calls sent without
their ids, retries of 429/5xx/timeouts/cut streams/garbled bodies through the adapter's
`RetryPolicy`, errors as `ModelError` naming the provider, and images and files (in a
prompt, or returned by a tool) sent once, with their media type. What a provider's wire
format looks like (field names, roles) is for your own tests beside it, or for four
hooks the media cases use when you define them: `wire_text_message(text)` and
`wire_media(part)` return the JSON a text-only user message and an image or file become,
`wire_attachments_of(body, call_id)` the node of a request that carries a tool result's
images, and `wire_user_message(content)` the user message whose content parts are
`content` (the image a user's own recorded call returned follows its sentence). A
provider that takes no images or files sets `media = False`.

The cases run under pytest with anyio's plugin, on asyncio; each fake is checked with
`assert_complete()` at the end. Importing this module needs pytest; `import hookline` and
`import hookline.testing` never import it.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import ClassVar

try:
    import pytest
except ImportError as exc:  # pragma: no cover - depends on what is installed
    raise ImportError("hookline.testing.model_contract runs under pytest: pip install pytest") from exc

from hookline.errors import ModelError
from hookline.messages import DocumentPart, Message, TextPart, ToolCallPart, ToolResultPart
from hookline.models import Model, ModelRequest, ToolSpec
from hookline.retry import RetryPolicy
from hookline.testing._model_fault_cases import FaultCases, ask, collect
from hookline.testing._model_media_cases import MediaCases
from hookline.testing._serve import ScriptedServer

__all__ = ["ModelContract"]

ADD = ToolSpec(
    name="add",
    description="Add two integers.",
    parameters={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
)


class ModelContract(FaultCases, MediaCases):
    """The contract of a `Model` adapter, as pytest test cases: subclass it, define `create_server` and `create_model`.

    Not collected itself (its name does not start with `Test`); a subclass named
    `Test...` is.
    """

    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.anyio]

    retry: ClassVar[RetryPolicy] = RetryPolicy(
        max_attempts=3, initial_delay=0.01, max_delay=0.05, max_total_time=10.0, timeout=5.0
    )
    """The policy of the `model` fixture: production's rules, with waits short enough for tests."""

    wrong_shapes: ClassVar[tuple[str, ...]] = ()
    """Stream events of your provider that parse as JSON but have the wrong shape, each sent
    verbatim as a whole frame (e.g. `'data: {"choices": "not a list"}'`); each must be a
    `ModelError` that is not retried. Empty: the case is skipped."""

    def create_server(self) -> ScriptedServer:
        """Return a new, unstarted fake of the provider (the cases enter and leave it).

        Raises:
            NotImplementedError: The subclass did not define it.

        """
        raise NotImplementedError(f"{type(self).__name__} must define create_server() to return the fake server")

    def create_model(self, base_url: str, retry: RetryPolicy) -> Model:
        """Return the adapter pointed at `base_url` (a fake's `base_url`), retrying as `retry` says.

        Raises:
            NotImplementedError: The subclass did not define it.

        """
        raise NotImplementedError(f"{type(self).__name__} must define create_model() to return the adapter")

    @pytest.fixture
    def anyio_backend(self) -> str:
        """The adapters run on asyncio."""
        return "asyncio"

    @pytest.fixture
    def server(self) -> Iterator[ScriptedServer]:
        """The fake, running; at the end, every scripted answer must have been used."""
        with self.create_server() as server:
            yield server
            server.assert_complete()

    @pytest.fixture
    async def model(self, server: ScriptedServer) -> AsyncIterator[Model]:
        """The adapter, on the fake, with the contract's `retry` policy; closed at the end."""
        async with self.create_model(server.base_url, self.retry) as model:
            yield model

    # --- answers -----------------------------------------------------------------------

    async def test_text_answer_with_usage(self, server: ScriptedServer, model: Model) -> None:
        """A text answer comes back with its usage and the model's name."""
        server.enqueue_text("5", input_tokens=12, output_tokens=1)

        response = await model.request(ask())

        assert response.text == "5"
        assert response.tool_calls == []
        assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 1)
        assert response.model_name == model.name
        assert len(server.requests) == 1

    async def test_tool_calls_keep_their_ids_and_arguments(self, server: ScriptedServer, model: Model) -> None:
        """Tool calls come back in order, with the ids the model gave, which go back with their results."""
        first_id, second_id = f"{server.id_prefix}A", f"{server.id_prefix}B"
        one_two = ToolCallPart(id=first_id, name="add", arguments={"a": 1, "b": 2})
        calls = [one_two, ToolCallPart(id=second_id, name="add")]
        server.enqueue_tool_calls(calls, text="Adding.")
        server.enqueue_text("3 and 0")

        first = await model.request(ask(tools=[ADD]))
        assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
            (first_id, "add", {"a": 1, "b": 2}),
            (second_id, "add", {}),
        ]
        assert first.text == "Adding."
        results = [ToolResultPart(call_id=first_id, content="3"), ToolResultPart(call_id=second_id, content="0")]
        history = [*ask().messages, first.to_message(), *(Message("tool", [r]) for r in results)]
        second = await model.request(ModelRequest(messages=history, tools=[ADD]))

        assert second.text == "3 and 0"
        sent = json.dumps(server.requests[1])
        assert sent.count(first_id) == 2, "each id goes back twice: with its call, and with its result"
        assert sent.count(second_id) == 2

    async def test_malformed_arguments_are_kept_raw(self, server: ScriptedServer, model: Model) -> None:
        """Arguments that are not a JSON object reach the loop as the string the model sent, streamed or not."""
        server.enqueue_tool_calls([("add", '{"a": 1,')])
        server.enqueue_tool_calls([("add", '{"a": 1,')])

        response = await model.request(ask(tools=[ADD]))
        _, streamed = await collect(model, ask(tools=[ADD]))

        assert response.tool_calls[0].arguments == '{"a": 1,'
        assert streamed.tool_calls[0].arguments == '{"a": 1,'

    async def test_tools_are_offered_only_when_given(self, server: ScriptedServer, model: Model) -> None:
        """The tools of a request reach the provider; a request without tools offers none."""
        server.enqueue_text("ok")
        server.enqueue_text("ok")

        await model.request(ask(tools=[ADD]))
        await model.request(ask())

        with_tools, without = (json.dumps(body) for body in server.requests)
        assert ADD.description in with_tools
        assert ADD.description not in without

    async def test_user_authored_tool_calls_reach_the_model_without_their_ids(
        self, server: ScriptedServer, model: Model
    ) -> None:
        """A user's own actions are described to the model, never sent as tool calls it did not make."""
        edit = ToolCallPart(id="user-edit-7f3a", name="write_file", arguments={"path": "a.txt"})
        user = Message("user", [edit, ToolResultPart(call_id=edit.id, content="written"), TextPart(text="Check it.")])
        server.enqueue_text("ok")

        await model.request(ModelRequest(messages=[user]))

        sent = json.dumps(server.requests[0])
        assert "user-edit-7f3a" not in sent
        assert "write_file" in sent
        assert "Check it." in sent

    async def test_documents_reach_the_model_once_each(self, server: ScriptedServer, model: Model) -> None:
        """Each document of a message is sent once, with its title."""
        parts = [DocumentPart(title="Alpha", text="first doc"), DocumentPart(title="Beta", text="second doc")]
        server.enqueue_text("ok")

        await model.request(ModelRequest(messages=[Message("user", [*parts, TextPart(text="Summarise.")])]))

        sent = json.dumps(server.requests[0])
        for document in parts:
            assert sent.count(document.text) == 1
            assert document.title in sent

    # --- streaming ---------------------------------------------------------------------

    async def test_stream_yields_text_deltas_then_the_whole_response(
        self, server: ScriptedServer, model: Model
    ) -> None:
        """`stream()` asks the provider to stream, yields the text as it comes, then the response with its calls."""
        server.enqueue_tool_calls([("add", {"a": 10, "b": 20}), ("add", {"a": 3, "b": 4})], text="Let me add these.")

        deltas, response = await collect(model, ask(tools=[ADD]))

        assert len(deltas) > 1
        assert "".join(deltas) == response.text == "Let me add these."
        assert [(c.id, c.arguments) for c in response.tool_calls] == [
            (f"{server.id_prefix}fake1", {"a": 10, "b": 20}),
            (f"{server.id_prefix}fake2", {"a": 3, "b": 4}),
        ]
        assert (response.usage.input_tokens, response.usage.output_tokens) == (10, 5)
        assert server.requests[0]["stream"] is True

    # --- errors and retries ------------------------------------------------------------

    async def test_rate_limit_waits_for_retry_after(self, server: ScriptedServer, model: Model) -> None:
        """A 429 is retried after the provider's `Retry-After`."""
        server.enqueue_error(429, message="Rate limit reached", retry_after=0.3)
        server.enqueue_text("ok")

        started = time.monotonic()
        response = await model.request(ask())

        assert time.monotonic() - started >= 0.3
        assert response.text == "ok"
        assert len(server.requests) == 2

    async def test_server_errors_are_retried_then_raised(self, server: ScriptedServer, model: Model) -> None:
        """5xx answers are retried; the last raises `ModelError` with its status and the provider's message."""
        server.enqueue_error(500, message="boom 1")
        server.enqueue_error(502, message="boom 2")
        server.enqueue_error(503, message="The engine is overloaded")

        with pytest.raises(ModelError) as caught:
            await model.request(ask())

        assert caught.value.status_code == 503
        assert caught.value.provider == model.provider
        assert "The engine is overloaded" in str(caught.value)
        assert len(server.requests) == self.retry.max_attempts

    async def test_bad_request_is_raised_at_once_with_the_provider_message(
        self, server: ScriptedServer, model: Model
    ) -> None:
        """A 400 is not retried: `ModelError` with the provider's own message."""
        server.enqueue_error(400, message="messages: roles must alternate")

        with pytest.raises(ModelError) as caught:
            await model.request(ask())

        assert caught.value.status_code == 400
        assert not caught.value.retryable
        assert "roles must alternate" in str(caught.value)
        assert len(server.requests) == 1

    async def test_a_slow_answer_times_out_and_is_retried(self, server: ScriptedServer) -> None:
        """An attempt past the policy's `timeout` is abandoned and retried."""
        server.enqueue_delay(3)
        server.enqueue_text("fast")
        policy = RetryPolicy(max_attempts=2, initial_delay=0.01, timeout=1.0)

        started = time.monotonic()
        async with self.create_model(server.base_url, policy) as model:
            response = await model.request(ask())

        assert response.text == "fast"
        assert time.monotonic() - started < 2.5

    async def test_timeouts_raise_without_status_after_the_last_attempt(self, server: ScriptedServer) -> None:
        """When every attempt times out, `ModelError` says so, retryable, with no status."""
        server.enqueue_delay(3)
        server.enqueue_delay(3)
        policy = RetryPolicy(max_attempts=2, initial_delay=0.01, timeout=1.0)

        async with self.create_model(server.base_url, policy) as model:
            with pytest.raises(ModelError, match="timed out") as caught:
                await model.request(ask())

        assert caught.value.status_code is None
        assert caught.value.retryable
        assert len(server.requests) == 2

    async def test_connection_refused_is_a_retryable_error(self) -> None:
        """A provider that cannot be reached is a retryable `ModelError` with no status."""
        with self.create_server() as gone:
            base_url = gone.base_url  # nothing listens there once the fake has stopped
        async with self.create_model(base_url, RetryPolicy(max_attempts=2, initial_delay=0.01)) as model:
            with pytest.raises(ModelError) as caught:
                await model.request(ask())

        assert caught.value.status_code is None
        assert caught.value.retryable
        assert caught.value.provider == model.provider
