"""A tool that asks the user a question (`RunContext.ask`): the run pauses at its call, with the
answer's JSON schema on the `Interruption`; the answer on resume reaches the tool as `ctx.reply`
(accepted, declined or cancelled)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookline import Agent, ConfigError, RunContext, tool
from hookline._run.resume import paused_calls
from hookline.result import Reply
from hookline.sessions import InMemorySessionStore, SessionStore, SQLiteSessionStore
from support.run_paths import PATHS, run_by

from .scripted import Script, answer, call, calls

pytestmark = pytest.mark.anyio

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
REPLIES: list[Reply | None] = []


@tool
async def greet(ctx: RunContext) -> str:
    """Greet the user by name, once they said it."""
    REPLIES.append(ctx.reply)
    if ctx.reply is None:
        ctx.ask("What is your name?", NAME_SCHEMA)
        return "ignored: the call waits for the answer"
    if ctx.reply.action != "accept":
        return f"no greeting ({ctx.reply.action})"
    return f"hello {ctx.reply.content['name']}"


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SessionStore:
    return InMemorySessionStore() if request.param == "memory" else SQLiteSessionStore(tmp_path / "s.db")


@pytest.fixture(autouse=True)
def _clear() -> None:
    REPLIES.clear()


def agent_on(store: SessionStore) -> Agent:
    script = Script(calls(call("c1", "greet")), answer("greeted"))
    return Agent(model=script.model, tools=[greet], session_store=store)


async def test_a_question_pauses_the_run_with_its_schema(store: SessionStore) -> None:
    result = await agent_on(store).prompt("greet me").session("s")

    assert result.stop_reason == "interrupted"
    (paused,) = result.interruptions
    assert (paused.call_id, paused.reason, paused.response_schema) == ("c1", "What is your name?", NAME_SCHEMA)
    assert not [r for m in result.messages for r in m.tool_results], "the call waits: no result yet"
    (stored,) = paused_calls(await store.events("s"))
    assert stored == paused, "the log keeps the question for whoever resumes"


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("given", "said"), [
    ({"response": {"name": "Ada"}}, "hello Ada"),
    (False, "no greeting (decline)"),
    ("not telling", "no greeting (decline)"),
    ({"cancel": True}, "no greeting (cancel)"),
])
async def test_the_answer_reaches_the_tool_on_resume(store: SessionStore, path: str, given: Any, said: str) -> None:
    agent = agent_on(store)
    await agent.prompt("greet me").session("s")
    result, _ = await run_by(path, agent.resume("s", approvals={"c1": given}))

    assert (result.stop_reason, result.output) == ("completed", "greeted")
    (reply,) = [r for m in result.messages for r in m.tool_results]
    assert (reply.call_id, reply.content) == ("c1", said)
    assert REPLIES[0] is None
    assert REPLIES[1] is not None


async def test_a_resume_without_the_answer_leaves_the_question_open(store: SessionStore) -> None:
    agent = agent_on(store)
    await agent.prompt("greet me").session("s")
    result = await agent.resume("s", approvals={})

    assert result.stop_reason == "interrupted"
    assert result.interruptions[0].response_schema == NAME_SCHEMA
    assert REPLIES == [None], "not run again"


async def test_a_malformed_answer_is_refused_before_anything_runs(store: SessionStore) -> None:
    agent = agent_on(store)
    await agent.prompt("greet me").session("s")
    with pytest.raises(ConfigError, match="alone"):
        await agent.resume("s", approvals={"c1": {"response": {"name": "Ada"}, "approve": True}})
    with pytest.raises(ConfigError, match='"cancel" must be true'):
        await agent.resume("s", approvals={"c1": {"cancel": False}})


def test_asking_outside_a_run_says_so() -> None:
    with pytest.raises(RuntimeError, match="cannot ask the user"):
        RunContext(None).ask("anyone?")


async def test_a_new_prompt_closes_an_unanswered_question_as_such_not_as_a_crash(store: SessionStore) -> None:
    script = Script(calls(call("c1", "greet")), answer("greeted"), answer("something else"))
    agent = Agent(model=script.model, tools=[greet], session_store=store)
    await agent.prompt("greet me").session("s")
    await agent.prompt("never mind").session("s")
    (closed,) = [r for e in await store.events("s", view="prompt") for r in e.to_message().tool_results]
    assert closed.is_error
    assert closed.content == "not answered: this call asked a question, and a new prompt came instead"
