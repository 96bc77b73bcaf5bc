"""What the A2A tests share: the SDK's own client, raw JSON-RPC, and a plain SDK server with trivial executors.

The plain server is the SDK's own: `DefaultRequestHandler` over an `InMemoryTaskStore`, its
JSON-RPC and card routes in a Starlette app, served by uvicorn in a thread. Its executors:
- "echo":    a working line "echoing", then the artifact "echo: <input>", completed;
- "approve": a working line "checking", then input required ("may I delete it?"); answered,
             the artifact "deleted" (approved) or "kept: <reason>" (refused), completed;
- "wait":    a working line "waiting", then nothing until cancelled (it notes the cancel);
- "fail":    failed, saying "no luck".
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.helpers import get_data_parts, new_data_part, new_task, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette

from server.live import LiveServer
from support.waiting import DEADLINE

VERSION = {"A2A-Version": "1.0"}


@asynccontextmanager
async def sdk_client(url: str, token: str | None = None, *, streaming: bool = True) -> AsyncIterator[Client]:
    """The SDK's own client of the agent at `url` (its card read from `url`)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(headers=headers, timeout=DEADLINE) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming))
        yield await factory.create_from_url(url)


def ask(text: str, **fields: Any) -> SendMessageRequest:
    """A user's message of `text` (a new task, unless `task_id` is given)."""
    return SendMessageRequest(message=Message(message_id=f"m-{text[:20]}", role=Role.ROLE_USER,
                                              parts=[Part(text=text)], **fields))


def approval(task_id: str, context_id: str, approved: bool = True, **extra: Any) -> SendMessageRequest:
    """The message answering a paused task with the approval data part."""
    data = {"approved": approved, **extra}
    return SendMessageRequest(message=Message(message_id=f"a-{task_id}", task_id=task_id, context_id=context_id,
                                              role=Role.ROLE_USER, parts=[new_data_part(data)]))


async def collect(client: Client, request: SendMessageRequest) -> list[StreamResponse]:
    """Every update of the message's stream, until the stream ends by itself."""
    return [update async for update in client.send_message(request)]


def kinds(updates: list[StreamResponse]) -> list[str]:
    """What each update is: "task", a status update's state name, or "artifact"."""
    named = []
    for update in updates:
        kind = update.WhichOneof("payload")
        if kind == "status_update":
            named.append(TaskState.Name(update.status_update.status.state).removeprefix("TASK_STATE_"))
        else:
            named.append("artifact" if kind == "artifact_update" else str(kind))
    return named


def working_lines(updates: list[StreamResponse]) -> list[str]:
    """The text of each working update."""
    working = TaskState.TASK_STATE_WORKING
    return [_text(u.status_update.status.message) for u in updates
            if u.WhichOneof("payload") == "status_update" and u.status_update.status.state == working]


def _text(message: Message) -> str:
    return "".join(p.text for p in message.parts)


def status_text(task: Task) -> str:
    """The text of a task's status message."""
    return _text(task.status.message)


def artifact_text(task: Task) -> str:
    """The text of a task's artifacts."""
    return "".join(p.text for a in task.artifacts for p in a.parts)


async def rpc(http: httpx.AsyncClient, method: str, params: Any, *, headers: dict[str, str] | None = None) -> Any:
    """One raw JSON-RPC call to `/a2a`: the decoded answer."""
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    answer = await http.post("/a2a", json=body, headers={**VERSION, **(headers or {})})
    assert answer.status_code == 200, answer.text
    return answer.json()


async def sse_data(http: httpx.AsyncClient, method: str, params: Any) -> list[dict[str, Any]]:
    """A raw streaming JSON-RPC call: the JSON of each `data:` frame, until the server ends the stream."""
    body = {"jsonrpc": "2.0", "id": 8, "method": method, "params": params}
    frames = []
    async with http.stream("POST", "/a2a", json=body, headers={**VERSION, "Accept": "text/event-stream"}) as answer:
        assert answer.headers["content-type"].startswith("text/event-stream")
        async for line in answer.aiter_lines():
            if line.startswith("data:"):
                frames.append(json.loads(line.removeprefix("data:")))
    return frames


def as_json(message: Any) -> dict[str, Any]:
    """A proto value as its wire JSON."""
    result: dict[str, Any] = MessageToDict(message)
    return result


# -- a plain SDK server --------------------------------------------------------------------


class Executors(AgentExecutor):
    """The trivial executors, chosen by the first word of the task's first message; what they saw, noted."""

    def __init__(self) -> None:
        self.cancelled: list[str] = []
        self.answers: list[Any] = []
        self.waiting = asyncio.Event()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id
        assert context.context_id
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        task = context.current_task
        if task is None:
            assert context.message is not None
            task = new_task(context.task_id, context.context_id, TaskState.TASK_STATE_SUBMITTED,
                            history=[context.message])
            await event_queue.enqueue_event(task)
        first = "".join(p.text for p in task.history[0].parts).split()[0]
        await getattr(self, f"_{first}")(context, updater)

    def _say(self, updater: TaskUpdater, text: str) -> Message:
        return new_text_message(text, context_id=updater.context_id, task_id=updater.task_id)

    async def _echo(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work(self._say(updater, "echoing"))
        await updater.add_artifact([Part(text=f"echo: {context.get_user_input()}")])
        await updater.complete()

    async def _approve(self, context: RequestContext, updater: TaskUpdater) -> None:
        task = context.current_task
        if task is None or task.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.start_work(self._say(updater, "checking"))
            await updater.requires_input(self._say(updater, "may I delete it?"))
            return
        assert context.message is not None
        answer = get_data_parts(context.message.parts)[0]
        self.answers.append(answer)
        kept = f"kept: {answer.get('reason')}"
        await updater.add_artifact([Part(text="deleted" if answer["approved"] else kept)])
        await updater.complete()

    async def _wait(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work(self._say(updater, "waiting"))
        self.waiting.set()
        await asyncio.sleep(3600)

    async def _fail(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.failed(self._say(updater, "no luck"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id
        assert context.context_id
        self.cancelled.append(context.task_id)
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class PlainServer:
    """The SDK's own A2A server around `Executors`, on 127.0.0.1 (uvicorn in a thread)."""

    def __init__(self) -> None:
        self.executors = Executors()
        self.handler: DefaultRequestHandler | None = None
        self.live = LiveServer(Starlette(lifespan=self._lifespan)).start()
        self.url = self.live.url
        card = AgentCard(
            name="plain", description="A plain a2a-sdk agent", version="1.0.0",
            supported_interfaces=[AgentInterface(url=f"{self.url}/rpc", protocol_binding="JSONRPC",
                                                 protocol_version="1.0")],
            capabilities=AgentCapabilities(streaming=True), default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
            skills=[AgentSkill(id="echo", name="echo", description="echoes", tags=["test"])],
        )
        self.handler = DefaultRequestHandler(self.executors, InMemoryTaskStore(), card)
        routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(self.handler, rpc_url="/rpc")]
        self.live.app.router.routes.extend(routes)

    @asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        yield
        if self.handler is not None:
            await self.handler.aclose()

    def stop(self) -> None:
        self.live.stop()
