"""langchain: `create_agent` (a langgraph graph) on a chat model that plays the scenario's model."""

from __future__ import annotations

import warnings
from importlib.metadata import version as installed

from harness import Runner, Setup
from langchain.agents import create_agent
from scenario import SYSTEM_PROMPT, USER_PROMPT, check_run

from peers._langchain_model import FakeChatModel, tool_results

NAME = "langchain-create_agent"
PERSISTS = False

warnings.filterwarnings("ignore")


def version() -> str:
    """The installed langchain, and the langgraph under it."""
    return f"langchain {installed('langchain')}/langgraph {installed('langgraph')}"


async def build(setup: Setup) -> Runner:
    """A langchain agent for the scenario."""
    agent = create_agent(FakeChatModel(T=setup.T, sleep_s=setup.model_sleep_s), tools=[setup.tool],
                         system_prompt=SYSTEM_PROMPT)
    config = {"recursion_limit": 4 * setup.T + 20}

    async def run_once() -> None:
        messages = (await agent.ainvoke({"messages": [("user", USER_PROMPT)]}, config=config))["messages"]
        check_run(messages[-1].content, tool_results(messages), setup.T)

    return Runner(run_once)
