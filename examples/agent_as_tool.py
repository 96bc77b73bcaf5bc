"""An agent used as a tool of another: `researcher.as_tool(...)` in an orchestrator's tools.

    .venv/bin/python examples/agent_as_tool.py
    HOOKLINE_MODEL=openai:gpt-4o-mini .venv/bin/python examples/agent_as_tool.py

The orchestrator calls the tool `research(input=...)`; that runs the researcher agent (its
own model, instructions and hooks) on the input, and its final answer comes back as the
tool's result.
"""

from __future__ import annotations

import asyncio

from _model import pick_model

from hookline import Agent, State, ToolCallPart, hook
from hookline.models import ModelRequest, ModelResponse


def researcher_script(request: ModelRequest) -> ModelResponse:
    question = request.messages[-1].text
    return ModelResponse(text=f"Finding on {question!r}: SQLite in WAL mode lets readers work while one writer writes.")


def orchestrator_script(request: ModelRequest) -> ModelResponse:
    results = [r for m in request.messages for r in m.tool_results]
    if not results:
        question = "how does SQLite handle concurrent readers?"
        return ModelResponse(tool_calls=[ToolCallPart(id="r1", name="research", arguments={"input": question})])
    return ModelResponse(text=f"Summary for the user: {results[-1].content}")


@hook
def researcher_done(state: State) -> None:
    """The researcher's own hooks fire inside the tool call."""
    print(f"  researcher run finished after {state.usage.model_calls} model call(s)")


@hook
def show_call(state: State) -> None:
    for call in state.tool_calls:
        print(f"orchestrator calls {call.name}({call.arguments})")


researcher = Agent(
    name="researcher",
    model=pick_model(researcher_script, "HOOKLINE_RESEARCH_MODEL", "HOOKLINE_MODEL"),
    instructions="You are a researcher: answer the question in two factual sentences.",
    hooks={"after_run": [researcher_done]},
)

orchestrator = Agent(
    name="orchestrator",
    model=pick_model(orchestrator_script),
    instructions="Use the research tool to find facts, then summarise them for the user in one sentence.",
    tools=[researcher.as_tool("research", "Ask the researcher a question; it answers with facts.")],
    hooks={"before_tool": [show_call]},
)


async def main() -> None:
    result = await orchestrator.prompt("Can SQLite serve many readers at once?")
    for message in result.messages:
        for part in message.tool_results:
            print(f"research returned: {part.content}")
    print(f"final answer: {result.output}")


if __name__ == "__main__":
    asyncio.run(main())
