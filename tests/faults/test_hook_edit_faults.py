"""Whatever hooks do to the live run, the stored log stays a valid conversation and errors name the hook.

Hypothesis builds one to three hooks, each sitting at a random point and making one random
edit on its n-th call: structural edits of `state.messages` (delete, insert, swap, replace
all), a value that is not a Message put in the list, in-place edits of parts (a call's id, a
result's call id, a text), a safe `inject`, a replaced or mutated `state.response`, a
replaced `state.tool_result` (any value: a string, a dict, something JSON cannot encode, a
result for the wrong call) and values in `state.data` that cannot be saved (a cycle, an
object). Two prompts then run on one durable SQLite session. After every run:

- the stored log (read back from the file) is a valid conversation, gap-free, each call
  answered once; a run that raised did not record "run completed";
- the run completed, stopped by the hook or at max_turns, or raised `HookError` naming a
  hook that made its edit, with its point (or `ConfigError` about the session state, for `state.data`
  that cannot be saved) — no other error escapes;
- no model request ever held an invalid conversation.

Short mode: 60 examples (derandomized); HOOKLINE_FAULTS_LONG=1: 600 random ones.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookline import (
    Agent,
    ConfigError,
    HookError,
    MaxTurnsExceeded,
    Message,
    State,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    hook,
    tool,
)
from hookline.conversation import conversation_problem
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SQLiteSessionStore

from ._harness import LONG, log_problems

pytestmark = pytest.mark.faults

POINTS = ("before_run", "before_llm", "after_llm", "before_tool", "after_tool", "on_exit", "after_run")
MessageKind = Literal["user", "assistant", "calls", "result"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Script:
    """The model: two tool turns per prompt (the first with two calls), then an answer.

    It notes every request whose conversation is not valid.
    """

    def __init__(self) -> None:
        self.made = 0
        self.invalid: list[str] = []

    def __call__(self, request: ModelRequest) -> ModelResponse:
        problem = conversation_problem(request.messages)
        if problem:
            self.invalid.append(problem)
        since_user = 0
        for message in reversed(request.messages):
            if message.role == "user":
                break
            since_user += bool(message.tool_calls)
        if since_user >= 2:
            return ModelResponse(text="done")
        self.made += 1
        width = 2 if since_user == 0 else 1
        calls = [ToolCallPart(id=f"m{self.made}-{k}", name="add", arguments={"a": k, "b": 1}) for k in range(width)]
        return ModelResponse(tool_calls=calls)


@dataclass(frozen=True)
class New:
    """A message to put in; `ref` picks one of the call ids known when it is built."""

    kind: MessageKind
    ref: int

    def build(self, known: list[str]) -> Message:
        chosen = known[self.ref % len(known)]
        if self.kind == "user":
            return Message.user("hook text")
        if self.kind == "assistant":
            return Message.assistant("hook answer")
        if self.kind == "calls":
            return Message("assistant", [ToolCallPart(id=chosen, name="add", arguments={"a": 1, "b": 1})])
        return Message("tool", [ToolResultPart(call_id=chosen, content="hook result", name="add")])


class Unencodable:
    """A value JSON cannot encode."""

    def __repr__(self) -> str:
        return "<Unencodable>"


@dataclass(frozen=True)
class Edit:
    """One edit; indices are taken modulo the list's length when it is applied."""

    kind: str
    i: int = 0
    j: int = 0
    new: tuple[New, ...] = ()

    def apply(self, state: State) -> None:
        known = [c.id for m in state.messages for c in m.tool_calls] + ["ghost"]
        getattr(self, f"_{self.kind}")(state, known)

    def _delete(self, state: State, known: list[str]) -> None:
        if state.messages:
            del state.messages[self.i % len(state.messages)]

    def _insert(self, state: State, known: list[str]) -> None:
        state.messages.insert(self.i % (len(state.messages) + 1), self.new[0].build(known))

    def _swap(self, state: State, known: list[str]) -> None:
        messages = state.messages
        if len(messages) >= 2:
            a, b = self.i % len(messages), self.j % len(messages)
            messages[a], messages[b] = messages[b], messages[a]

    def _replace_all(self, state: State, known: list[str]) -> None:
        state.messages = [n.build(known) for n in self.new]

    def _not_a_message(self, state: State, known: list[str]) -> None:
        junk: Any = ["not a message", {"role": "user", "parts": []}, None][self.j % 3]
        state.messages.insert(self.i % (len(state.messages) + 1), junk)

    def _mutate_part(self, state: State, known: list[str]) -> None:
        parts = [p for m in state.messages for p in m.parts]
        if not parts:
            return
        part = parts[self.i % len(parts)]
        if isinstance(part, ToolCallPart):
            part.id = "mutated"
        elif isinstance(part, ToolResultPart):
            part.call_id = known[self.j % len(known)]
        elif isinstance(part, TextPart):
            part.text = "mutated text"

    def _inject(self, state: State, known: list[str]) -> None:
        state.inject(Message.user("injected note"))

    def _response(self, state: State, known: list[str]) -> None:
        if state.response is None:
            return
        if self.j % 2:
            state.response.parts.append(ToolCallPart(id=known[self.i % len(known)], name="add", arguments={}))
        else:
            state.response = self.new[0].build(known) if self.new else Message.assistant("replaced")

    def _tool_result(self, state: State, known: list[str]) -> None:
        if state.tool_call is None:
            return
        choices: list[Any] = [
            "replaced",
            {"nested": [1, 2, {"x": None}]},
            Unencodable(),
            "nul \x00 and lone \ud800 surrogate",
            ToolResultPart(call_id=known[self.i % len(known)], content="for another call", name="add"),
        ]
        state.tool_result = choices[self.j % len(choices)]

    def _data(self, state: State, known: list[str]) -> None:
        if self.j % 2:
            state.data["self"] = state.data
        else:
            state.data["object"] = Unencodable()


news = st.builds(New, kind=st.sampled_from(["user", "assistant", "calls", "result"]), ref=st.integers(0, 9))
edits = st.one_of(
    st.builds(Edit, kind=st.just("delete"), i=st.integers(0, 20)),
    st.builds(Edit, kind=st.just("insert"), i=st.integers(0, 20), new=st.tuples(news)),
    st.builds(Edit, kind=st.just("swap"), i=st.integers(0, 20), j=st.integers(0, 20)),
    st.builds(Edit, kind=st.just("replace_all"), new=st.lists(news, max_size=4).map(tuple)),
    st.builds(Edit, kind=st.just("not_a_message"), i=st.integers(0, 20), j=st.integers(0, 2)),
    st.builds(Edit, kind=st.just("mutate_part"), i=st.integers(0, 30), j=st.integers(0, 9)),
    st.builds(Edit, kind=st.just("inject")),
    st.builds(Edit, kind=st.just("response"), i=st.integers(0, 9), j=st.integers(0, 1),
              new=st.lists(news, max_size=1).map(tuple)),
    st.builds(Edit, kind=st.just("tool_result"), i=st.integers(0, 9), j=st.integers(0, 4)),
    st.builds(Edit, kind=st.just("data"), j=st.integers(0, 1)),
)


@dataclass(frozen=True)
class Plan:
    """One hook: where it sits, on which of its calls it edits, and how."""

    point: str
    firing: int
    edit: Edit


plans = st.lists(st.builds(Plan, point=st.sampled_from(POINTS), firing=st.integers(0, 3), edit=edits),
                 min_size=1, max_size=3)


@dataclass
class Fired:
    """Which hooks made their edit, at which point."""

    at: dict[str, str] = field(default_factory=dict)
    data_edit: bool = False


def make_hooks(plans: list[Plan], fired: Fired) -> dict[str, list[Any]]:
    hooks: dict[str, list[Any]] = {}
    for number, plan in enumerate(plans):
        name, calls = f"editor{number}", [0]

        def edit(state: State, plan: Plan = plan, name: str = name, calls: list[int] = calls) -> None:
            calls[0] += 1
            if calls[0] == plan.firing + 1:
                fired.at[name] = str(state.point)
                fired.data_edit |= plan.edit.kind == "data"
                plan.edit.apply(state)

        hooks.setdefault(plan.point, []).append(hook(name=name)(edit))
    return hooks


async def run_plans(plans: list[Plan], db: Path) -> list[str]:
    """Two prompts on one durable session under the planned hooks; every broken promise found."""
    fired, script = Fired(), Script()
    problems: list[str] = []
    async with SQLiteSessionStore(db) as store:
        agent = Agent(name="edited", model=FunctionModel(script), tools=[add], max_turns=6,
                      hooks=make_hooks(plans, fired), session_store=store)
        for prompt in ("first", "second"):
            before = len(await _log(store))
            error: Exception | None = None
            try:
                await agent.prompt(prompt).session("s")
            except Exception as exc:
                error = exc
            log = await _log(store)
            # a hook may reuse an earlier turn's call id; each turn's calls are still answered once
            problems += [f"{prompt}: {p}" for p in log_problems(log, unique_call_ids=False)]
            problems += [f"{prompt}: {p}" for p in _error_problems(error, fired, log[before:])]
    problems += [f"a model request was invalid: {p}" for p in script.invalid]
    return problems


async def _log(store: SQLiteSessionStore) -> list[Any]:
    try:
        return list(await store.events("s", view="all"))
    except KeyError:  # SessionNotFound: not created yet
        return []


def _error_problems(error: Exception | None, fired: Fired, logged: list[Any]) -> list[str]:
    """What is wrong with how a run ended, given the hooks that fired and what it logged."""
    if error is None or isinstance(error, MaxTurnsExceeded):
        return []
    problems = []
    if any(e.kind == "status" and e.text == "run completed" for e in logged):
        problems.append(f"the run raised {type(error).__name__}, yet logged 'run completed'")
    if isinstance(error, HookError):
        if not _names_a_fired_hook(error, fired):
            problems.append(f"HookError names {error.hook!r} at {error.point!r}; hooks fired: {fired.at}: {error}")
    elif isinstance(error, ConfigError):
        if not (fired.data_edit and "state" in str(error)):
            problems.append(f"ConfigError without a state.data edit, or not naming the state: {error}")
    else:
        problems.append(f"{type(error).__name__} escaped: {error}")
    return problems


def _names_a_fired_hook(error: HookError, fired: Fired) -> bool:
    """Whether the error names a hook that made its edit, with its point.

    An in-place edit may be found only at a later check, so the message may list the
    hooks that ran since the last one ("one of the hooks 'a' at after_llm, 'b' at ...").
    """
    if fired.at.get(error.hook) == error.point and error.hook in str(error):
        return True
    return any(f"'{name}' at {point}" in str(error) for name, point in fired.at.items())


@settings(
    max_examples=600 if LONG else 60,
    deadline=None,
    derandomize=not LONG,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(plans=plans)
def test_random_hook_edits_never_break_the_stored_log(plans: list[Plan]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        problems = asyncio.run(run_plans(plans, Path(folder) / "hooks.db"))
    assert not problems, problems
