"""What a session store does for runs: `run_lock`, `delete` while a run holds a session, the agent on it.

The second half of `SessionStoreContract` (`hookline.testing.store_contract`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import anyio
import pytest

from hookline import (
    Agent,
    Event,
    Message,
    SessionBusy,
    SessionNotFound,
    State,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    hook,
    tool,
)
from hookline.conversation import conversation_problem
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SessionStore
from hookline.testing._store_cases import fresh, status, user_says

__all__ = ["RunCases"]

_HELD = "a run holds it; cancel the run or wait for it to end"


class Adder:
    """A scripted model that calls `add` once per prompt, and keeps every request; `add` counts its runs."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []
        self.effects: list[int] = []

    def __call__(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        last = request.messages[-1]
        if last.role == "user":
            n = len(self.requests)
            return ModelResponse(tool_calls=[ToolCallPart(id=f"c{n}", name="add", arguments={"a": n, "b": 1})])
        return ModelResponse(text=f"sum is {last.tool_results[0].content}")

    def agent(self, store: SessionStore, **options: Any) -> Agent:
        """An agent with this model and its `add` tool, on `store`."""

        @tool
        def add(a: int, b: int) -> int:
            """Add two integers."""
            self.effects.append(a + b)
            return a + b

        return Agent(name="calc", model=FunctionModel(self), tools=[add], session_store=store, **options)


async def _fail_after_finishing(store: SessionStore, session_id: str) -> None:
    async with store.hold_for_run(session_id) as hold:
        await hold.finish([user_says("kept")], {})
        raise RuntimeError("after its last write")


@hook
def _ask_first(state: State) -> None:
    for call in state.tool_calls:
        state.interrupt(call.id, "adding needs approval")


class RunCases:
    """The cases about runs: one run at a time per session, and the agent's use of the store."""

    # --- run_lock --------------------------------------------------------------------------

    async def test_run_lock_gives_one_run_at_a_time(self, store: SessionStore) -> None:
        """A second `run_lock` on a held session raises `SessionBusy` at once, or after `timeout`."""
        session = await store.create()
        async with store.run_lock(session.id):
            with pytest.raises(SessionBusy, match=session.id):
                async with store.run_lock(session.id):
                    pytest.fail("a second run got the lock")
            started = time.monotonic()
            with pytest.raises(SessionBusy, match=r"waited 0\.2 s"):
                async with store.run_lock(session.id, timeout=0.2):
                    pytest.fail("a second run got the lock")
            assert time.monotonic() - started >= 0.19
            async with store.run_lock(session.id + "-other"):
                pass  # other sessions are not held
        async with store.run_lock(session.id):
            pass  # released at exit

    async def test_run_lock_waits_for_the_holder(self, store: SessionStore) -> None:
        """A `run_lock` with a timeout gets the session once its holder lets go."""
        session = await store.create()
        order: list[str] = []
        taken = anyio.Event()

        async def first() -> None:
            async with store.run_lock(session.id):
                order.append("first in")
                taken.set()
                await anyio.sleep(0.2)  # the run's work, while the second waits
                order.append("first out")

        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            await taken.wait()
            async with store.run_lock(session.id, timeout=5):
                order.append("second in")
        assert order == ["first in", "first out", "second in"]

    async def test_run_lock_is_released_when_the_run_fails(self, store: SessionStore) -> None:
        """An exception inside `run_lock` releases the session."""
        session = await store.create()
        with pytest.raises(RuntimeError, match="boom"):
            async with store.run_lock(session.id):
                raise RuntimeError("boom")
        async with store.run_lock(session.id):
            pass

    async def test_a_run_may_lock_its_session_before_creating_it(self, store: SessionStore) -> None:
        """`run_lock` is on the id: a run may take it, then create the session."""
        session_id = fresh("s")
        async with store.run_lock(session_id):
            await store.create(session_id=session_id)
            assert (await store.append_event(session_id, user_says("hi"))).seq == 1

    # --- a run's first read and last write: open_for_run, append_and_save_state ---------------

    async def test_open_for_run_creates_a_missing_session(self, store: SessionStore) -> None:
        """`open_for_run` creates a missing session for its app and user, with an empty log."""
        session_id = fresh("s")
        session, prompt = await store.open_for_run(session_id, user="u1", app=fresh("app"))
        assert (session.id, session.user, session.state, prompt) == (session_id, "u1", {}, [])
        stored = await store.get(session_id, user="u1")
        assert (stored.app, stored.created_at) == (session.app, session.created_at)
        again, _ = await store.open_for_run(session_id, user="u1")
        assert again == session

    async def test_open_for_run_reads_the_state_and_the_prompt_view(self, store: SessionStore) -> None:
        """`open_for_run` of an existing session returns its state and its log in the `prompt` view."""
        session = await store.create(user="u1", state={"k": "v"})
        await store.append_events(session.id, [user_says("hi"), Event.status("calc", "agent", "working")])
        await store.prepare_event(session.id, user_says("later"))
        opened, prompt = await store.open_for_run(session.id, user="u1", create=False)
        assert (opened.id, opened.state) == (session.id, {"k": "v"})
        assert prompt == await store.events(session.id, view="prompt")
        assert [(e.seq, e.text) for e in prompt] == [(1, "hi")]
        anyone, _ = await store.open_for_run(session.id, user=None, create=False)
        assert anyone.user == "u1"

    async def test_open_for_run_never_reaches_a_missing_or_foreign_session(self, store: SessionStore) -> None:
        """Without `create` a missing id is `SessionNotFound`; another user's session is never opened nor taken."""
        with pytest.raises(SessionNotFound):
            await store.open_for_run(fresh("missing"), create=False)
        theirs = await store.create(user="u1")
        for create in (False, True):
            with pytest.raises(SessionNotFound):
                await store.open_for_run(theirs.id, user="u2", create=create)
        assert (await store.get(theirs.id)).user == "u1"

    async def test_append_and_save_state_appends_and_saves(self, store: SessionStore) -> None:
        """`append_and_save_state` appends like `append_events` (prepared parts merged) and replaces the state."""
        session = await store.create(state={"old": 1})
        await store.append_event(session.id, user_says("hi"))
        await store.prepare_event(session.id, user_says("prepared "))
        stored = await store.append_and_save_state(session.id, [user_says("now"), status("done")], {"new": [1, 2]})
        assert [(e.seq, e.text) for e in stored] == [(2, "prepared now"), (3, "done")]
        assert stored == (await store.events(session.id))[1:]
        reread = await store.get(session.id)
        assert reread.state == {"new": [1, 2]}
        assert not any(e.partial for e in reread.events)

    async def test_append_and_save_state_without_events_saves_the_state(self, store: SessionStore) -> None:
        """With no events `append_and_save_state` saves the state alone; a missing session is `SessionNotFound`."""
        session = await store.create()
        await store.append_event(session.id, user_says("hi"))
        assert await store.append_and_save_state(session.id, [], {"k": "v"}) == []
        assert (await store.get(session.id)).state == {"k": "v"}
        assert [e.seq for e in await store.events(session.id)] == [1]
        with pytest.raises(SessionNotFound):
            await store.append_and_save_state(fresh("missing"), [user_says("lost")], {"k": "v"})

    # --- hold_for_run: the loop's hold, first read and last write in one ------------------------

    async def test_hold_for_run_holds_and_reads_until_the_block_ends(self, store: SessionStore) -> None:
        """`hold_for_run` holds the session (a second run is busy) and reads it as `open_for_run` does."""
        session = await store.create(user="u1", state={"k": "v"})
        await store.append_events(session.id, [user_says("hi"), status("working")])
        async with store.hold_for_run(session.id, user="u1", create=False) as hold:
            assert (hold.session.id, hold.session.state) == (session.id, {"k": "v"})
            assert [(e.seq, e.text) for e in hold.prompt] == [(1, "hi")]
            assert await store.run_active(session.id)
            with pytest.raises(SessionBusy):
                async with store.hold_for_run(session.id, user="u1", create=False):
                    pass
        assert not await store.run_active(session.id)
        async with store.hold_for_run(session.id, user="u1", create=False):
            pass

    async def test_hold_for_run_finish_is_the_last_write_and_the_session_is_free_after(
        self, store: SessionStore
    ) -> None:
        """`finish` appends (prepared parts merged) and saves the state; the session is free once the block ends."""
        session_id = fresh("s")
        async with store.hold_for_run(session_id, user="u1") as hold:
            assert (hold.session.user, hold.prompt) == ("u1", [])
            await store.prepare_event(session_id, user_says("prepared "))
            stored = await hold.finish([user_says("now"), status("done")], {"new": 1})
        assert [(e.seq, e.text) for e in stored] == [(1, "prepared now"), (2, "done")]
        assert stored == await store.events(session_id)
        assert (await store.get(session_id)).state == {"new": 1}
        assert not await store.run_active(session_id)

    async def test_hold_for_run_lets_go_when_the_run_fails(self, store: SessionStore) -> None:
        """A block that raises (before or after `finish`) leaves the session free, and what `finish` wrote stays."""
        session = await store.create()
        with pytest.raises(RuntimeError):
            async with store.hold_for_run(session.id):
                raise RuntimeError("the run broke")
        with pytest.raises(RuntimeError):
            await _fail_after_finishing(store, session.id)
        assert not await store.run_active(session.id)
        assert [e.text for e in await store.events(session.id)] == ["kept"]

    async def test_hold_for_run_never_reaches_a_missing_or_foreign_session(self, store: SessionStore) -> None:
        """Without `create` a missing id is `SessionNotFound`; another user's is never held, read nor created."""
        with pytest.raises(SessionNotFound):
            async with store.hold_for_run(fresh("missing"), create=False):
                pass
        theirs = await store.create(user="u1")
        for create in (False, True):
            with pytest.raises(SessionNotFound):
                async with store.hold_for_run(theirs.id, user="u2", create=create):
                    pass
        assert not await store.run_active(theirs.id)
        assert (await store.get(theirs.id)).user == "u1"

    # --- roll_back: a run's events out of the prompt view, kept in the log -----------------

    async def test_roll_back_leaves_a_runs_events_out_of_the_prompt_view_and_marks_them(
        self, store: SessionStore
    ) -> None:
        """`roll_back` hides the events after `after_seq` through `through_seq` from the model; the log keeps them."""
        if type(store).roll_back is SessionStore.roll_back:
            pytest.skip(f"{type(store).__name__} does not roll back (the default of the seam)")
        session = await store.create()
        kept = [user_says("first"), Event.from_message(Message.assistant("one"), "calc")]
        tagged = Event.from_message(Message.assistant("two"), "calc").model_copy(update={"metadata": {"k": 1}})
        await store.append_events(session.id, [*kept, user_says("second"), tagged, status("run cancelled")])
        assert await store.roll_back(session.id, after_seq=2, through_seq=5) == 3
        assert [e.text for e in await store.events(session.id, view="prompt")] == ["first", "one"]
        _, prompt = await store.open_for_run(session.id, create=False)
        assert [e.text for e in prompt] == ["first", "one"]
        log = await store.events(session.id)
        assert [e.seq for e in log] == [1, 2, 3, 4, 5]
        assert [e.metadata for e in log] == [{}, {}, {"rolled_back": True}, {"rolled_back": True, "k": 1},
                                             {"rolled_back": True}]
        assert await store.roll_back(session.id, after_seq=0, through_seq=5) == 2, "marked once"
        later = await store.append_event(session.id, user_says("third"))
        assert [e.seq for e in await store.events(session.id, view="prompt")] == [later.seq]
        with pytest.raises(SessionNotFound):
            await store.roll_back(fresh("missing"), after_seq=0, through_seq=1)

    # --- delete while a run holds the session ----------------------------------------------

    async def test_delete_while_a_run_lock_is_held_is_refused(self, store: SessionStore) -> None:
        """`delete` of a session a run holds raises `SessionBusy` and keeps it whole."""
        session = await store.create(user="u1")
        await store.append_event(session.id, user_says("hi"))
        async with store.run_lock(session.id):
            with pytest.raises(SessionBusy, match=_HELD) as caught:
                await store.delete(session.id)
            assert caught.value.session_id == session.id
            assert session.id in str(caught.value)
            with pytest.raises(SessionBusy):  # the owner's own delete waits for the run too
                await store.delete(session.id, user="u1")
            with pytest.raises(SessionNotFound):  # another user's session is not theirs to know about
                await store.delete(session.id, user="u2")
        assert [e.text for e in await store.events(session.id)] == ["hi"]
        await store.delete(session.id)
        with pytest.raises(SessionNotFound):
            await store.get(session.id)

    async def test_delete_of_a_missing_session_is_not_found_even_while_locked(self, store: SessionStore) -> None:
        """`delete` of a missing session is `SessionNotFound`, even while its id is locked."""
        missing = fresh("missing")
        async with store.run_lock(missing):
            with pytest.raises(SessionNotFound):
                await store.delete(missing)

    # --- the agent on the store ------------------------------------------------------------

    async def test_a_session_keeps_the_conversation_and_state(self, store: SessionStore) -> None:
        """An agent's runs on one session see the earlier turns and keep `State.data`."""
        model, session_id = Adder(), fresh("s")

        @hook
        def count_runs(state: State) -> None:
            state.data["runs"] = state.data.get("runs", 0) + 1

        agent = model.agent(store, hooks={"before_run": [count_runs]})
        await agent.prompt("first").session(session_id, user="u1")
        result = await agent.prompt("second").session(session_id, user="u1")

        assert result.output == "sum is 4"
        assert [m.role for m in model.requests[2].messages] == ["user", "assistant", "tool", "assistant", "user"]
        assert (await store.get(session_id, user="u1")).state == {"runs": 2}
        prompt_view = await store.events(session_id, view="prompt")
        assert all(e.kind == "message" for e in prompt_view)
        assert [e.seq for e in prompt_view] == sorted(e.seq or 0 for e in prompt_view)
        statuses = [e for e in await store.events(session_id, view="all") if e.kind == "status"]
        assert any(e.text == "running add(a=1, b=1)" for e in statuses)
        assert conversation_problem([e.to_message() for e in prompt_view]) is None

    async def test_prepared_parts_join_the_next_prompt_first(self, store: SessionStore) -> None:
        """Parts prepared by the user come first in their next prompt."""
        model, session_id = Adder(), fresh("s")
        await store.create(session_id=session_id)
        edit = ToolCallPart(id="u1", name="write_file", arguments={"path": "a.txt", "text": "hi"})
        written = ToolResultPart(call_id="u1", content="written", name="write_file")
        await store.prepare_event(session_id, Event(author="user", role="user", parts=[edit]))
        await store.prepare_event(session_id, Event(author="user", role="user", parts=[written]))

        await model.agent(store).prompt("what did I change?").session(session_id)

        first = model.requests[0].messages[0]
        assert first.role == "user"
        assert [p.type for p in first.parts] == ["tool_call", "tool_result", "text"]
        assert (await store.get(session_id)).events[-1].partial is False

    async def test_an_interrupted_run_resumes_and_runs_the_call_once(self, store: SessionStore) -> None:
        """An interrupted run resumes, and an approved call runs once however often `resume` is called."""
        model, session_id = Adder(), fresh("s")
        agent = model.agent(store, hooks={"before_tool": [_ask_first]})
        paused = await agent.prompt("add").session(session_id)
        assert paused.stop_reason == "interrupted"
        assert [(i.call_id, i.reason) for i in paused.interruptions] == [("c1", "adding needs approval")]

        done = await agent.resume(session_id, approvals={"c1": True})
        again = await agent.resume(session_id, approvals={"c1": True})
        assert done.output == "sum is 2"
        assert again.stop_reason == "completed"
        assert model.effects == [2], "an approved call runs once, even when resume is called twice"

    async def test_a_refused_call_answers_the_model(self, store: SessionStore) -> None:
        """A refused call is answered to the model as an error result."""
        model, session_id = Adder(), fresh("s")
        agent = model.agent(store, hooks={"before_tool": [_ask_first]})
        await agent.prompt("add").session(session_id)
        result = await agent.resume(session_id, approvals={"c1": "not today"})
        assert model.effects == []
        refusal = result.messages[0].tool_results[0]
        assert refusal.is_error
        assert "not today" in refusal.content
        assert result.output.startswith("sum is")

    async def test_a_second_run_on_a_busy_session_waits_or_fails(self, store: SessionStore) -> None:
        """A second run on a busy session fails at once, or waits; half-turns never interleave."""
        called, release, session_id = asyncio.Event(), asyncio.Event(), fresh("busy")

        async def slow_model(request: ModelRequest) -> ModelResponse:
            called.set()
            await release.wait()
            return ModelResponse(text="ok")

        agent = Agent(model=FunctionModel(slow_model), session_store=store)
        first = asyncio.ensure_future(agent.prompt("one").session(session_id))
        await called.wait()
        with pytest.raises(SessionBusy):
            await agent.prompt("two").session(session_id, wait=0)
        waiting = asyncio.ensure_future(agent.prompt("three").session(session_id, wait=10))
        for _ in range(20):  # let it start waiting; it cannot get the session while the first holds it
            await asyncio.sleep(0)
        assert not waiting.done()
        release.set()
        await first
        await waiting
        texts = [e.text for e in await store.events(session_id, view="prompt")]
        assert texts == ["one", "ok", "three", "ok"], "runs never interleave their half-turns"

    async def test_a_new_prompt_closes_calls_left_open(self, store: SessionStore) -> None:
        """A prompt after a run that left a call unanswered sends a valid conversation."""
        session_id = fresh("open")
        await store.create(session_id=session_id)
        await store.append_event(session_id, Event(author="user", role="user", parts=[TextPart(text="go")]))
        call = ToolCallPart(id="lost", name="add", arguments={"a": 1, "b": 2})
        await store.append_event(session_id, Event.from_message(Message(role="assistant", parts=[call]), "calc"))
        model = Adder()
        await model.agent(store).prompt("hello again").session(session_id)
        seen = model.requests[0].messages
        assert conversation_problem(seen) is None
        assert seen[2].tool_results[0].is_error

    async def test_delete_from_inside_a_run_is_refused(self, store: SessionStore) -> None:
        """A tool that deletes its own run's session is refused with `SessionBusy`."""
        refusals: list[str] = []
        session_id = fresh("s-busy")

        @tool
        async def remove_me() -> str:
            """Try to delete the session this run writes to."""
            try:
                await store.delete(session_id)
            except SessionBusy as exc:
                refusals.append(str(exc))
                return "refused"
            return "deleted"

        def script(request: ModelRequest) -> ModelResponse:
            if request.messages[-1].role == "user":
                return ModelResponse(tool_calls=[ToolCallPart(id="c1", name="remove_me", arguments={})])
            return ModelResponse(text=request.messages[-1].tool_results[0].content)

        agent = Agent(model=FunctionModel(script), tools=[remove_me], session_store=store)
        result = await agent.prompt("go").session(session_id)
        assert result.output == "refused"
        assert len(refusals) == 1
        assert _HELD in refusals[0]
        roles = [e.role for e in await store.events(session_id, view="prompt")]
        assert roles == ["user", "assistant", "tool", "assistant"]
        await store.delete(session_id)
