from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookline import Agent, ConfigError, Message, ToolCallPart, ToolResultPart, tool
from hookline.conversation import conversation_problem
from hookline.hooklib import Compaction, SlidingWindow
from hookline.hooklib.window import safe_cut
from hookline.models import FunctionModel, ModelRequest, ModelResponse

pytestmark = pytest.mark.anyio


# -- generated conversations ---------------------------------------------------------------


def _block(kind: str, index: int, calls: int) -> list[Message]:
    if kind == "user":
        return [Message.user(f"u{index}")]
    if kind == "answer":
        return [Message.assistant(f"a{index}")]
    if kind == "user_action":
        call = ToolCallPart(id=f"ua{index}", name="write_file", arguments={})
        return [Message("user", [call, ToolResultPart(call_id=call.id, content="ok")])]
    ids = [f"c{index}-{i}" for i in range(calls)]
    turn = Message("assistant", [ToolCallPart(id=i, name="t") for i in ids])
    if kind == "calls_one_message":
        return [turn, Message("tool", [ToolResultPart(call_id=i, content="r") for i in ids])]
    return [turn, *(Message("tool", [ToolResultPart(call_id=i, content="r")]) for i in ids)]


blocks = st.lists(
    st.tuples(
        st.sampled_from(["user", "answer", "calls", "calls", "calls_one_message", "user_action"]), st.integers(1, 4)
    ),
    min_size=1,
    max_size=25,
)


def conversation(spec: list[tuple[str, int]]) -> list[Message]:
    return [m for index, (kind, calls) in enumerate(spec) for m in _block(kind, index, calls)]


@settings(max_examples=500, deadline=None)
@given(blocks, st.integers(1, 12), st.booleans())
def test_a_window_is_always_a_valid_tail(spec: list[tuple[str, int]], size: int, keep_first: bool) -> None:
    messages = conversation(spec)
    assert conversation_problem(messages) is None
    size = max(size, 2) if keep_first else size
    window = SlidingWindow(max_messages=size, keep_first_user=keep_first).window(messages)

    if len(messages) <= size:
        assert window is None
        return
    first_user = next((m for m in messages if m.role == "user"), None)
    if window is None:  # nothing can go: the newest turn (and the kept first message) is all there is
        newest = max(i for i, m in enumerate(messages) if m.role != "tool")
        assert newest == 0 or (keep_first and newest == 1 and messages[0] is first_user)
        return
    assert conversation_problem(window) is None, window
    assert window[-1] is messages[-1]
    suffix = window if _is_suffix(window, messages) else window[1:]
    assert _is_suffix(suffix, messages)
    if keep_first and first_user is not None:
        assert any(m is first_user for m in window)
    if suffix is not window:
        assert keep_first
        assert window[0] is first_user
    if len(window) > size:  # only to keep the newest turn whole: one call message and its results
        turn = window[1:] if keep_first and window[0] is first_user else window
        assert turn[0].tool_calls
        assert all(m.role == "tool" for m in turn[1:])


def _is_suffix(part: list[Message], messages: list[Message]) -> bool:
    return all(a is b for a, b in zip(part, messages[len(messages) - len(part) :], strict=True))


@settings(max_examples=300, deadline=None)
@given(blocks, st.integers(1, 8))
def test_compaction_cuts_between_whole_turns(spec: list[tuple[str, int]], keep_last: int) -> None:
    messages = conversation(spec)
    cut = Compaction(lambda m: "s", trigger_messages=keep_last + 1, keep_last=keep_last).cut(messages)

    if cut is None:
        return
    assert cut >= 2
    assert conversation_problem(messages[:cut]) is None
    assert conversation_problem([Message.user("summary"), *messages[cut:]]) is None


def test_safe_cut_never_lands_on_a_tool_message() -> None:
    messages = conversation([("user", 1), ("calls", 3)])  # user, assistant, tool, tool, tool

    assert [safe_cut(messages, i) for i in range(5)] == [0, 1, 1, 1, 1]


# -- real runs -----------------------------------------------------------------------------


@tool
def look(n: int) -> str:
    """Look at item n."""
    return f"item {n}"


class Worker:
    """Calls `look` twice per turn for `turns` turns, then answers; keeps every request."""

    def __init__(self, turns: int) -> None:
        self.turns = turns
        self.requests: list[list[Message]] = []

    def __call__(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(list(request.messages))
        turn = len(self.requests)
        if turn > self.turns:
            return ModelResponse(text=f"done after {turn - 1} turns")
        calls = [ToolCallPart(id=f"c{turn}-{i}", name="look", arguments={"n": turn * 10 + i}) for i in range(2)]
        return ModelResponse(tool_calls=calls)


async def test_sliding_window_in_a_run_keeps_the_task_and_whole_tool_turns() -> None:
    worker = Worker(turns=8)
    window = SlidingWindow(max_messages=5)
    agent = Agent(model=FunctionModel(worker), tools=[look], hooks={"before_llm": [window]}, max_turns=20)

    result = await agent.prompt("inspect the items")

    assert result.output == "done after 8 turns"
    for messages in worker.requests:
        assert conversation_problem(messages) is None
        assert messages[0] == Message.user("inspect the items")
        assert len(messages) <= 5
    # from turn 3 on the window is full: the task, then the latest call and its two results
    assert [m.role for m in worker.requests[-1]] == ["user", "assistant", "tool", "tool"]
    assert worker.requests[-1][1].tool_calls[0].id == "c8-0"
    # only the live conversation is trimmed: the run's messages are all there
    assert len(result.messages) == 1 + 8 * 3 + 1


async def test_sliding_window_without_the_first_user_message() -> None:
    worker = Worker(turns=3)
    agent = Agent(
        model=FunctionModel(worker),
        tools=[look],
        hooks={"before_llm": [SlidingWindow(max_messages=1, keep_first_user=False)]},
    )

    await agent.prompt("inspect")

    # one message would split the last call from its results: the whole turn is kept
    assert [m.role for m in worker.requests[-1]] == ["assistant", "tool", "tool"]
    assert all(conversation_problem(m) is None for m in worker.requests)


async def test_compaction_in_a_run_summarises_older_turns_with_an_async_summarizer() -> None:
    seen: list[list[Message]] = []

    async def summarize(messages: list[Message]) -> str:
        seen.append(messages)
        assert conversation_problem(messages) is None
        return f"{len(messages)} messages"

    worker = Worker(turns=6)
    compaction = Compaction(summarize, trigger_messages=8, keep_last=3)
    agent = Agent(model=FunctionModel(worker), tools=[look], hooks={"before_llm": [compaction]}, max_turns=20)

    result = await agent.prompt("inspect the items")

    assert result.output == "done after 6 turns"
    assert seen, "compaction never triggered"
    for messages in worker.requests:
        assert conversation_problem(messages) is None
        assert len(messages) <= 8 + 3
    last = worker.requests[-1]
    assert last[0].role == "user"
    assert last[0].text.startswith("Summary of earlier conversation: ")
    # a later summary is given the earlier one: summaries roll forward
    assert seen[1][0].text.startswith("Summary of earlier conversation: ")


async def test_compaction_with_a_plain_summarizer() -> None:
    worker = Worker(turns=4)
    compaction = Compaction(lambda messages: "earlier work", trigger_messages=4, keep_last=2)
    agent = Agent(model=FunctionModel(worker), tools=[look], hooks={"before_llm": [compaction]})

    await agent.prompt("inspect")

    assert worker.requests[-1][0] == Message.user("Summary of earlier conversation: earlier work")
    assert all(conversation_problem(m) is None for m in worker.requests)


@pytest.mark.parametrize(
    ("factory", "match"),
    [
        (lambda: SlidingWindow(max_messages=0, keep_first_user=False), "max_messages"),
        (lambda: SlidingWindow(max_messages=1), "max_messages"),
        (lambda: Compaction(lambda m: "", trigger_messages=3, keep_last=3), "trigger_messages"),
        (lambda: Compaction(lambda m: "", keep_last=0), "keep_last"),
        (lambda: Compaction("summary"), "summarize"),  # type: ignore[arg-type]
    ],
)
def test_bad_sizes_are_config_errors(factory: object, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        factory()  # type: ignore[operator]
