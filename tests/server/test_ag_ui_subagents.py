"""A call paused inside a sub-agent, over AG-UI: an interrupt a resume answers, each stream valid alone.

The lead agent's one call (`research`, id p1) runs the researcher as a sub-agent, whose call
`delete` (id p1/r1) needs approval.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from hookline.sessions import SessionStore
from subagents.agents import lead, researcher

from .live import LiveServer
from .test_ag_ui import ag_ui, run_input, user

pytestmark = pytest.mark.anyio

DELETED: list[str] = []
"""What the researcher's `delete` deleted."""


@pytest.fixture
async def http(make_server: Callable[..., LiveServer], store: SessionStore) -> Any:
    DELETED.clear()
    server = make_server(agent=lead(researcher(DELETED), store))
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        yield client


@pytest.mark.parametrize(("payload", "deleted"), [(True, ["/tmp/old"]), (False, [])])
async def test_an_approval_inside_a_sub_agent_is_an_interrupt_a_resume_answers(
    http: httpx.AsyncClient, tmp_path: Path, payload: bool, deleted: list[str]
) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    paused = await ag_ui(http, run_input(thread, user("clean up")), path=tmp_path / "paused.sse")
    (interrupt,) = paused[-1]["outcome"]["interrupts"]
    (started,) = [e for e in paused if e["type"] == "SUBAGENT_STARTED"]
    assert (interrupt["toolCallId"], started["parentToolCallId"]) == ("p1/r1", "p1")
    assert interrupt["subagentRunId"] == started["subagentRunId"], "the interrupt names the sub-agent's run"
    resumed = await ag_ui(http, run_input(thread, resume=[{"interruptId": interrupt["id"], "status": "resolved",
                                                            "payload": payload}]))
    result = next(e for e in resumed if e["type"] == "TOOL_CALL_RESULT")
    assert result["toolCallId"] == "p1"
    assert resumed[-1]["outcome"] == {"type": "success"}
    assert deleted == DELETED
