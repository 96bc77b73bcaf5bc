"""Compaction in the log (issue 27, part 3): the summary is an event of the session's log, the next runs
(in this process, another one, or a fork) start from it without summarising again, the original messages
stay in the log, a user can undo it, and a token trigger reads the model's reported usage."""

from __future__ import annotations

import pytest

from hookline import ConfigError
from hookline.compaction import compacted, compaction_of, undo_compaction
from hookline.hooklib.window import TOKENS_KEY
from hookline.sessions import SessionStore

from .agents import Notes, chatty

pytestmark = pytest.mark.anyio

SUMMARY = "Summary of earlier conversation: "


async def _chat(store: SessionStore, notes: Notes, prompts: range, **settings: int) -> None:
    agent = chatty(store, notes, **settings)
    for number in prompts:
        result = await agent.prompt(f"q{number}").session("s")
        assert result.stop_reason == "completed"


async def test_the_summary_is_kept_in_the_log_and_the_next_runs_start_from_it(store: SessionStore) -> None:
    notes = Notes()
    await _chat(store, notes, range(1, 6))

    assert notes.summaries == [5], "summarised once: when the conversation first held more than 6 messages"
    assert notes.requests[3] == [SUMMARY + "5 earlier messages", "answer to q3", "q4"]
    assert notes.requests[4] == [SUMMARY + "5 earlier messages", "answer to q3", "q4", "answer to q4", "q5"], (
        "the next run starts from the summary, without summarising again")
    log = await store.events("s", view="all")
    (summary,) = [e for e in log if compaction_of(e) is not None]
    record = compaction_of(summary)
    assert record is not None
    assert (summary.author, summary.role, summary.text) == ("compaction", "user", SUMMARY + "5 earlier messages")
    assert {k: record[k] for k in ("replaced", "kept", "trigger")} == {"replaced": 5, "kept": 2, "trigger": "messages"}
    messages = [e.text for e in log if e.kind == "message" and e.author != "compaction"]
    assert messages == [t for n in range(1, 6) for t in (f"q{n}", f"answer to q{n}")], "nothing was deleted"


async def test_summaries_roll_forward_and_only_the_latest_is_sent(store: SessionStore) -> None:
    notes = Notes()
    await _chat(store, notes, range(1, 9))
    assert notes.summaries == [5, 5, 5], "at the 4th, 6th and 8th prompts: each summary is among what the next replaces"
    assert notes.requests[-1] == [SUMMARY + "5 earlier messages", "answer to q7", "q8"]
    assert sum(1 for text in notes.requests[-1] if text.startswith(SUMMARY)) == 1
    loaded = await compacted(store, "s", await store.events("s", view="prompt"))
    assert [e.text for e in loaded] == [*notes.requests[-1], "answer to q8"]


async def test_another_agent_object_on_the_same_store_uses_the_summary(store: SessionStore) -> None:
    first = Notes()
    await _chat(store, first, range(1, 5))
    later = Notes()
    await _chat(store, later, range(5, 6))
    assert later.summaries == []
    assert later.requests[0][0] == SUMMARY + "5 earlier messages"


async def test_a_fork_after_the_compaction_starts_from_the_summary(store: SessionStore) -> None:
    from hookline.server.forking import fork_session
    from hookline.server.inspect_schemas import ForkBody

    notes = Notes()
    await _chat(store, notes, range(1, 6))
    last_prompt = max(e.seq or 0 for e in await store.events("s") if e.text == "q5")
    source = await store.get("s", with_events=False)
    fork = await fork_session(store, source, ForkBody(id="f", at_seq=last_prompt, text="q5 again"), "default")
    forked = Notes()
    result = await chatty(store, forked).resume(fork.id, {})
    assert result.output == "answer to q5 again"
    assert forked.summaries == []
    assert forked.requests[0][0] == SUMMARY + "5 earlier messages"


async def test_undoing_a_compaction_brings_the_messages_back_to_the_next_run(store: SessionStore) -> None:
    notes = Notes()
    await _chat(store, notes, range(1, 5), trigger_messages=6)
    line = await undo_compaction(store, "s")
    assert line.text == "default undid the compaction of 5 messages"
    assert line.metadata["compaction_undone"] == compaction_of(
        next(e for e in await store.events("s") if compaction_of(e)))["id"]  # type: ignore[index]

    again = Notes()
    await _chat(store, again, range(5, 6), trigger_messages=100)
    assert again.requests[0][:3] == ["q1", "answer to q1", "q2"], "the original messages, the summary left out"
    assert not any(text.startswith(SUMMARY) for text in again.requests[0])
    with pytest.raises(ConfigError, match="no compaction in effect"):
        await undo_compaction(store, "s")


async def test_undoing_the_latest_of_two_falls_back_to_the_one_before(store: SessionStore) -> None:
    notes = Notes()
    await _chat(store, notes, range(1, 7))
    loaded = await compacted(store, "s", await store.events("s", view="prompt"))
    first, second = [compaction_of(e)["id"] for e in await store.events("s") if compaction_of(e)]  # type: ignore[index]
    assert compaction_of(loaded[0])["id"] == second  # type: ignore[index]
    await undo_compaction(store, "s", second)
    loaded = await compacted(store, "s", await store.events("s", view="prompt"))
    assert compaction_of(loaded[0])["id"] == first  # type: ignore[index]
    assert [e.text for e in loaded][1:3] == ["answer to q3", "q4"]
    with pytest.raises(ConfigError, match="has no compaction 'nope'"):
        await undo_compaction(store, "s", "nope")


async def test_a_token_trigger_reads_the_reported_usage_within_a_run_and_across_runs(store: SessionStore) -> None:
    notes = Notes()
    # each message sent costs 10 input tokens: the 3rd prompt's call is sent 5 messages (50 + 1 tokens)
    await _chat(store, notes, range(1, 5), trigger_messages=1000, trigger_tokens=40, tokens_per_message=10)

    assert notes.summaries == [5], "the 4th run compacted on the 3rd run's last call (51 tokens), from the saved state"
    assert notes.requests[3] == [SUMMARY + "5 earlier messages", "answer to q3", "q4"]
    (summary,) = [compaction_of(e) for e in await store.events("s") if compaction_of(e)]
    assert summary is not None
    assert summary["trigger"] == "tokens"
    state = (await store.get("s", with_events=False)).state
    assert state[TOKENS_KEY]["last"] == 31, "the last call: 3 messages of 10 tokens, and 1 token of answer"


async def test_a_token_trigger_without_the_after_llm_hook_is_refused(store: SessionStore) -> None:
    from hookline import Agent, HookError
    from hookline.hooklib import Compaction
    from hookline.models import FunctionModel, ModelResponse

    compaction = Compaction(lambda messages: "", trigger_tokens=10)
    agent = Agent(model=FunctionModel(lambda r: ModelResponse(text="hi")), hooks={"before_llm": [compaction]})
    with pytest.raises(HookError, match="register it there too"):
        await agent.prompt("hello")


async def test_a_token_trigger_fires_within_a_run_on_the_call_before(store: SessionStore) -> None:
    from hookline import Agent, ToolCallPart, tool
    from hookline.hooklib import Compaction
    from hookline.models import FunctionModel, ModelRequest, ModelResponse
    from hookline.usage import Usage

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    sent: list[list[str]] = []

    def model(request: ModelRequest) -> ModelResponse:
        sent.append([m.role for m in request.messages])
        done = len(sent) - 1
        usage = Usage(input_tokens=100, output_tokens=5)
        if done < 2:
            return ModelResponse(tool_calls=[ToolCallPart(id=f"c{done}", name="add", arguments={"a": 1, "b": 1})],
                                 usage=usage)
        return ModelResponse(text="2 and 2", usage=usage)

    summarised: list[int] = []
    compaction = Compaction(lambda messages: summarised.append(len(messages)) or "sums", trigger_messages=1000,
                            keep_last=1, trigger_tokens=50)
    agent = Agent(model=FunctionModel(model), tools=[add], session_store=store,
                  hooks={"before_llm": [compaction], "after_llm": [compaction]})
    result = await agent.prompt("add twice").session("s")

    assert result.output == "2 and 2"
    assert summarised == [3], "before the 3rd call: the 2nd reported 105 tokens (the 2nd could not cut: too short)"
    assert sent[2] == ["user", "assistant", "tool"], "the summary, then the last call and its result"
