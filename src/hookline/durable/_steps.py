"""Model calls and tool calls as DBOS steps, and what a recovered workflow replays from them.

Inside a DBOS workflow, `DurableModel.request()` and `DurableTool.answer()` run as steps:
DBOS checkpoints each one's output in its system database. Outside a workflow they are
plain calls, so a `DurableAgent` also runs as an ordinary agent.

The session log, not DBOS's replay, decides what a recovered run does (see
`hookline.durable.dbos`). The checkpoints fill one gap: a step that finished after the
log's last write. `Replay` holds such outputs for the recovered run: the results of tool
calls that finished but whose results the log lacks, and the model's answer to the
question the run is about to ask again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from dbos import DBOS, StepInfo

from hookline.messages import ToolCallPart, ToolResultPart
from hookline.models import Model, ModelRequest, ModelResponse, ModelStreamEvent
from hookline.tools import Tool

__all__ = ["MODEL_STEP", "TOOL_STEP", "DurableModel", "DurableTool", "Replay", "replaying"]

MODEL_STEP = "hookline.model"
"""The prefix of a model call's step name (`hookline.model:<model name>`)."""
TOOL_STEP = "hookline.tool"
"""The prefix of a tool call's step name (`hookline.tool:<tool name>`)."""

_T = TypeVar("_T")


@dataclass
class Replay:
    """Checkpointed outputs the session log lacks, handed to the recovered run once each."""

    results: dict[str, ToolResultPart] = field(default_factory=dict)
    """Results of tool calls that finished after the log's last write, by call id."""
    answer: tuple[str, ModelResponse] | None = None
    """The last model step's (request fingerprint, answer), when it was the workflow's last step."""

    @classmethod
    def from_steps(cls, steps: Sequence[StepInfo]) -> Replay:
        """What `steps` (a workflow's checkpoints) hold that a recovered run may need.

        Tool results count only after the last model step: calls answered before it are in
        the log (the model was asked with their results), and a later turn may reuse a call id.
        """
        ordered = sorted(steps, key=lambda s: s["function_id"])
        models = [i for i, s in enumerate(ordered) if s["function_name"].startswith(MODEL_STEP)]
        replay = cls()
        for step in ordered[models[-1] + 1 if models else 0 :]:
            output = step["output"]
            if step["function_name"].startswith(TOOL_STEP) and isinstance(output, ToolResultPart):
                replay.results.setdefault(output.call_id, output)
        if models and models[-1] == len(ordered) - 1 and _is_answer(ordered[-1]["output"]):
            replay.answer = ordered[-1]["output"]
        return replay

    def take_result(self, call: ToolCallPart) -> ToolResultPart | None:
        """The checkpointed result of `call`, once; None when there is none."""
        result = self.results.get(call.id)
        if result is None or result.name not in ("", call.name):
            return None
        del self.results[call.id]
        return result

    def take_answer(self, fingerprint: str) -> ModelResponse | None:
        """The checkpointed answer to the request with `fingerprint`, once; None when there is none.

        Only the first model call of the recovered run may take it: any later one asks another question.
        """
        answer, self.answer = self.answer, None
        return answer[1] if answer is not None and answer[0] == fingerprint else None


def _is_answer(output: Any) -> bool:
    return isinstance(output, tuple) and len(output) == 2 and isinstance(output[1], ModelResponse)


replaying: ContextVar[Replay | None] = ContextVar("hookline_durable_replay", default=None)
"""The `Replay` of the recovered run in progress (None outside a durable workflow)."""


def in_workflow() -> bool:
    """Whether this code runs in a DBOS workflow's body (not outside one, nor inside a step).

    Inside a step (an agent used as a tool, say) DBOS runs steps as plain calls, and the
    checkpoints of the workflow's own calls are not this code's to take.
    """
    return DBOS.workflow_id is not None and DBOS.step_id is None


def fingerprint(request: ModelRequest) -> str:
    """A digest of what a model call asks: equal requests, equal digests, in any process."""
    asked = {
        "messages": [m.model_dump(mode="json") for m in request.messages],
        "tools": [t.model_dump(mode="json") for t in request.tools],
        "output_schema": request.output_schema,
        "settings": request.settings,
        "model_settings": request.model_settings.given(),
    }
    return hashlib.sha256(json.dumps(asked, sort_keys=True, default=str).encode()).hexdigest()


async def checkpointed(name: str, function: Callable[[], Awaitable[_T]]) -> _T:
    """Run `function` as a DBOS step named `name` (a plain call outside a workflow).

    When the call ran but DBOS could not checkpoint it, its output is still returned: the
    effect happened, and the session log must record it.
    """
    outputs: list[_T] = []

    async def once() -> _T:
        outputs.append(await function())
        return outputs[-1]

    try:
        return await DBOS.run_step_async({"name": name}, once)
    except Exception:
        if outputs:
            return outputs[-1]
        raise


class DurableModel(Model):
    """A model whose every call is a DBOS step.

    Args:
        inner: The model that answers.
    """

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name
        self.provider = inner.provider

    def __repr__(self) -> str:
        return f"DurableModel({self.inner!r})"

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Ask the inner model, as a step; a recovered run first takes the checkpointed answer."""
        if not in_workflow():
            return await self.inner.request(request)
        digest = fingerprint(request)
        replay = replaying.get()
        if replay is not None and (answer := replay.take_answer(digest)) is not None:
            return answer

        async def ask() -> tuple[str, ModelResponse]:
            return digest, await self.inner.request(request)

        return (await checkpointed(f"{MODEL_STEP}:{self.name}", ask))[1]

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Stream from the inner model outside a workflow; inside one, a step answers whole."""
        if not in_workflow():
            async for item in self.inner.stream(request):
                yield item
            return
        async for item in super().stream(request):
            yield item

    async def aclose(self) -> None:
        """Close the inner model."""
        await self.inner.aclose()


class DurableTool(Tool):
    """A tool whose every call is a DBOS step: the inner tool's name, schema and validation.

    Args:
        inner: The tool that runs.
    """

    __slots__ = ("inner",)

    def __init__(self, inner: Tool) -> None:
        # Not Tool.__init__: the schema is the inner tool's, which may not come from a signature (MCP).
        self.inner = inner
        self.name = inner.name
        self.description = inner.description
        self.parameters = inner.parameters
        self.function = inner.function
        self._spec = inner.spec
        self.inline = False  # every call is a step: `answer` takes it

    def __repr__(self) -> str:
        return f"DurableTool({self.inner!r})"

    @property
    def concurrent(self) -> bool:
        """Whether calls to the inner tool can overlap."""
        return self.inner.concurrent

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments as the inner tool validates them."""
        return self.inner.validate(arguments)

    async def call(self, arguments: dict[str, Any]) -> Any:
        """Call the inner tool (not a step: `answer` is)."""
        return await self.inner.call(arguments)

    async def answer(self, call: ToolCallPart, values: dict[str, Any] | None = None) -> ToolResultPart:
        """Answer `call` as a step; a recovered run first takes the checkpointed result."""
        if not in_workflow():
            return await self.inner.answer(call, values)
        replay = replaying.get()
        if replay is not None and (result := replay.take_result(call)) is not None:
            return result
        return await checkpointed(f"{TOOL_STEP}:{self.name}", lambda: self.inner.answer(call, values))
