"""The prompt view a run leaves in its session, over random runs: prompts, tool turns, pauses, resumptions.

Whatever the runs did (tools that answer or fail, unknown tools, calls paused for approval
and then approved, refused or left behind by a new prompt, calls the user made before the
prompt), the session's prompt view stays the conversation a model can be sent:
- every tool call has exactly one result, right after it;
- it is the log in order: each model request was the prompt view so far, as it stood;
- a call the user made without its result reached the model as text, never as a call,
  while the log keeps the call itself.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from hypothesis import event, given, settings
from hypothesis import strategies as st

from hookline import Agent, Event, RunResult, State, ToolCallPart, ToolResultPart, hook, tool
from hookline.conversation import user_actions_as_text
from hookline.models import ModelRequest, ModelResponse
from hookline.sessions import InMemorySessionStore

from .invariant import conversation_error
from .scripted import Script, answer, call, calls

TOOLS = ("ok", "boom", "guarded", "missing")
"""What a call does: answers; raises; waits for approval (a hook pauses it); names no tool."""


@tool
def ok() -> str:
    """Answer."""
    return "fine"


@tool
def boom() -> str:
    """Fail."""
    raise RuntimeError("the tool broke")


@tool
def guarded() -> str:
    """Act, once approved."""
    return "done as approved"


@hook
def ask_first(state: State) -> None:
    for pending in state.tool_calls:
        if pending.name == "guarded":
            state.interrupt(pending.id, "needs approval")


@dataclass(frozen=True)
class Run:
    """One run: a prompt (after the calls the user made: True for one with its result), or a resumption."""

    kind: Literal["prompt", "resume"]
    user_calls: tuple[bool, ...] = ()
    turns: tuple[tuple[str, ...], ...] = ()
    approve: bool | None = None


runs = st.one_of(
    st.builds(
        Run,
        kind=st.just("prompt"),
        user_calls=st.lists(st.booleans(), max_size=2).map(tuple),
        turns=st.lists(st.lists(st.sampled_from(TOOLS), min_size=1, max_size=3).map(tuple), max_size=3).map(tuple),
    ),
    st.builds(Run, kind=st.just("resume"), approve=st.sampled_from([True, False, None])),
)


class Model:
    """Makes the tool turns of the run that began last, then answers; every call id is new."""

    def __init__(self) -> None:
        self.turns: tuple[tuple[str, ...], ...] = ()
        self.ids = (f"m{n}" for n in itertools.count(1))

    def __call__(self, request: ModelRequest) -> ModelResponse:
        prompt_at = max(i for i, m in enumerate(request.messages) if m.role == "user")
        made = sum(1 for m in request.messages[prompt_at:] if m.role == "assistant")
        if made == len(self.turns):
            return answer("finished")
        return calls(*(call(next(self.ids), name) for name in self.turns[made]))


async def _play(plan: list[Run]) -> tuple[list[Event], Script, list[str], RunResult | None]:
    store = InMemorySessionStore()
    await store.create(app="props", user="default", session_id="s")
    model = Model()
    script = Script(model, repeat_last=True)
    agent = Agent(model=script.model, tools=[ok, boom, guarded], hooks={"before_tool": [ask_first]},
                  session_store=store)
    user_ids = (f"u{n}" for n in itertools.count(1))
    made_by_user: list[str] = []
    last: RunResult | None = None
    for run in plan:
        if run.kind == "resume":
            if last is None or last.stop_reason != "interrupted":
                continue
            approvals = {} if run.approve is None else {p.call_id: run.approve for p in last.interruptions}
            event(f"a resumption approving {run.approve}")
            last = await agent.resume("s", approvals=approvals)
            continue
        for answered in run.user_calls:
            made_by_user.append(next(user_ids))
            await store.prepare_event("s", _user_call(made_by_user[-1], answered=answered))
        model.turns = run.turns
        last = await agent.prompt("go").session("s")
    return await store.events("s", view="prompt"), script, made_by_user, last


def _user_call(call_id: str, *, answered: bool) -> Event:
    made = ToolCallPart(id=call_id, name="write_file", arguments={"path": f"{call_id}.txt"})
    parts: list[Any] = [made, ToolResultPart(call_id=call_id, content="written")] if answered else [made]
    return Event(author="user", kind="message", role="user", parts=parts)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(plan=st.lists(runs, min_size=1, max_size=5))
def test_the_prompt_view_stays_a_conversation_a_model_can_be_sent(plan: list[Run]) -> None:
    prompt_view, script, made_by_user, last = asyncio.run(_play(plan))
    event(f"last run: {last.stop_reason if last else 'none'}")
    messages = [e.to_message() for e in prompt_view]
    sent = [user_actions_as_text(m) for m in messages]
    paused = {p.call_id for p in last.interruptions} if last and last.stop_reason == "interrupted" else set()

    # Every call has exactly one result, right after it (the calls of a paused run: none yet).
    assert conversation_error(sent, allow_open_tail=bool(paused)) is None
    made = Counter(c.id for m in messages if m.role == "assistant" for c in m.tool_calls)
    answered = Counter(r.call_id for m in messages if m.role == "tool" for r in m.tool_results)
    assert set(made.values()) | set(answered.values()) <= {1}
    assert set(made) - set(answered) == paused

    # Order is kept: each request was the prompt view as it stood.
    for number, request in enumerate(script.requests, 1):
        assert request.messages == sent[: len(request.messages)], f"request {number} was not the log so far"

    # The user's calls: kept in the log, told to the model as text when they have no result.
    logged_by_user = [c.id for m in messages if m.role == "user" for c in m.tool_calls]
    assert logged_by_user == made_by_user[: len(logged_by_user)]
    for message in (m for request in script.requests for m in request.messages if m.role == "user"):
        told = {r.call_id for r in message.tool_results}
        assert all(c.id in told for c in message.tool_calls), "a user's call without its result went out"
