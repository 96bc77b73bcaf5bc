"""Run by test_crash.py in a subprocess: an agent whose tool blocks until the process is killed."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from hookline import Agent, ToolCallPart, tool
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SQLiteSessionStore


def script(request: ModelRequest) -> ModelResponse:
    if not any(m.tool_results for m in request.messages):
        return ModelResponse(tool_calls=[ToolCallPart(id="c1", name="slow", arguments={})])
    return ModelResponse(text="finished")


def build(db: str, marker: Path) -> Agent:
    @tool
    def slow() -> str:
        """Take a long time."""
        marker.write_text("started")
        time.sleep(60)
        return "slow result"

    return Agent(model=FunctionModel(script), tools=[slow], session_store=SQLiteSessionStore(db))


if __name__ == "__main__":
    agent = build(sys.argv[1], Path(sys.argv[2]))
    agent.prompt("go").session("crash").run_sync()
