"""Two models in one run: an `after_llm` hook asks a researcher before the writer answers.

    .venv/bin/python examples/research_flow.py
    HOOKLINE_MODEL=openai:gpt-4o HOOKLINE_RESEARCH_MODEL=openai:gpt-4o-mini \
        .venv/bin/python examples/research_flow.py

The writer's first draft is not shown to anyone: the `ResearchFirst` hook catches it at
`after_llm`, asks the researcher agent (another model) about the question, injects its
notes with `state.inject(...)` and calls `state.control.rerun_llm()`, which discards the
draft and calls the writer again, now with the notes in front of it.
"""

from __future__ import annotations

import asyncio

from _model import pick_model

from hookline import Agent, Message, State
from hookline.models import ModelRequest, ModelResponse

NOTES = "Research notes: "


def researcher_script(request: ModelRequest) -> ModelResponse:
    question = request.messages[-1].text
    return ModelResponse(
        text=f"About {question!r}: hooks run at seven points; state.control.rerun_llm() discards a "
        "response and calls the model again; state.inject() never splits a tool call from its result."
    )


def writer_script(request: ModelRequest) -> ModelResponse:
    notes = [m.text for m in request.messages if m.role == "user" and m.text.startswith(NOTES)]
    if not notes:
        return ModelResponse(text="Draft: hooks are probably callbacks of some kind.")
    facts = notes[-1].split(": ", 2)[-1]
    return ModelResponse(text=f"Hooks are your code, called by the loop at named points. In detail: {facts}")


researcher = Agent(
    name="researcher",
    model=pick_model(researcher_script, "HOOKLINE_RESEARCH_MODEL", "HOOKLINE_MODEL"),
    instructions="You are a researcher. Answer with three short, factual notes.",
)


class ResearchFirst:
    """An `after_llm` hook: before the first answer of a run is kept, fetch research notes.

    Args:
        researcher: The agent to ask.
    """

    def __init__(self, researcher: Agent) -> None:
        self.researcher = researcher

    def run(self, state: State) -> None:
        raise RuntimeError("ResearchFirst awaits another agent: the loop calls run_async")

    async def run_async(self, state: State) -> None:
        if any(m.role == "user" and m.text.startswith(NOTES) for m in state.messages):
            return  # this run already has its notes: keep the answer
        assert state.response is not None
        print(f"writer draft (discarded): {state.response.text!r}")
        question = next(m.text for m in reversed(state.messages) if m.role == "user")
        research = await self.researcher.prompt(question)
        print(f"researcher ({self.researcher.model.name}) says: {research.output}")
        state.inject(Message.user(NOTES + research.output))
        state.control.rerun_llm()


writer = Agent(
    name="writer",
    model=pick_model(writer_script),
    instructions="You are a writer. Answer in two sentences, using the research notes you are given.",
    hooks={"after_llm": [ResearchFirst(researcher)]},
)


async def main() -> None:
    result = await writer.prompt("What are hookline's hooks?")
    print(f"final answer: {result.output}")
    print(f"writer model calls: {result.usage.model_calls}")


if __name__ == "__main__":
    asyncio.run(main())
