"""Status events (DESIGN §3, status part) as `.stream()` yields them: sources, texts,
options, text deltas, and log records of tool code, scoped to their own run."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator

import pytest

from hookline import Agent, Event, StatusOptions, ToolError, tool
from hookline.models import FunctionModel, ModelRequest, ModelStreamEvent, ResponseDone, TextDelta
from hookline.sessions.memory import InMemorySessionStore

from .scripted import Script, add, answer, call, calls

pytestmark = pytest.mark.anyio


async def _events(request: object) -> list[Event]:
    return [event async for event in request.stream()]  # type: ignore[attr-defined]


def _status(events: list[Event], source: str | None = None) -> list[str]:
    return [e.text for e in events if e.kind == "status" and (source is None or e.source == source)]


async def test_stream_yields_status_from_each_source() -> None:
    first = calls(call("c1", "add", a=1, b=2), input_tokens=400, output_tokens=12)
    script = Script(first, answer("3"), name="gpt-test")
    events = await _events(Agent("bot", model=script.model, tools=[add]).prompt("go"))

    agent_lines = _status(events, "agent")
    assert agent_lines[:2] == ["turn 1: calling model", "turn 2: calling model"]
    assert agent_lines[-1] == "run completed"
    llm_lines = _status(events, "llm")
    assert len(llm_lines) == 2
    assert llm_lines[0].startswith("gpt-test answered: 1 tool call, 412 tokens, ")
    assert llm_lines[0].endswith(" ms")
    assert llm_lines[1].startswith("gpt-test answered: text, 0 tokens, ")
    assert _status(events, "tool") == ["running add(a=1, b=2)", "add returned 3"]
    tool_events = [e for e in events if e.source == "tool"]
    assert {e.author for e in tool_events} == {"add"}
    assert {e.metadata["call_id"] for e in tool_events} == {"c1"}
    assert {e.author for e in events if e.source in ("agent", "llm")} == {"bot"}


async def test_stream_yields_message_events_in_conversation_order_beside_status() -> None:
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("3"))
    request = Agent("bot", model=script.model, tools=[add]).prompt("go")
    events = await _events(request)

    messages = [e for e in events if e.kind == "message"]
    assert [(e.role, e.author) for e in messages] == [("user", "user"), ("assistant", "bot"), ("tool", "add"),
                                                      ("assistant", "bot")]
    assert [e.to_message() for e in messages] == request.result.messages  # type: ignore[union-attr]
    # each status line comes where its step happened
    assert [(e.kind, e.source or e.role) for e in events if e.kind != "delta"] == [
        ("message", "user"),
        ("status", "agent"),  # turn 1: calling model
        ("status", "llm"),
        ("message", "assistant"),
        ("status", "tool"),  # running add(...)
        ("message", "tool"),
        ("status", "tool"),  # add returned 3
        ("status", "agent"),  # turn 2: calling model
        ("status", "llm"),
        ("message", "assistant"),
        ("status", "agent"),  # run completed
    ]


@pytest.mark.parametrize(
    "options",
    [
        StatusOptions(agent=True, llm=False, tool=False),
        StatusOptions(agent=False, llm=True, tool=False),
        StatusOptions(agent=False, llm=False, tool=True),
        StatusOptions(agent=True, llm=True, tool=True),
        StatusOptions(agent=False, llm=False, tool=False),
    ],
    ids=["agent", "llm", "tool", "all", "none"],
)
async def test_status_options_choose_the_sources(options: StatusOptions) -> None:
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("3"))
    events = await _events(Agent(model=script.model, tools=[add], status=options).prompt("go"))

    wanted = {s for s in ("agent", "llm", "tool") if getattr(options, s)}
    assert {e.source for e in events if e.kind == "status"} == wanted
    assert len([e for e in events if e.kind == "message"]) == 4


async def test_inputs_and_outputs_can_be_hidden() -> None:
    @tool
    def secret(pin: int) -> str:
        """Return a secret."""
        return f"the vault code is {pin}"

    script = Script(calls(call("c1", "secret", pin=1234)), answer("done"))
    options = StatusOptions(inputs=False, outputs=False)
    events = await _events(Agent(model=script.model, tools=[secret], status=options).prompt("go"))

    assert _status(events, "tool") == ["running secret", "secret returned"]
    assert not any("1234" in e.text for e in events if e.kind == "status")


async def test_failed_calls_say_so_in_status() -> None:
    @tool
    def fragile() -> str:
        """Always fails."""
        raise ToolError("out of paper")

    script = Script(calls(call("c1", "fragile")), answer("done"))
    events = await _events(Agent(model=script.model, tools=[fragile]).prompt("go"))
    assert _status(events, "tool") == ["running fragile()", "fragile failed: out of paper"]


async def test_a_failed_call_says_failed_once() -> None:
    """The exception's result already starts with "explode failed:" (issue 29, papercuts)."""

    @tool
    def explode() -> str:
        """Always raises."""
        raise RuntimeError("boom")

    script = Script(calls(call("c1", "explode")), answer("done"))
    events = await _events(Agent(model=script.model, tools=[explode]).prompt("go"))
    assert _status(events, "tool") == ["running explode()", "explode failed: RuntimeError: boom"]


async def test_status_events_never_reach_the_model() -> None:
    store = InMemorySessionStore()
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("3"), calls(call("c2", "add", a=3, b=4)), answer("7"))
    agent = Agent(model=script.model, tools=[add], instructions="Be terse.")
    first = await _events(agent.prompt("1+2?").session("s-1", store=store))
    second = await _events(agent.prompt("3+4?").session("s-1", store=store))

    status_texts = set(_status(first) + _status(second))
    assert "running add(a=1, b=2)" in status_texts
    assert script.shapes(3) == ["system:Be terse.", "user:1+2?", "assistant:calls(c1)", "tool:c1", "assistant:3",
                                "user:3+4?"]
    for request in script.requests:
        for message in request.messages:
            assert message.text not in status_texts
            assert all(text not in message.text for text in status_texts)
    stored = await store.events("s-1", view="all")
    assert any(e.kind == "status" for e in stored)
    assert any(e.kind == "delta" for e in first)
    assert not any(e.kind == "delta" for e in stored)


# -- text deltas -----------------------------------------------------------------------------


class ChunkedModel(FunctionModel):
    """A scripted model that streams its text in fixed chunks."""

    def __init__(self, chunks: list[str]) -> None:
        super().__init__(lambda request: answer("".join(chunks)))
        self.chunks = chunks

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        response = await self.request(request)
        for chunk in self.chunks:
            yield TextDelta(chunk)
        yield ResponseDone(response)


async def test_streamed_text_arrives_as_delta_events_before_the_message() -> None:
    request = Agent("bot", model=ChunkedModel(["Hel", "lo ", "world"])).prompt("hi")
    events = await _events(request)

    deltas = [e for e in events if e.kind == "delta"]
    assert [e.text for e in deltas] == ["Hel", "lo ", "world"]
    assert {e.author for e in deltas} == {"bot"}
    answer_index = next(i for i, e in enumerate(events) if e.kind == "message" and e.role == "assistant")
    assert max(events.index(e) for e in deltas) < answer_index
    assert events[answer_index].text == "Hello world"
    assert request.result is not None
    assert request.result.output == "Hello world"
    assert [m.text for m in request.result.messages] == ["hi", "Hello world"]


async def test_a_non_streaming_model_still_yields_its_text_as_a_delta() -> None:
    script = Script(calls(call("c1", "add", a=1, b=2)), answer("three"))
    events = await _events(Agent(model=script.model, tools=[add]).prompt("go"))
    assert [e.text for e in events if e.kind == "delta"] == ["three"]


async def test_awaiting_a_prompt_does_not_stream() -> None:
    # no stream and no session: nothing to write status to, and nothing breaks
    result = await Agent(model=ChunkedModel(["a", "b"])).prompt("hi")
    assert result.output == "ab"


# -- log records of tool code ----------------------------------------------------------------


@pytest.fixture
def tool_logger() -> Iterator[logging.Logger]:
    logger = logging.getLogger("tests.core.tool")
    level = logger.level
    yield logger
    logger.setLevel(level)


async def test_warnings_logged_by_a_tool_become_its_status_events(tool_logger: logging.Logger) -> None:
    @tool
    def refuel(litres: int) -> str:
        """Refuel."""
        tool_logger.warning("low fuel: %d litres left", litres)
        return "ok"

    script = Script(calls(call("c1", "refuel", litres=3)), answer("done"))
    events = await _events(Agent(model=script.model, tools=[refuel]).prompt("go"))

    logged = [e for e in events if e.kind == "status" and "low fuel" in e.text]
    assert len(logged) == 1
    (event,) = logged
    assert event.source == "tool"
    assert event.author == "refuel"
    assert "low fuel: 3 litres left" in event.text
    assert event.metadata["call_id"] == "c1"
    assert _status(events, "tool").index(event.text) == 1  # after "running", before "returned"


async def test_info_records_are_captured_once_the_logger_allows_them(tool_logger: logging.Logger) -> None:
    @tool
    async def survey() -> str:
        """Survey."""
        tool_logger.debug("too fine to see")
        tool_logger.info("surveying the area")
        return "ok"

    tool_logger.setLevel(logging.INFO)
    script = Script(calls(call("c1", "survey")), answer("done"))
    events = await _events(Agent(model=script.model, tools=[survey]).prompt("go"))

    texts = _status(events, "tool")
    assert any("surveying the area" in t for t in texts)
    assert not any("too fine to see" in t for t in texts)


async def test_threaded_tools_logs_are_captured(tool_logger: logging.Logger) -> None:
    @tool(thread=True)
    def slow_io() -> str:
        """Blocking I/O."""
        tool_logger.warning("disk is slow")
        return "ok"

    script = Script(calls(call("c1", "slow_io")), answer("done"))
    events = await _events(Agent(model=script.model, tools=[slow_io]).prompt("go"))
    assert any("disk is slow" in t for t in _status(events, "tool"))


async def test_records_logged_outside_tools_are_not_tool_status(tool_logger: logging.Logger) -> None:
    def chatty_instructions(state: object) -> str:
        tool_logger.warning("instructions built")
        return "Be terse."

    script = Script(answer("done"))
    events = await _events(Agent(model=script.model, instructions=chatty_instructions).prompt("go"))
    assert not any("instructions built" in e.text for e in events)


async def test_each_record_of_a_turns_calls_is_its_own_calls_and_none_after_them(tool_logger: logging.Logger) -> None:
    @tool
    def refuel(litres: int) -> str:
        """Refuel."""
        tool_logger.warning("refuelled %d litres", litres)
        return "ok"

    @tool
    async def check() -> str:
        """Check, after a wait."""
        await asyncio.sleep(0)
        tool_logger.warning("checked")
        return "ok"

    def chatty_instructions(state: object) -> str:
        tool_logger.warning("instructions built")
        return "Be terse."

    script = Script(calls(call("c1", "refuel", litres=1), call("c2", "refuel", litres=2), call("c3", "check")),
                    answer("done"))
    agent = Agent(model=script.model, tools=[refuel, check], instructions=chatty_instructions)
    events = await _events(agent.prompt("go"))

    logged = {e.text: e.metadata["call_id"] for e in events if e.kind == "status" and "logger" in e.metadata}
    assert logged == {"warning: refuelled 1 litres": "c1", "warning: refuelled 2 litres": "c2",
                      "warning: checked": "c3"}


async def test_concurrent_runs_each_see_only_their_own_log_records(tool_logger: logging.Logger) -> None:
    barrier = asyncio.Barrier(2)

    @tool
    async def work(who: str) -> str:
        """Work, logging as we go."""
        tool_logger.warning("%s started", who)
        async with asyncio.timeout(2):
            await barrier.wait()  # both runs are inside their tool now
        tool_logger.warning("%s finished", who)
        return "done"

    def agent_for(who: str) -> Agent:
        script = Script(calls(call(f"{who}-1", "work", who=who)), answer("ok"))
        return Agent(who, model=script.model, tools=[work])

    ann, bob = await asyncio.gather(_events(agent_for("ann").prompt("go")), _events(agent_for("bob").prompt("go")))

    def logged(events: list[Event]) -> list[str]:
        return [t for t in _status(events, "tool") if "started" in t or "finished" in t]

    assert [t.split(": ", 1)[1] for t in logged(ann)] == ["ann started", "ann finished"]
    assert [t.split(": ", 1)[1] for t in logged(bob)] == ["bob started", "bob finished"]
