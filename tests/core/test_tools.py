"""Tools (DESIGN §1, §2): schemas from hints and docstrings, how calls fail (every failure
an error result the model sees, the run going on), and agents used as tools."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from hookline import Agent, ConfigError, State, Tool, ToolError, hook, tool
from hookline.models import FunctionModel, ModelResponse, ToolSpec

from .scripted import Script, add, answer, call, calls
from .tracer import Tracer, at_every_point

pytestmark = pytest.mark.anyio


def _counting_add() -> tuple[Tool, list[dict[str, Any]]]:
    received: list[dict[str, Any]] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        received.append({"a": a, "b": b})
        return a + b

    return add, received


# -- schemas ---------------------------------------------------------------------------------


def test_schema_comes_from_type_hints_and_docstring() -> None:
    @tool
    def search(query: str, limit: int = 5, exact: bool | None = None) -> list[str]:
        """Search the notes.

        Args:
            query: What to look for.
            limit: How many hits to return,
                at most.
            exact: Match whole words only.

        Returns:
            The matching notes.
        """
        return []

    assert search.name == "search"
    assert search.description == "Search the notes."
    params = search.parameters
    assert params["type"] == "object"
    assert params["required"] == ["query"]
    props = params["properties"]
    assert props["query"] == {"type": "string", "description": "What to look for."}
    assert props["limit"]["type"] == "integer"
    assert props["limit"]["default"] == 5
    assert props["limit"]["description"] == "How many hits to return, at most."
    assert props["exact"]["description"] == "Match whole words only."
    assert {"type": "boolean"} in props["exact"]["anyOf"]
    assert "Returns" not in str(params)


def test_spec_is_what_the_model_is_offered() -> None:
    assert add.spec == ToolSpec(name="add", description="Add two integers.", parameters=add.parameters)
    assert add.parameters["properties"]["a"] == {"type": "integer", "description": "The first addend."}
    assert add.parameters["required"] == ["a", "b"]


def test_description_is_the_first_paragraph_of_the_docstring() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Uses Python's arbitrary-precision ints.

        Args:
            a: The first addend.
            b: The second addend.
        """
        return a + b

    assert add.description == "Add two integers."


def test_tool_name_and_description_can_be_given() -> None:
    @tool(name="sum_two", description="Sum a and b.")
    def add(a: int, b: int) -> int:
        """Ignored docstring."""
        return a + b

    assert (add.name, add.description) == ("sum_two", "Sum a and b.")
    assert add.spec.name == "sum_two"


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, "dots.not.ok"])
def test_invalid_tool_names_are_config_errors(name: str) -> None:
    with pytest.raises(ConfigError, match="invalid tool name"):
        tool(name=name)(lambda: None)


def test_tools_cannot_take_var_args() -> None:
    def anything(*args: int) -> int:
        return 0

    with pytest.raises(ConfigError, match=r"\*args"):
        tool(anything)


async def test_named_tool_is_offered_and_called_by_its_name() -> None:
    @tool(name="sum_two", description="Sum a and b.")
    def add(a: int, b: int) -> int:
        return a + b

    script = Script(calls(call("c1", "sum_two", a=4, b=5)), answer("9"))
    await Agent(model=script.model, tools=[add]).prompt("go")

    assert script.requests[0].tools == [ToolSpec(name="sum_two", description="Sum a and b.", parameters=add.parameters)]
    assert script.results(2)[0].content == "9"


async def test_plain_functions_are_tools_too() -> None:
    def greet(name: str) -> str:
        """Greet someone by name.

        Args:
            name: Who to greet.
        """
        return f"hello {name}"

    async def farewell(name: str) -> str:
        """Say goodbye."""
        await asyncio.sleep(0)  # a real suspension point, as async tools have
        return f"bye {name}"

    script = Script(calls(call("c1", "greet", name="Ada"), call("c2", "farewell", name="Bo")), answer("done"))
    await Agent(model=script.model, tools=[greet, farewell]).prompt("go")

    offered = {spec.name: spec for spec in script.requests[0].tools}
    assert sorted(offered) == ["farewell", "greet"]
    assert offered["greet"].description == "Greet someone by name."
    assert offered["greet"].parameters["properties"]["name"]["description"] == "Who to greet."
    assert [r.content for r in script.results(2)] == ["hello Ada", "bye Bo"]


# -- failures become error results ---------------------------------------------------------


async def test_tool_exception_becomes_an_error_result_and_the_run_goes_on() -> None:
    @tool
    def explode(level: int) -> str:
        """Fail."""
        raise RuntimeError(f"disk on fire at level {level}")

    script = Script(calls(call("c1", "explode", level=3)), answer("sorry"))
    result = await Agent(model=script.model, tools=[explode]).prompt("go")

    (sent,) = script.results(2)
    assert sent.call_id == "c1"
    assert sent.is_error
    assert "RuntimeError" in sent.content
    assert "disk on fire at level 3" in sent.content
    assert result.stop_reason == "completed"
    assert result.output == "sorry"
    assert result.messages[2].tool_results == [sent]


async def test_tool_error_content_is_exactly_the_message() -> None:
    @tool
    async def weather(city: str) -> str:
        """The weather in a city."""
        raise ToolError(f"no such city: {city}")

    script = Script(calls(call("c1", "weather", city="Atlantis")), answer("ok"))
    await Agent(model=script.model, tools=[weather]).prompt("go")

    (sent,) = script.results(2)
    assert sent.content == "no such city: Atlantis"
    assert sent.is_error
    assert "ToolError" not in sent.content
    assert "Traceback" not in sent.content


async def test_unknown_tool_names_the_available_tools() -> None:
    @tool
    def mul(a: int, b: int) -> int:
        """Multiply."""
        return a * b

    script = Script(calls(call("c1", "divide", a=1, b=2)), answer("ok"))
    result = await Agent(model=script.model, tools=[add, mul]).prompt("go")

    (sent,) = script.results(2)
    assert sent.is_error
    assert sent.call_id == "c1"
    assert "divide" in sent.content
    assert "add" in sent.content
    assert "mul" in sent.content
    assert result.stop_reason == "completed"


async def test_unknown_tool_without_any_tools_is_an_error_result() -> None:
    script = Script(calls(call("c1", "divide")), answer("ok"))
    await Agent(model=script.model).prompt("go")
    (sent,) = script.results(2)
    assert sent.is_error
    assert "divide" in sent.content


@pytest.mark.parametrize("raw", ['{"a": 1, "b": ', "not json", "[1, 2]"])
async def test_malformed_json_arguments_become_an_error_result(raw: str) -> None:
    counting, received = _counting_add()
    script = Script(calls(call("c1", "add").model_copy(update={"arguments": raw})), answer("ok"))
    result = await Agent(model=script.model, tools=[counting]).prompt("go")

    (sent,) = script.results(2)
    assert sent.is_error
    assert "JSON" in sent.content
    assert "add" in sent.content
    assert received == []
    assert result.stop_reason == "completed"


async def test_json_string_arguments_are_decoded() -> None:
    counting, received = _counting_add()
    script = Script(calls(call("c1", "add").model_copy(update={"arguments": '{"a": 2, "b": 40}'})), answer("ok"))
    await Agent(model=script.model, tools=[counting]).prompt("go")

    assert received == [{"a": 2, "b": 40}]
    assert (script.results(2)[0].content, script.results(2)[0].is_error) == ("42", False)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        pytest.param({"a": "three", "b": 2}, "a", id="wrong-type"),
        pytest.param({"a": 1}, "b", id="missing"),
        pytest.param({"a": 1, "b": 2, "c": 3}, "c", id="extra"),
        pytest.param({"a": [1], "b": 2}, "a", id="list-for-int"),
    ],
)
async def test_invalid_arguments_become_an_error_result_naming_the_argument(
    arguments: dict[str, Any], named: str
) -> None:
    counting, received = _counting_add()
    script = Script(calls(call("c1", "add", **arguments)), answer("ok"))
    result = await Agent(model=script.model, tools=[counting]).prompt("go")

    (sent,) = script.results(2)
    assert sent.is_error
    assert sent.call_id == "c1"
    assert "invalid arguments" in sent.content
    assert named in sent.content
    assert received == []
    assert result.stop_reason == "completed"


async def test_failures_and_successes_in_one_turn_are_each_answered() -> None:
    counting, received = _counting_add()
    script = Script(
        calls(
            call("c1", "add", a=1, b=2), call("c2", "nope"), call("c3", "add", a="x", b=1), call("c4", "add", a=3, b=4)
        ),
        answer("ok"),
    )
    await Agent(model=script.model, tools=[counting]).prompt("go")

    sent = script.results(2)
    assert [(r.call_id, r.is_error) for r in sent] == [("c1", False), ("c2", True), ("c3", True), ("c4", False)]
    assert [r.content for r in sent if not r.is_error] == ["3", "7"]
    assert received == [{"a": 1, "b": 2}, {"a": 3, "b": 4}]


class Point(BaseModel):
    x: int
    y: int


async def test_tool_returning_none_and_models_are_encoded() -> None:
    @tool
    def nothing() -> None:
        """Do nothing."""

    @tool
    def point() -> Point:
        """A point."""
        return Point(x=1, y=2)

    script = Script(calls(call("c1", "nothing"), call("c2", "point")), answer("ok"))
    await Agent(model=script.model, tools=[nothing, point]).prompt("go")
    assert [r.content for r in script.results(2)] == ["null", '{"x":1,"y":2}']


# -- agents as tools -------------------------------------------------------------------------


async def test_agent_as_tool_answers_with_the_inner_agents_output() -> None:
    inner_script = Script(calls(call("i1", "add", a=20, b=22)), answer("the answer is 42"))
    inner_trace = Tracer()
    inner = Agent("researcher", model=inner_script.model, tools=[add], hooks=at_every_point(inner_trace))
    research = inner.as_tool("research", "Ask the researcher")

    outer_script = Script(calls(call("o1", "research", input="what is 20+22?")), answer("it is 42"))
    result = await Agent("boss", model=outer_script.model, tools=[research]).prompt("go")

    spec = outer_script.requests[0].tools[0]
    assert (spec.name, spec.description) == ("research", "Ask the researcher")
    assert spec.parameters["required"] == ["input"]
    assert spec.parameters["properties"]["input"]["type"] == "string"
    assert inner_script.shapes(1) == ["user:what is 20+22?"]
    (sent,) = outer_script.results(2)
    assert (sent.call_id, sent.content, sent.is_error) == ("o1", "the answer is 42", False)
    assert result.output == "it is 42"
    assert inner_trace.trace == [
        ("before_run", 0), ("before_llm", 1), ("after_llm", 1), ("before_tool", 1), ("after_tool", 1),
        ("before_llm", 2), ("after_llm", 2), ("on_exit", 2), ("after_run", 2),
    ]


async def test_agent_as_tool_failure_is_an_error_result_for_the_outer_model() -> None:
    @hook
    def refuse(state: State) -> None:
        raise RuntimeError("inner hook refused")

    inner = Agent("researcher", model=Script().model, hooks={"before_llm": [refuse]})
    outer_script = Script(calls(call("o1", "research", input="q")), answer("ok"))
    result = await Agent(model=outer_script.model, tools=[inner.as_tool("research", "Ask")]).prompt("go")

    (sent,) = outer_script.results(2)
    assert sent.is_error
    assert "inner hook refused" in sent.content
    assert result.stop_reason == "completed"


# -- the agent's public description of its tools (issue 29, house item 4) ----------------------


def test_the_tool_catalog_says_what_can_be_told_outside_a_run() -> None:
    from hookline.agent import ToolCatalog
    from hookline.mcp import MCPToolset

    model = FunctionModel(lambda request: ModelResponse(text="x"))
    plain = Agent(model=model, tools=[add]).tool_catalog()
    assert plain == ToolCatalog(specs=(add.spec,))
    picked = Agent(model=model, tools=lambda state: [add]).tool_catalog()
    assert picked == ToolCatalog(specs=(), chosen_per_turn=True)
    unconnected = Agent(model=model, tools=[add, MCPToolset.stdio("no-such-mcp-server")]).tool_catalog()
    assert unconnected == ToolCatalog(specs=(add.spec,), toolsets_offline=True)
