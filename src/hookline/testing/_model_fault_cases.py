"""A cut or garbled answer is an error, never an answer: the fault half of `ModelContract`.

A stream that ends before the provider's finish event (the connection dropped) and a body
that is cut short or not JSON raise a retryable `ModelError` and are retried; an event of
the wrong shape raises a `ModelError` naming the provider, never a KeyError or TypeError.
The cases need the contract's fixtures and factories (`hookline.testing.model_contract`).
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from hookline.agent import Agent
from hookline.errors import ModelError
from hookline.messages import Message, ToolCallPart
from hookline.models import Model, ModelRequest, ModelResponse, ModelStreamEvent, ResponseDone, TextDelta, ToolSpec
from hookline.retry import RetryPolicy
from hookline.sessions import InMemorySessionStore
from hookline.testing._serve import Reply, ScriptedServer

__all__ = ["FaultCases", "ask", "collect"]

ANSWER = "The capital of France is Paris."
_ONCE = RetryPolicy(max_attempts=1, timeout=5.0)


def ask(text: str = "2+3?", *, tools: list[ToolSpec] | None = None) -> ModelRequest:
    """A request: instructions, then the user's question."""
    return ModelRequest(messages=[Message.system("Be terse."), Message.user(text)], tools=tools or [])


async def collect(model: Model, request: ModelRequest) -> tuple[list[str], ModelResponse]:
    """Stream `request`; return the text deltas and the final response (a stream ends with exactly one)."""
    deltas: list[str] = []
    done: list[ModelResponse] = []
    async for event in model.stream(request):
        if isinstance(event, TextDelta):
            deltas.append(event.text)
        elif isinstance(event, ResponseDone):
            done.append(event.response)
    assert len(done) == 1, "a stream ends with exactly one ResponseDone"
    return deltas, done[0]


async def _stream_into(model: Model, events: list[ModelStreamEvent]) -> None:
    """Stream a question into `events`, which keeps what came before an error."""
    async for event in model.stream(ModelRequest(messages=[Message.user("What is the capital of France?")])):
        events.append(event)


async def _run(agent: Agent, path: str) -> None:
    """Run a prompt on session "s-1", awaited or streamed."""
    request = agent.prompt("What is the capital of France?").session("s-1")
    if path == "stream":
        async for _ in request.stream():
            pass
    else:
        await request


class FaultCases:
    """The cases about cut, stalled and garbled answers."""

    retry: ClassVar[RetryPolicy]
    wrong_shapes: ClassVar[tuple[str, ...]]

    def create_model(self, base_url: str, retry: RetryPolicy) -> Model:
        """Defined by `ModelContract` and its subclasses."""
        raise NotImplementedError

    # --- a stream cut short ------------------------------------------------------------

    @pytest.mark.parametrize("abrupt", [True, False], ids=["connection-dropped", "body-ended"])
    async def test_a_cut_stream_is_a_retryable_error_not_an_answer(self, server: ScriptedServer, abrupt: bool) -> None:
        """A stream that stops before its end raises a retryable `ModelError` saying so, after the text it sent."""
        server.enqueue_cut_stream(ANSWER, abrupt=abrupt)

        events: list[ModelStreamEvent] = []
        async with self.create_model(server.base_url, _ONCE) as model:
            with pytest.raises(ModelError) as caught:
                await _stream_into(model, events)

        assert not any(isinstance(event, ResponseDone) for event in events)
        assert "".join(event.text for event in events if isinstance(event, TextDelta)) == ANSWER
        assert caught.value.retryable
        assert caught.value.status_code is None
        assert caught.value.provider == model.provider
        assert ("connection" if abrupt else "ended before the answer did") in str(caught.value)

    @pytest.mark.parametrize("abrupt", [True, False], ids=["connection-dropped", "body-ended"])
    async def test_a_cut_stream_is_retried_and_the_text_is_not_shown_twice(
        self, server: ScriptedServer, model: Model, abrupt: bool
    ) -> None:
        """A retried stream that answers the same shows only what the first attempt had not."""
        server.enqueue_cut_stream(ANSWER, abrupt=abrupt)
        server.enqueue_text(ANSWER)

        deltas, response = await collect(model, ask())

        assert response.text == ANSWER
        assert "".join(deltas) == ANSWER
        assert len(server.requests) == 2

    async def test_a_retry_that_answers_otherwise_is_shown_whole(self, server: ScriptedServer, model: Model) -> None:
        """A retried stream that answers differently is shown in full after what was shown."""
        server.enqueue_cut_stream("Paris, I think", keep=4)
        server.enqueue_text(ANSWER)

        deltas, response = await collect(model, ask())

        assert response.text == ANSWER
        shown = "".join(deltas)
        assert shown.endswith(ANSWER)
        assert "Paris, I think".startswith(shown.removesuffix(ANSWER))

    async def test_a_tool_call_cut_before_its_end_is_retried(self, server: ScriptedServer, model: Model) -> None:
        """A tool call whose stream was cut is asked for again, never run half-formed."""
        call = ToolCallPart(id=f"{server.id_prefix}1", name="add", arguments={"a": 2, "b": 3})
        server.enqueue_cut_stream(Reply(tool_calls=[call]))
        server.enqueue_tool_calls([call])

        deltas, response = await collect(model, ask())

        assert deltas == []
        assert [(call.name, call.arguments) for call in response.tool_calls] == [("add", {"a": 2, "b": 3})]

    async def test_a_stream_cut_on_every_attempt_raises_after_the_last(
        self, server: ScriptedServer, model: Model
    ) -> None:
        """When every attempt is cut, the last one's retryable error is raised."""
        for _ in range(self.retry.max_attempts):
            server.enqueue_cut_stream(ANSWER, abrupt=False)

        with pytest.raises(ModelError, match="ended before the answer did") as caught:
            await _stream_into(model, [])

        assert caught.value.retryable
        assert len(server.requests) == self.retry.max_attempts

    async def test_a_stalled_stream_times_out_and_is_retried(self, server: ScriptedServer) -> None:
        """A stream silent past the policy's `timeout` is abandoned and retried."""
        server.enqueue_stalled_stream(ANSWER, after=3, seconds=30.0)
        server.enqueue_text(ANSWER)
        policy = RetryPolicy(max_attempts=2, initial_delay=0.01, timeout=1.0)

        async with self.create_model(server.base_url, policy) as model:
            deltas, response = await collect(model, ask())

        assert response.text == "".join(deltas) == ANSWER
        assert len(server.requests) == 2

    async def test_a_stalled_stream_on_the_last_attempt_is_a_timeout(self, server: ScriptedServer) -> None:
        """A stream stalled on the last attempt raises a timeout with no status."""
        server.enqueue_stalled_stream(ANSWER, after=2, seconds=30.0)

        async with self.create_model(server.base_url, RetryPolicy(max_attempts=1, timeout=1.0)) as model:
            with pytest.raises(ModelError, match="timed out") as caught:
                await _stream_into(model, [])

        assert caught.value.status_code is None

    # --- garbage -----------------------------------------------------------------------

    async def test_a_garbage_event_is_retried(self, server: ScriptedServer, model: Model) -> None:
        """An event that is not JSON is retried."""
        server.enqueue_garbled_stream(ANSWER, at=2)
        server.enqueue_text(ANSWER)

        deltas, response = await collect(model, ask())

        assert response.text == "".join(deltas) == ANSWER

    async def test_garbage_on_every_attempt_names_the_provider_and_the_problem(
        self, server: ScriptedServer, model: Model
    ) -> None:
        """Garbage on every attempt raises `ModelError`: "<provider> sent a malformed response: not JSON"."""
        for _ in range(self.retry.max_attempts):
            server.enqueue_garbled_stream(ANSWER, at=2)

        with pytest.raises(ModelError, match=rf"^{model.provider} sent a malformed response: not JSON"):
            await _stream_into(model, [])

    async def test_an_event_of_the_wrong_shape_is_a_model_error(self, server: ScriptedServer, model: Model) -> None:
        """Each of `wrong_shapes` raises a `ModelError` that is not retried (the provider would send it again)."""
        if not self.wrong_shapes:
            pytest.skip("no wrong_shapes given for this provider")
        for frame in self.wrong_shapes:
            server.enqueue_garbled_stream(ANSWER, at=1, frame=frame)
            sent = len(server.requests)

            with pytest.raises(ModelError, match=rf"^{model.provider} sent a malformed response") as caught:
                await _stream_into(model, [])

            assert not caught.value.retryable, frame
            assert len(server.requests) == sent + 1, frame

    # --- a JSON body cut short or not JSON ---------------------------------------------

    @pytest.mark.parametrize("fault", ["cut-abruptly", "cut-cleanly", "malformed-json", "html"])
    async def test_a_body_cut_short_or_not_json_is_retried(
        self, server: ScriptedServer, model: Model, fault: str
    ) -> None:
        """A JSON answer cut short, or that is not JSON, is retried."""
        if fault == "html":
            server.enqueue_raw("<html>502 Bad Gateway</html>", media_type="text/html")
        elif fault == "malformed-json":
            server.enqueue_malformed_json()
        else:
            server.enqueue_cut_body(ANSWER, abrupt=fault == "cut-abruptly")
        server.enqueue_text(ANSWER)

        response = await model.request(ask())

        assert response.text == ANSWER
        assert len(server.requests) == 2

    async def test_a_body_cut_on_every_attempt_raises_a_retryable_error(
        self, server: ScriptedServer, model: Model
    ) -> None:
        """A body cut on every attempt raises a retryable "malformed response: not JSON" error."""
        for _ in range(self.retry.max_attempts):
            server.enqueue_cut_body(ANSWER, abrupt=False)

        with pytest.raises(ModelError, match="malformed response: not JSON") as caught:
            await model.request(ask())

        assert caught.value.retryable
        assert len(server.requests) == self.retry.max_attempts

    # --- through the loop: nothing partial is stored -----------------------------------

    @pytest.mark.parametrize("path", ["await", "stream"])
    async def test_a_run_whose_answer_is_cut_stores_no_answer(self, server: ScriptedServer, path: str) -> None:
        """A run whose every answer is cut fails, and its session keeps only the prompt."""
        for _ in range(2):
            (server.enqueue_cut_stream if path == "stream" else server.enqueue_cut_body)(ANSWER, abrupt=False)
        store = InMemorySessionStore()
        model = self.create_model(server.base_url, RetryPolicy(max_attempts=2, initial_delay=0.01))
        agent = Agent(name="geo", model=model, session_store=store)

        with pytest.raises(ModelError):
            await _run(agent, path)
        await agent.close()

        assert [event.role for event in await store.events("s-1", view="prompt")] == ["user"]
        assert len(server.requests) == 2
