"""A hookline server speaking A2A 1.0, driven by the SDK's own client (and by raw JSON-RPC for the wire)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.types import CancelTaskRequest, GetTaskRequest, SubscribeToTaskRequest, TaskState
from a2a.utils.errors import (
    InvalidParamsError,
    InvalidRequestError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a.utils.proto_utils import validate_proto_required_fields

from hookline import Event
from hookline.server import create_app
from hookline.sessions.sqlite import SQLiteSessionStore
from hookline.types import View
from server.live import LiveServer
from support.waiting import DEADLINE, await_until

from .agents import DANGER_LOG, make_agent
from .harness import (
    approval,
    artifact_text,
    as_json,
    ask,
    collect,
    kinds,
    rpc,
    sdk_client,
    sse_data,
    status_text,
    working_lines,
)

pytestmark = pytest.mark.anyio


async def log_of(url: str, session_id: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=url, timeout=DEADLINE) as http:
        answer = await http.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})
        assert answer.status_code == 200, answer.text
        return list(answer.json())


async def test_the_card_is_a_1_0_card_with_a_skill_per_tool_and_the_json_rpc_address(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.url, timeout=DEADLINE) as http:
        card = (await http.get("/.well-known/agent-card.json")).json()

    validate_proto_required_fields(parse_agent_card(dict(card)))  # every field the spec marks required
    assert "url" not in card
    assert "protocolVersion" not in card
    assert card["supportedInterfaces"] == [
        {"protocolBinding": "JSONRPC", "protocolVersion": "1.0", "url": f"{server.url}/a2a"}]
    assert card["capabilities"]["streaming"] is True
    assert [(s["id"], s["tags"]) for s in card["skills"]] == [
        ("add", ["tool"]), ("danger", ["tool"]), ("wait", ["tool"]), ("pick", ["tool"])]
    assert card["skills"][0]["description"] == "Add two integers."
    assert card["name"] == "remote"
    assert card["version"]
    assert card["description"]
    assert card["defaultInputModes"]
    assert card["defaultOutputModes"] == ["text/plain"]
    assert "securitySchemes" not in card  # no tokens: nothing to authenticate with


async def test_a_task_streams_its_status_lines_then_its_answer_and_ends_by_itself(server: LiveServer) -> None:
    async with sdk_client(server.url) as client:
        updates = await collect(client, ask("add two numbers"))

    assert kinds(updates) == ["task", *["WORKING"] * (len(updates) - 3), "artifact", "COMPLETED"]
    task = updates[0].task
    context_id = task.context_id
    assert task.id == f"{context_id}:1"
    assert task.status.state == TaskState.TASK_STATE_WORKING
    assert [p.text for p in task.history[0].parts] == ["add two numbers"]
    log = await log_of(server.url, context_id)
    lines = [e["parts"][0]["text"] for e in log if e["kind"] == "status" and "run_end" not in e["metadata"]]
    assert working_lines(updates) == lines  # one update per status line of the log, in its order
    assert "running add(a=2, b=3)" in lines
    assert updates[-2].artifact_update.artifact.parts[0].text == "The tool said: 5."


async def test_the_context_is_the_session_and_a_message_in_it_is_the_next_task(server: LiveServer) -> None:
    async with sdk_client(server.url) as client:
        first = await collect(client, ask("hello there", context_id="ctx-1"))
        second = await collect(client, ask("hello again", context_id="ctx-1"))
        again = await client.get_task(GetTaskRequest(id=first[0].task.id))

    assert first[0].task.id == "ctx-1:1"
    assert second[0].task.context_id == "ctx-1"
    assert second[0].task.id != first[0].task.id
    assert artifact_text(again) == "You said: hello there"  # the first task is still read from the log
    assert [p.text for p in again.history[0].parts] == ["hello there"]
    prompts = [e for e in await log_of(server.url, "ctx-1") if e["kind"] == "message" and e["role"] == "user"]
    assert [e["id"] for e in prompts] == ["m-hello there", "m-hello again"]  # the client's message ids


async def test_the_wire_is_1_0_send_message_answers_a_task_and_parts_have_no_kind(server: LiveServer) -> None:
    params = {"message": {"messageId": "w1", "role": "ROLE_USER", "parts": [{"text": "hello wire"}]}}
    async with httpx.AsyncClient(base_url=server.url, timeout=DEADLINE) as http:
        answer = await rpc(http, "SendMessage", params)
        frames = await sse_data(http, "SendStreamingMessage", {**params, "message": {**params["message"],
                                                                                      "messageId": "w2"}})

    task = answer["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "You said: hello wire"}]
    assert task["history"][0]["parts"] == [{"text": "hello wire"}]
    assert [next(iter(f["result"])) for f in frames] == ["task", *["statusUpdate"] * (len(frames) - 3),
                                                         "artifactUpdate", "statusUpdate"]
    assert frames[-1]["result"]["statusUpdate"]["status"] == {"state": "TASK_STATE_COMPLETED"}


async def test_an_approval_pause_is_input_required_and_the_data_part_completes_the_same_task(
    server: LiveServer,
) -> None:
    DANGER_LOG.clear()
    async with sdk_client(server.url) as client:
        paused = await collect(client, ask("danger please"))
        task = paused[0].task
        status = paused[-1].status_update.status
        assert kinds(paused)[-1] == "INPUT_REQUIRED"
        assert DANGER_LOG == []
        data = as_json(status.message)["parts"][1]["data"]["pausedCalls"]
        assert [(c["tool"], c["arguments"], c["reason"]) for c in data] == [
            ("danger", {"target": "prod"}, "danger needs a human's approval")]
        assert "danger(target='prod')" in status.message.parts[0].text
        waiting = await client.get_task(GetTaskRequest(id=task.id))
        assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED

        resumed = await collect(client, approval(task.id, task.context_id))

    assert kinds(resumed)[0] == "task"
    assert resumed[0].task.id == task.id
    assert kinds(resumed)[-2:] == ["artifact", "COMPLETED"]
    assert resumed[-2].artifact_update.artifact.parts[0].text == "The tool said: wiped prod."
    assert DANGER_LOG == ["prod"]
    audit = [e for e in await log_of(server.url, task.context_id) if "approval" in e["metadata"]]
    assert [e["metadata"]["approval"]["decision"] for e in audit] == ["approved"]


async def test_a_refusal_carries_its_reason_and_the_task_completes_without_running_the_call(
    server: LiveServer,
) -> None:
    DANGER_LOG.clear()
    async with sdk_client(server.url, streaming=False) as client:
        [paused] = await collect(client, ask("danger please"))
        task = paused.task
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        [done] = await collect(client, approval(task.id, task.context_id, approved=False, reason="not today"))

    assert done.task.id == task.id
    assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert "not today" in artifact_text(done.task)
    assert DANGER_LOG == []


async def test_a_tool_question_takes_the_response_of_the_data_part(server: LiveServer) -> None:
    async with sdk_client(server.url) as client:
        paused = await collect(client, ask("pick one"))
        task = paused[0].task
        data = as_json(paused[-1].status_update.status.message)["parts"][1]["data"]["pausedCalls"]
        assert data[0]["reason"] == "which colour?"
        assert "responseSchema" in data[0]
        resumed = await collect(client, approval(task.id, task.context_id, response="teal"))

    assert resumed[-2].artifact_update.artifact.parts[0].text == "The tool said: picked teal."


async def test_return_immediately_answers_the_working_task_while_its_run_goes_on(server: LiveServer) -> None:
    request = ask("wait and see")
    request.configuration.return_immediately = True
    async with sdk_client(server.url, streaming=False) as client:
        [answer] = await collect(client, request)
        task = answer.task
        still = await client.get_task(GetTaskRequest(id=task.id))
        cancelled = await client.cancel_task(CancelTaskRequest(id=task.id))

    assert task.status.state == TaskState.TASK_STATE_WORKING
    assert still.status.state == TaskState.TASK_STATE_WORKING
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED


async def test_cancel_stops_the_run_and_the_task_and_its_stream_end_cancelled(server: LiveServer) -> None:
    async with sdk_client(server.url) as client:
        stream = client.send_message(ask("wait a while"))
        first = await anext(stream)
        task_id = first.task.id
        waiting = await anext(stream)
        while working_lines([waiting]) != ["waiting"]:
            waiting = await anext(stream)
        cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
        rest = [update async for update in stream]

    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert kinds(rest)[-1] == "CANCELED"
    log = await log_of(server.url, first.task.context_id)
    assert log[-1]["metadata"]["run_end"] == "cancelled"


async def test_subscribe_follows_a_working_task_to_its_end(server: LiveServer) -> None:
    async with sdk_client(server.url) as client, sdk_client(server.url) as other:
        stream = client.send_message(ask("wait for it"))
        task_id = (await anext(stream)).task.id

        async def follow() -> list[Any]:
            return [update async for update in other.subscribe(SubscribeToTaskRequest(id=task_id))]

        following = asyncio.create_task(follow())
        await await_until(lambda: (server.app.state.hookline.runs.known_hub(task_id.split(":")[0]) or
                                   _no_hub()).readers >= 2, "the subscriber reads the task")
        await client.cancel_task(CancelTaskRequest(id=task_id))
        followed = await asyncio.wait_for(following, DEADLINE)
        await stream.aclose()

    assert kinds(followed)[0] == "task"
    assert followed[0].task.status.state == TaskState.TASK_STATE_WORKING
    assert kinds(followed)[-1] == "CANCELED"


def _no_hub() -> Any:
    class Nothing:
        readers = 0
    return Nothing()


async def test_tasks_that_ended_or_wait_are_neither_cancelled_nor_followed(server: LiveServer) -> None:
    async with sdk_client(server.url) as client:
        done = await collect(client, ask("hello"))
        paused = await collect(client, ask("danger"))
        for task_id in (done[0].task.id, paused[0].task.id):
            with pytest.raises(TaskNotCancelableError):
                await client.cancel_task(CancelTaskRequest(id=task_id))
        with pytest.raises(UnsupportedOperationError, match="has ended"):
            await collect_subscription(client, done[0].task.id)
        followed = await collect_subscription(client, paused[0].task.id)
        assert kinds(followed) == ["task"]
        assert followed[0].task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED


async def collect_subscription(client: Any, task_id: str) -> list[Any]:
    return [update async for update in client.subscribe(SubscribeToTaskRequest(id=task_id))]


async def test_a_paused_task_followed_by_a_new_prompt_reads_cancelled(server: LiveServer) -> None:
    async with sdk_client(server.url) as client:
        paused = await collect(client, ask("danger", context_id="ctx-2"))
        await collect(client, ask("hello", context_id="ctx-2"))
        task = await client.get_task(GetTaskRequest(id=paused[0].task.id))
        with pytest.raises(InvalidRequestError, match="TASK_STATE_CANCELED"):
            await collect(client, approval(task.id, task.context_id))

    assert task.status.state == TaskState.TASK_STATE_CANCELED
    assert "newer message" in status_text(task)


async def test_a_failed_run_is_a_failed_task_with_its_reason(server: LiveServer) -> None:
    async with sdk_client(server.url) as client:
        updates = await collect(client, ask("fail now"))
        task = await client.get_task(GetTaskRequest(id=updates[0].task.id))

    assert kinds(updates)[-1] == "FAILED"
    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert "provider is down" in status_text(task)


async def test_bad_input_answers_json_rpc_errors_that_say_what_to_send(server: LiveServer) -> None:
    message = {"messageId": "b1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    async with httpx.AsyncClient(base_url=server.url, timeout=DEADLINE) as http:
        garbled = (await http.post("/a2a", content=b"{nope", headers={"A2A-Version": "1.0"})).json()
        unknown = await rpc(http, "message/send", {"message": message})
        no_message = await rpc(http, "SendMessage", {})
        bad_context = await rpc(http, "SendMessage", {"message": {**message, "contextId": "no spaces allowed"}})
        a_file = await rpc(http, "SendMessage", {"message": {**message, "contextId": "files",
                                                             "parts": [{"url": "http://x/y.png"}]}})
        no_session = await http.get("/v1/sessions/files")
        no_task = await rpc(http, "GetTask", {"id": "ctx-9:4"})
        not_an_id = await rpc(http, "CancelTask", {"id": "nonsense"})
        old_version = await rpc(http, "GetTask", {"id": "x:1"}, headers={"A2A-Version": "0.3"})
        done = (await rpc(http, "SendMessage", {"message": message}))["result"]["task"]
        answer_done = await rpc(http, "SendMessage", {"message": {**message, "messageId": "b2", "taskId": done["id"]}})

    assert garbled["error"]["code"] == -32700
    assert unknown["error"]["code"] == -32601
    assert no_message["error"]["code"] == -32602
    assert bad_context["error"]["code"] == -32602
    assert "invalid session id" in bad_context["error"]["message"]
    assert a_file["error"]["code"] == -32005
    assert "text parts" in a_file["error"]["message"]
    assert no_session.status_code == 404  # a refused message makes no session
    assert no_task["error"]["code"] == -32001
    assert not_an_id["error"]["code"] == -32001
    assert "<context id>:<number>" in not_an_id["error"]["message"]
    assert old_version["error"]["code"] == -32009
    assert answer_done["error"]["code"] == -32600
    assert "TASK_STATE_COMPLETED" in answer_done["error"]["message"]


async def test_an_answer_without_the_approval_data_part_is_refused_and_records_nothing(server: LiveServer) -> None:
    async with sdk_client(server.url) as client:
        task = (await collect(client, ask("danger")))[0].task
        before = await log_of(server.url, task.context_id)
        with pytest.raises(InvalidParamsError, match='"approved": true'):
            await collect(client, ask("yes", task_id=task.id, context_id=task.context_id))
        with pytest.raises(InvalidParamsError, match="context"):
            await collect(client, approval(task.id, "another-context"))
        assert await log_of(server.url, task.context_id) == before
        assert (await client.get_task(GetTaskRequest(id=task.id))).status.state == TaskState.TASK_STATE_INPUT_REQUIRED


async def test_a_token_is_needed_but_not_for_the_card_which_says_so(auth_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=auth_server.url, timeout=DEADLINE) as http:
        card = (await http.get("/.well-known/agent-card.json")).json()
        refused = await http.post("/a2a", json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {}})

    assert refused.status_code == 401
    assert card["securitySchemes"] == {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}
    assert card["securityRequirements"] == [{"schemes": {"bearer": {}}}]


async def test_another_users_context_and_tasks_are_out_of_reach(auth_server: LiveServer) -> None:
    async with sdk_client(auth_server.url, "tok-alice") as alice, sdk_client(auth_server.url, "tok-bob") as bob:
        task = (await collect(alice, ask("danger", context_id="alice-ctx")))[0].task
        with pytest.raises(InvalidParamsError, match="not yours"):
            await collect(bob, ask("hello", context_id="alice-ctx"))
        with pytest.raises(TaskNotFoundError):
            await bob.get_task(GetTaskRequest(id=task.id))
        with pytest.raises(TaskNotFoundError):
            await bob.cancel_task(CancelTaskRequest(id=task.id))
        with pytest.raises(TaskNotFoundError):
            await collect_subscription(bob, task.id)
        with pytest.raises(TaskNotFoundError):
            await collect(bob, approval(task.id, task.context_id))
        still = await alice.get_task(GetTaskRequest(id=task.id))

    assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED


class ReadsBeforeTheLastFlush(SQLiteSessionStore):
    """A store whose next read of a log, once `armed`, is as it stood just before its last write."""

    armed = False

    async def events(self, session_id: str, *, view: View = "all", after_seq: int = 0) -> list[Event]:
        events = await super().events(session_id, view=view, after_seq=after_seq)
        if self.armed:
            self.armed = False
            return events[:-1]
        return events


async def test_a_task_read_as_its_run_ends_reads_that_end_not_a_stopped_process(tmp_path: Path) -> None:
    store = ReadsBeforeTheLastFlush(tmp_path / "s.db")
    server = LiveServer(create_app(make_agent(store), store, tokens={})).start()
    try:
        async with sdk_client(server.url) as client:
            updates = await collect(client, ask("add these"))
            store.armed = True  # the read lands before the end, the check of a running run after it
            task = await client.get_task(GetTaskRequest(id=updates[0].task.id))
    finally:
        server.stop()

    assert task.status.state == TaskState.TASK_STATE_COMPLETED, status_text(task)
