"""Approvals that edit a paused call over HTTP (issue 13, item 7): `POST .../resume` takes
`{"approvals": {call_id: {"args": {...}}}}` (and `{"approve": false, "reason": ...}`); edited
arguments that do not fit the tool answer 422 and record nothing; the audit line and the user's
edit are in the log."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from .agent import DANGER_LOG
from .api import SSE, full_log, paused_on_danger, sse_frames

pytestmark = pytest.mark.anyio


async def test_an_edit_runs_the_call_with_the_new_arguments_and_is_audited(client: httpx.AsyncClient) -> None:
    session_id, call_id = await paused_on_danger(client)
    body = {"approvals": {call_id: {"args": {"target": "staging"}}}}
    resumed = await client.post(f"/v1/sessions/{session_id}/resume", json=body)

    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["output"] == "The tool said: wiped staging."
    assert DANGER_LOG == ["staging"]
    log = await full_log(client, session_id)
    (audit,) = [e for e in log if "approval" in e["metadata"]]
    assert audit["parts"][0]["text"] == "default approved danger(target='staging') (arguments edited)"
    assert audit["metadata"]["approval"] == {
        "call_id": call_id, "name": "danger", "decision": "approved", "reason": "", "user": "default",
        "arguments": {"target": "staging"},
    }
    (edit,) = [e for e in log if "edited_call" in e["metadata"]]
    assert (edit["author"], edit["kind"], edit["metadata"]["user"]) == ("user", "status", "default")
    edited = {"type": "tool_call", "id": call_id, "name": "danger", "arguments": {"target": "staging"}}
    assert edit["parts"][1] == edited
    assert audit["seq"] < edit["seq"] < next(e["seq"] for e in log if e["role"] == "tool")


async def test_an_edit_over_sse_streams_the_users_edit_before_the_result(client: httpx.AsyncClient) -> None:
    session_id, call_id = await paused_on_danger(client)
    body = {"approvals": {call_id: {"approve": True, "args": {"target": "qa"}}}}
    async with client.stream("POST", f"/v1/sessions/{session_id}/resume", json=body, headers=SSE) as response:
        assert response.status_code == 200
        events = [frame.json async for frame in sse_frames(response)]
    kinds = [("edit" if "edited_call" in e["metadata"] else e["role"] or e["kind"]) for e in events
             if "edited_call" in e["metadata"] or e["role"] == "tool"]
    assert kinds == ["edit", "tool"]
    assert DANGER_LOG == ["qa"]


@pytest.mark.parametrize(
    ("args", "problem"), [({"target": 5}, "target: Input should be a valid string"), ({}, "target: Field required")]
)
async def test_edited_arguments_that_do_not_fit_answer_422_and_record_nothing(
    client: httpx.AsyncClient, args: dict[str, Any], problem: str
) -> None:
    session_id, call_id = await paused_on_danger(client)
    before = await full_log(client, session_id)

    response = await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {call_id: {"args": args}}})

    assert response.status_code == 422, response.text
    assert response.json()["error"] == "invalid_approvals"
    assert call_id in response.json()["message"]
    assert problem in response.json()["message"]
    assert await full_log(client, session_id) == before
    assert DANGER_LOG == []
    approved = await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {call_id: True}})
    assert approved.json()["stop_reason"] == "completed", "the call is still paused"


async def test_an_object_refusal_gives_its_reason(client: httpx.AsyncClient) -> None:
    session_id, call_id = await paused_on_danger(client)
    body = {"approvals": {call_id: {"approve": False, "reason": "freeze week"}}}
    resumed = await client.post(f"/v1/sessions/{session_id}/resume", json=body)
    assert resumed.json()["output"] == "The tool said: the user refused the call to danger: freeze week."
    audit = [e for e in await full_log(client, session_id) if "approval" in e["metadata"]]
    assert [e["parts"][0]["text"] for e in audit] == ["default denied danger(target='prod'): freeze week"]
    assert DANGER_LOG == []


@pytest.mark.parametrize(
    ("answer", "status", "code"),
    [
        ({"args": "target=qa"}, 422, "invalid_request"),
        ({"arguments": {}}, 422, "invalid_request"),
        ({"approve": "yes"}, 422, "invalid_request"),
        ({}, 422, "invalid_approvals"),
        ({"approve": False, "args": {"target": "qa"}}, 422, "invalid_approvals"),
    ],
)
async def test_malformed_object_answers_answer_422(
    client: httpx.AsyncClient, answer: dict[str, Any], status: int, code: str
) -> None:
    session_id, call_id = await paused_on_danger(client)
    before = await full_log(client, session_id)
    response = await client.post(f"/v1/sessions/{session_id}/resume", json={"approvals": {call_id: answer}})
    assert response.status_code == status, response.text
    assert response.json()["error"] == code
    assert await full_log(client, session_id) == before


async def test_the_openapi_schema_describes_the_object_answer(client: httpx.AsyncClient) -> None:
    schemas = (await client.get("/openapi.json")).json()["components"]["schemas"]
    assert set(schemas["ApprovalAnswer"]["properties"]) == {"approve", "args", "reason"}
    options = schemas["ResumeBody"]["properties"]["approvals"]["additionalProperties"]["anyOf"]
    assert {"$ref": "#/components/schemas/ApprovalAnswer"} in options
