"""Prompts, answers, instructions and tool data are on spans only with `include_content=True`."""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import StatusCode

from hookline import Agent, tool
from hookline.tracing import Instrumentation, instrument

from .scripts import answer, call, script
from .spans import CONTENT_KEYS, Spans

pytestmark = pytest.mark.anyio


@tool
def lookup(city: str) -> dict[str, str]:
    """Look up a city's weather."""
    if city == "Atlantis":
        raise LookupError(f"no weather under the sea at {city}")
    return {"city": city, "sky": "rainy"}


def agent() -> Agent:
    model = script(call("c1", "lookup", city="Paris"), call("c2", "lookup", city="Atlantis"), answer("Rainy."))
    return Agent(name="weather", model=model, tools=[lookup], instructions="Answer in one word.")


async def test_no_content_by_default(traced: Instrumentation, spans: Spans) -> None:
    await agent().prompt("Weather in Paris? my card is 4111-1111")

    assert len(spans.all) == 6
    for span in spans.all:
        assert not CONTENT_KEYS & set(span.attributes or {}), span.name
        assert "4111" not in json.dumps(dict(span.attributes or {}))
    failed = spans.named("execute_tool lookup")[1]
    assert "Atlantis" not in (failed.status.description or "")


async def test_content_on_request(provider: TracerProvider, spans: Spans) -> None:
    with instrument(provider, include_content=True):
        await agent().prompt("Weather in Paris?")

    run = spans.one("invoke_agent weather").attributes or {}
    assert json.loads(str(run["gen_ai.input.messages"])) == [
        {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]
    assert json.loads(str(run["gen_ai.system_instructions"])) == [{"type": "text", "content": "Answer in one word."}]
    assert json.loads(str(run["gen_ai.output.messages"])) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "Rainy."}], "finish_reason": "stop"}]

    first, _, last = (s.attributes or {} for s in spans.named("chat function"))
    assert json.loads(str(first["gen_ai.system_instructions"])) == [{"type": "text", "content": "Answer in one word."}]
    assert [d["name"] for d in json.loads(str(first["gen_ai.tool.definitions"]))] == ["lookup"]
    call_part = {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"city": "Paris"}}
    assert json.loads(str(first["gen_ai.output.messages"])) == [
        {"role": "assistant", "parts": [call_part], "finish_reason": "tool_call"}]
    history = json.loads(str(last["gen_ai.input.messages"]))
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant", "tool"]
    assert history[2]["parts"] == [{"type": "tool_call_response", "id": "c1",
                                    "response": '{"city":"Paris","sky":"rainy"}'}]

    ok, failed = (s for s in spans.named("execute_tool lookup"))
    assert json.loads(str((ok.attributes or {})["gen_ai.tool.call.arguments"])) == {"city": "Paris"}
    assert json.loads(str((ok.attributes or {})["gen_ai.tool.call.result"])) == {"city": "Paris", "sky": "rainy"}
    assert "gen_ai.tool.call.result" not in (failed.attributes or {})  # a result only when the call succeeded
    assert failed.status.status_code is StatusCode.ERROR
    assert "no weather under the sea at Atlantis" in (failed.status.description or "")


@pytest.mark.parametrize(("adapter", "raw"), [("openai", ("tool_calls", "stop")),
                                             ("anthropic", ("tool_use", "end_turn"))])
async def test_finish_reasons_in_content_use_the_conventions_names(
    provider: TracerProvider, spans: Spans, adapter: str, raw: tuple[str, str]
) -> None:
    from hookline.models import Model
    from hookline.models.anthropic import AnthropicModel
    from hookline.models.openai import OpenAIModel
    from hookline.testing import FakeAnthropicServer, FakeOpenAIServer

    server = FakeOpenAIServer() if adapter == "openai" else FakeAnthropicServer()
    with server:
        server.enqueue_tool_calls([("lookup", {"city": "Paris"})])
        server.enqueue_text("Rainy.")
        model: Model = (OpenAIModel("m-1", base_url=server.base_url, api_key="test-key") if adapter == "openai"
                        else AnthropicModel("m-1", base_url=server.base_url, api_key="test-key"))
        async with model:
            with instrument(provider, include_content=True):
                await Agent(name="weather", model=model, tools=[lookup]).prompt("Paris?")
        server.assert_complete()

    first, last = (s.attributes or {} for s in spans.named("chat m-1"))
    assert (first["gen_ai.provider.name"], last["gen_ai.provider.name"]) == (adapter, adapter)
    reasons = (first["gen_ai.response.finish_reasons"], last["gen_ai.response.finish_reasons"])
    assert tuple(tuple(r) for r in reasons) == ((raw[0],), (raw[1],))  # type: ignore[union-attr]  # as sent
    assert json.loads(str(first["gen_ai.output.messages"]))[0]["finish_reason"] == "tool_call"
    assert json.loads(str(last["gen_ai.output.messages"]))[0]["finish_reason"] == "stop"


async def test_raw_string_arguments_are_recorded_as_sent(provider: TracerProvider, spans: Spans) -> None:
    from hookline import ToolCallPart
    from hookline.models import ModelResponse

    model = script(ModelResponse(tool_calls=[ToolCallPart(id="c1", name="lookup", arguments='{"city": ')]),
                   answer("?"))
    with instrument(provider, include_content=True):
        await Agent(name="weather", model=model, tools=[lookup]).prompt("hi")

    span = spans.one("execute_tool lookup")
    assert (span.attributes or {})["gen_ai.tool.call.arguments"] == '{"city": '
    assert (span.attributes or {})["error.type"] == "tool_error"
