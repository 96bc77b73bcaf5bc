"""Handoffs (issue 27, part 5): an agent hands the conversation to another through a tool the model
calls; the session records who holds it, the target answers, and the next prompt goes to the holder;
what the target is shown of the history before the handoff can be filtered."""

from __future__ import annotations

import pytest

from hookline import Agent, ConfigError
from hookline.handoffs import HOLDER_KEY, Handover, Team
from hookline.sessions import SessionStore

from .agents import team

pytestmark = pytest.mark.anyio


async def test_a_handoff_lets_the_target_answer_and_the_next_prompt_goes_to_it(store: SessionStore) -> None:
    seen: dict[str, list[list[str]]] = {}
    crew = team(store, seen)
    first = await crew.run("hello", session_id="s")
    assert first.output == "triage: hello"

    handed = await crew.run("my invoice is wrong", session_id="s")
    assert handed.output == "billing: about 'my invoice is wrong'"
    assert (await store.get("s", with_events=False)).state[HOLDER_KEY] == "billing"
    assert await crew.holder("s") == "billing"
    log = await store.events("s", view="prompt")
    (record,) = [r for e in log for r in e.to_message().tool_results if r.name == "transfer_to_billing"]
    assert Handover.model_validate_json(record.content) == Handover(to="billing", reason="an invoice question")
    assert [e.author for e in log if e.role == "assistant"] == ["triage", "triage", "billing"]

    triage_calls = len(seen["triage"])
    follow_up = await crew.run("and the due date?", session_id="s")
    assert follow_up.output == "billing: about 'and the due date?'"
    assert len(seen["triage"]) == triage_calls, "the holder answered, not the first agent"

    back = await crew.run("thanks", session_id="s")
    assert back.output == "triage: welcome back"
    assert await crew.holder("s") == "triage"


async def test_another_team_object_on_the_same_store_routes_to_the_holder(store: SessionStore) -> None:
    await team(store, {}).run("my invoice is wrong", session_id="s")
    seen: dict[str, list[list[str]]] = {}
    later = await team(store, seen).run("and the due date?", session_id="s")
    assert later.output == "billing: about 'and the due date?'"
    assert seen["triage"] == []


async def test_a_history_filter_chooses_what_the_target_is_shown(store: SessionStore) -> None:
    seen: dict[str, list[list[str]]] = {}
    crew = team(store, seen, history=True)
    await crew.run("hello", session_id="s")
    await crew.run("my invoice is wrong", session_id="s")
    assert seen["billing"][0] == ["hello", "my invoice is wrong"], "user messages only, the handoff left out"
    await crew.run("and the due date?", session_id="s")
    assert seen["billing"][1] == ["hello", "my invoice is wrong", "billing: about 'my invoice is wrong'",
                                  "and the due date?"], "after the handoff, everything is kept"
    texts = [e.text for e in await store.events("s", view="prompt")]
    assert "triage: hello" in texts, "the log keeps every message"


async def test_handing_over_back_and_forth_stops_after_max_handoffs(store: SessionStore) -> None:
    from hookline import ToolCallPart
    from hookline.models import FunctionModel, ModelResponse

    def ping(target: str) -> FunctionModel:
        return FunctionModel(lambda r: ModelResponse(tool_calls=[ToolCallPart(id=f"x{len(r.messages)}",
                                                                              name=f"transfer_to_{target}",
                                                                              arguments={})]))

    crew = Team([Agent("a", model=ping("b")), Agent("b", model=ping("a"))],
                handoffs={"a": ["b"], "b": ["a"]}, session_store=store, max_handoffs=3)
    result = await crew.run("go", session_id="s")
    assert isinstance(result.output, Handover)
    assert sum(1 for e in await store.events("s", view="prompt") if e.role == "assistant") == 4


def test_a_team_is_checked() -> None:
    a, b = Agent("a"), Agent("b")
    with pytest.raises(ConfigError, match="distinct names"):
        Team([a, Agent("a")], handoffs={})
    with pytest.raises(ConfigError, match="'a' -> 'c' names no other agent of the team; its agents: a, b"):
        Team([a, b], handoffs={"a": ["c"]})
    with pytest.raises(ConfigError, match="'a' -> 'a'"):
        Team([a, b], handoffs={"a": ["a"]})
    picky = Agent("p", tools=lambda state: [])
    with pytest.raises(ConfigError, match="picks its tools with a function"):
        Team([picky, b], handoffs={"p": ["b"]})


def test_an_agent_clone_keeps_its_configuration_under_the_changes() -> None:
    from hookline import StatusOptions, tool
    from hookline.hooklib import Budget

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    budget = Budget(max_turns=3)
    original = Agent("calc", instructions="terse", tools=[add], hooks={"before_llm": [budget]}, max_turns=7,
                     status=StatusOptions(llm=False), exit_conditions=["add"])
    copy = original.clone(name="calc2", max_turns=2)
    assert (copy.name, copy.max_turns, copy.instructions, copy.status.llm) == ("calc2", 2, "terse", False)
    assert copy.tools == [add]
    assert [b.hook for b in copy.hooks[next(iter(copy.hooks))]] == [budget]
    assert copy.exit_conditions == {"add"}
    with pytest.raises(ConfigError, match="clone\\(\\) takes arguments of Agent, not 'colour'"):
        original.clone(colour="red")

