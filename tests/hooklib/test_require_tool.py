from __future__ import annotations

import pytest

from hookline import Agent, ConfigError, Message, ToolCallPart, ToolResultPart, tool
from hookline.conversation import conversation_problem
from hookline.hooklib import RequireTool
from hookline.models import FunctionModel, ModelRequest, ModelResponse

pytestmark = pytest.mark.anyio

saved: list[str] = []


@tool
def save(text: str) -> str:
    """Save the report."""
    saved.append(text)
    return "saved"


@pytest.fixture(autouse=True)
def _clear_saved() -> None:
    saved.clear()


class Recorder:
    """A model script that keeps every request; `answer` decides the response."""

    def __init__(self, comply_after_reminders: int | None, hook: RequireTool | None = None) -> None:
        self.requests: list[ModelRequest] = []
        self.comply_after = comply_after_reminders
        self.hook = hook or HOOK

    def reminders(self, request: ModelRequest, hook: RequireTool) -> int:
        return sum(1 for m in request.messages if m.role == "user" and m.text == hook.message)

    def __call__(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        last = request.messages[-1]
        if last.role == "tool":
            return ModelResponse(text="report saved")
        seen = self.reminders(request, self.hook)
        if self.comply_after is not None and seen >= self.comply_after:
            return ModelResponse(
                tool_calls=[ToolCallPart(id=f"s{len(self.requests)}", name="save", arguments={"text": "r"})]
            )
        return ModelResponse(text="here is the report, not saved")


HOOK = RequireTool("save")


async def test_a_reminder_sends_the_model_back_until_it_calls_the_tool() -> None:
    script = Recorder(comply_after_reminders=1)
    agent = Agent(model=FunctionModel(script), tools=[save], hooks={"on_exit": [HOOK]})

    result = await agent.prompt("write the report")

    assert (result.stop_reason, result.output) == ("completed", "report saved")
    assert saved == ["r"]
    assert result.usage.model_calls == 3
    second = script.requests[1].messages
    assert second[-1] == Message.user(HOOK.message)
    assert [m.role for m in result.messages] == ["user", "assistant", "user", "assistant", "tool", "assistant"]
    assert result.messages[2] == Message.user(HOOK.message)
    assert "`save`" in HOOK.message
    assert conversation_problem(script.requests[-1].messages) is None


async def test_after_max_reminders_the_run_finishes_anyway() -> None:
    script = Recorder(comply_after_reminders=None)
    agent = Agent(model=FunctionModel(script), tools=[save], hooks={"on_exit": [RequireTool("save", max_reminders=2)]})

    result = await agent.prompt("write the report")

    assert (result.stop_reason, result.output) == ("completed", "here is the report, not saved")
    assert result.usage.model_calls == 3
    assert [script.reminders(r, HOOK) for r in script.requests] == [0, 1, 2]
    assert saved == []


async def test_no_reminder_when_the_tool_was_called() -> None:
    script = Recorder(comply_after_reminders=0)
    agent = Agent(model=FunctionModel(script), tools=[save], hooks={"on_exit": [HOOK]})

    result = await agent.prompt("write the report")

    assert result.usage.model_calls == 2
    assert all(script.reminders(r, HOOK) == 0 for r in script.requests)


async def test_a_call_in_an_earlier_run_does_not_count() -> None:
    history = [
        Message.user("write yesterday's report"),
        Message("assistant", [ToolCallPart(id="old", name="save", arguments={"text": "y"})]),
        Message("tool", [ToolResultPart(call_id="old", content="saved", name="save")]),
        Message.assistant("saved"),
    ]
    script = Recorder(comply_after_reminders=1)
    agent = Agent(model=FunctionModel(script), tools=[save], hooks={"on_exit": [HOOK]})

    result = await agent.prompt("and today's").with_history(history)

    assert saved == ["r"]
    assert result.usage.model_calls == 3


async def test_reminders_of_an_earlier_run_do_not_count() -> None:
    history = [Message.user("first"), Message.assistant("no"), Message.user(HOOK.message), Message.assistant("no")]
    script = Recorder(comply_after_reminders=None)
    agent = Agent(model=FunctionModel(script), tools=[save], hooks={"on_exit": [RequireTool("save", max_reminders=1)]})

    result = await agent.prompt("second").with_history(history)

    assert result.usage.model_calls == 2  # one reminder in this run, although history holds one


async def test_a_custom_message() -> None:
    hook = RequireTool("save", message="Save it first.", max_reminders=1)
    script = Recorder(comply_after_reminders=1, hook=hook)
    agent = Agent(model=FunctionModel(script), tools=[save], hooks={"on_exit": [hook]})

    await agent.prompt("write")

    assert saved == ["r"]
    assert script.requests[1].messages[-1] == Message.user("Save it first.")


async def test_zero_reminders_never_reminds() -> None:
    script = Recorder(comply_after_reminders=None)
    agent = Agent(model=FunctionModel(script), tools=[save], hooks={"on_exit": [RequireTool("save", max_reminders=0)]})

    result = await agent.prompt("write")

    assert result.usage.model_calls == 1


def test_the_run_span_starts_after_the_last_real_prompt() -> None:
    hook = RequireTool("save")
    messages = [Message.user("a"), Message.assistant("x"), Message.user("b"), Message.user(hook.message)]

    assert hook.this_run(messages) == messages[3:]
    assert hook.reminders(hook.this_run(messages)) == 1


@pytest.mark.parametrize("kwargs", [{"name": ""}, {"name": "save", "max_reminders": -1}])
def test_bad_arguments_are_config_errors(kwargs: dict) -> None:
    with pytest.raises(ConfigError, match="RequireTool"):
        RequireTool(**kwargs)
