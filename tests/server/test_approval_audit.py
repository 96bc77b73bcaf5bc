"""The approval audit under concurrent resumes: only the resume that applies its decisions leaves lines.

Two resumes of the same paused call (one approves, one denies) race. The first is held
right after it lets go of the session's run lock having written its audit line (a store
that waits there until the test lets it on), and the second goes meanwhile, on the same
server or on another one sharing the store. Whoever loses must leave no line in the log:
an audit line for a decision that never took effect would be false.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from hookline.events import Event
from hookline.sessions import SessionStore
from hookline.sessions.base import RunHold
from hookline.sessions.memory import InMemorySessionStore
from hookline.sessions.sqlite import SQLiteSessionStore
from support.waiting import await_until

from .agent import DANGER_LOG
from .api import SSE, full_log, paused_on_danger, sse_frames
from .live import LiveServer

pytestmark = pytest.mark.anyio

APPROVED = "default approved danger(target='prod')"
DENIED = "default denied danger(target='prod'): not today"


class _HoldsAfterAudit:
    """A store mix-in: once armed (`hold_next`), the next task that writes an approval line under a
    session's run lock is held right after it lets that lock go, until `let_go()` (from any thread)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.holding = False
        self._audited: set[asyncio.Task[Any] | None] = set()
        self._armed = False
        self._go: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _note(self, events: Sequence[Event]) -> None:
        if any("approval" in event.metadata for event in events):
            self._audited.add(asyncio.current_task())

    async def append_events(self, session_id: str, events: Sequence[Event]) -> list[Event]:
        self._note(events)
        stored: list[Event] = await super().append_events(session_id, events)  # type: ignore[misc]
        return stored

    async def append_and_save_state(self, session_id: str, events: Sequence[Event], state: dict[str, Any]) -> Any:
        self._note(events)
        return await super().append_and_save_state(session_id, events, state)  # type: ignore[misc]

    @asynccontextmanager
    async def hold_for_run(self, session_id: str, **options: Any) -> AsyncIterator[RunHold]:
        async with super().hold_for_run(session_id, **options) as hold:  # type: ignore[misc]
            yield hold
        if self._armed and asyncio.current_task() in self._audited:
            self._armed, self.holding = False, True
            self._loop, self._go = asyncio.get_running_loop(), asyncio.Event()
            await self._go.wait()
            self.holding = False

    def hold_next(self) -> None:
        """Hold the next task that writes an approval line, once it has let the run lock go."""
        self._armed = True

    def let_go(self) -> None:
        """Let the held task go on (from any thread)."""
        loop, go = self._loop, self._go
        assert loop is not None, "no task is held"
        assert go is not None
        loop.call_soon_threadsafe(go.set)


class _SQLiteHolds(_HoldsAfterAudit, SQLiteSessionStore):
    pass


class _MemoryHolds(_HoldsAfterAudit, InMemorySessionStore):
    pass


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    """The servers' store, which holds the first resume once it has written its audit line."""
    if os.environ.get("HOOKLINE_TEST_SERVER_STORE") == "memory":
        return _MemoryHolds()
    return _SQLiteHolds(tmp_path / "sessions.db")


@pytest.mark.parametrize("where", ["same server", "another server"])
async def test_only_the_resume_that_applies_its_decision_is_audited(
    client: httpx.AsyncClient, store: _HoldsAfterAudit, make_server: Callable[..., LiveServer], where: str
) -> None:
    session_id, call_id = await paused_on_danger(client)
    # Another server on the same store: its own runs, only the store's lock between the two.
    loser_url = make_server().url if where == "another server" else str(client.base_url)
    resume = f"/v1/sessions/{session_id}/resume"

    store.hold_next()
    approving = asyncio.ensure_future(client.post(resume, json={"approvals": {call_id: True}}))
    await await_until(lambda: store.holding or approving.done(), "the approving resume wrote its audit line")
    assert store.holding, approving.result().text
    async with httpx.AsyncClient(base_url=loser_url, timeout=10) as other:
        denying = await other.post(resume, json={"approvals": {call_id: "not today"}})
    store.let_go()
    approved = await approving

    log = await full_log(client, session_id)
    audit = [e["parts"][0]["text"] for e in log if "approval" in e["metadata"]]
    assert audit == [APPROVED], "only the decision that took effect is on record"
    (result,) = [e["parts"][0]["content"] for e in log if e["role"] == "tool"]
    assert result == "wiped prod"
    assert DANGER_LOG == ["prod"]
    assert approved.status_code == 200, approved.text
    assert approved.json()["output"] == "The tool said: wiped prod."
    # There the approving run still holds the session; elsewhere it finds the call answered, nothing to decide.
    assert denying.status_code == 409, denying.text
    assert denying.json()["error"] == ("busy" if where == "same server" else "nothing_paused")
    assert not any("not today" in str(e) for e in log), "the denial left no trace"


async def test_a_resume_streams_its_audit_line_before_the_call_runs(client: httpx.AsyncClient) -> None:
    session_id, call_id = await paused_on_danger(client)
    body = {"approvals": {call_id: "not today"}}
    async with client.stream("POST", f"/v1/sessions/{session_id}/resume", json=body, headers=SSE) as response:
        assert response.status_code == 200
        frames = [frame async for frame in sse_frames(response)]
    events = [frame.json for frame in frames]
    (audit,) = [e for e in events if "approval" in e["metadata"]]
    assert audit["parts"][0]["text"] == DENIED
    assert audit["seq"] == int(frames[events.index(audit)].id or 0), "a stored event, with its seq as the SSE id"
    (result,) = [e for e in events if e["role"] == "tool"]
    assert audit["seq"] < result["seq"]
    assert events[-1]["parts"][0]["text"] == "run completed"


def test_the_audit_of_answers_to_questions_says_answered_or_cancelled() -> None:
    from hookline import ToolCallPart
    from hookline.server.audit import approval_lines

    calls = [ToolCallPart(id=i, name="ask", arguments={}) for i in ("a", "b", "c")]
    lines = approval_lines(calls, {"a": {"response": {"ok": True}}, "b": {"cancel": True}, "c": False}, "alice")
    assert [line.metadata["approval"]["decision"] for line in lines] == ["answered", "cancelled", "denied"]
    assert [line.text for line in lines] == ["alice answered ask()", "alice cancelled ask()", "alice denied ask()"]
