"""The HTTP API as a client uses it: create a session, read a stream of server-sent events."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from support.waiting import await_until

from .agent import DANGER_LOG

SSE = {"Accept": "text/event-stream"}
"""The headers asking for server-sent events."""


async def new_session(http: httpx.AsyncClient, **body: Any) -> str:
    """Create a session (with `body`); return its id."""
    response = await http.post("/v1/sessions", json=body)
    assert response.status_code == 201, response.text
    session_id: str = response.json()["id"]
    return session_id


async def log_texts(http: httpx.AsyncClient, session_id: str) -> list[str]:
    """The text of each event in the session's log (`ui` view): messages and status lines."""
    response = await http.get(f"/v1/sessions/{session_id}/events", params={"view": "ui"})
    assert response.status_code == 200, response.text
    return ["".join(p.get("text", "") for p in e["parts"]) for e in response.json()]


async def paused_on_danger(http: httpx.AsyncClient) -> tuple[str, str]:
    """A new session whose run paused for approval of its `danger` call: (session id, call id)."""
    session_id = await new_session(http)
    result = (await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "danger"})).json()
    assert result["stop_reason"] == "interrupted", result
    DANGER_LOG.clear()
    return session_id, result["interruptions"][0]["call_id"]


async def full_log(http: httpx.AsyncClient, session_id: str) -> list[dict[str, Any]]:
    """Every event of the session's log (`all` view), as JSON."""
    response = await http.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})
    assert response.status_code == 200, response.text
    events: list[dict[str, Any]] = response.json()
    return events


async def model_called(http: httpx.AsyncClient, session_id: str) -> None:
    """Wait until the session's run has called its model (its log says so)."""

    async def called() -> bool:
        return "turn 1: calling model" in await log_texts(http, session_id)

    await await_until(called, f"the run of session {session_id} called its model")


class Frame:
    """One server-sent event as a client sees it."""

    def __init__(self, id: str | None, event: str | None, data: str) -> None:
        self.id, self.event, self.data = id, event, data

    @property
    def json(self) -> Any:
        return json.loads(self.data)

    def __repr__(self) -> str:
        return f"Frame(id={self.id!r}, event={self.event!r}, data={self.data[:60]!r})"


async def sse_frames(response: httpx.Response) -> AsyncIterator[Frame]:
    """Parse a `text/event-stream` body into frames (comments skipped), as a browser would."""
    fields: dict[str, str] = {}
    data: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield Frame(fields.get("id"), fields.get("event"), "\n".join(data))
            fields, data = {}, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        else:
            fields[name] = value
