"""`hookline run`: one prompt, its answer on stdout, its status lines on stderr."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.text import Text

from hookline._cli.exits import ExitCode
from hookline._cli.interrupts import Closer, CommandLoop
from hookline._cli.render import StatusLines, is_shown
from hookline._cli.setup import LOCAL_MODEL_NOTE, build_agent, open_store, store_location, uses_local_default
from hookline._ids import check_session_id
from hookline._run.status import describe_call
from hookline.agent import PromptRequest
from hookline.messages import ToolCallPart
from hookline.result import Interruption, RunResult

__all__ = ["RunOptions", "chat_line", "describe_interruption", "format_output", "note_local_model", "run_command"]


@dataclass(frozen=True)
class RunOptions:
    """The options of `hookline run`."""

    prompt: str
    agent: str | None = None
    model: str | None = None
    session: str | None = None
    db: str | None = None
    json: bool = False
    max_turns: int | None = None
    quiet: bool = False


def run_command(options: RunOptions) -> ExitCode:
    """Run the prompt; return the exit code (errors propagate to `report_errors`).

    Raises:
        KeyboardInterrupt: Ctrl-C cancelled the run (see `hookline._cli.interrupts`).

    """
    if options.session is not None:
        check_session_id(options.session)
    prompt = sys.stdin.read() if options.prompt == "-" else options.prompt
    agent = build_agent(options.agent, options.model)
    stderr = Console(stderr=True, highlight=False)
    if uses_local_default(agent, options.model):
        note_local_model(stderr)
    request = agent.prompt(prompt)
    if options.max_turns is not None:
        request.multi_turn(options.max_turns)
    closers: dict[str, Closer] = {"the agent": agent.close}
    if options.session is not None:
        store = open_store(store_location(options.db))
        closers["the session store"] = store.aclose
        request.session(options.session, store=store)
    with CommandLoop("the run") as loop, loop.closing(closers):
        return _report(loop.run(_consume(request, options, stderr)), options, stderr)


def _report(result: RunResult, options: RunOptions, stderr: Console) -> ExitCode:
    """Print the answer and the paused calls; return the exit code."""
    if result.stop_reason == "cancelled":
        raise KeyboardInterrupt
    if not options.json and result.output not in ("", None):
        print(format_output(result.output), flush=True)
    if result.stop_reason == "interrupted":
        for item in result.interruptions:
            stderr.print(Text(describe_interruption(item), style="yellow"), soft_wrap=True)
        stderr.print(_resume_hint(options), soft_wrap=True)
        return ExitCode.INTERRUPTED
    return ExitCode.OK


def _resume_hint(options: RunOptions) -> str:
    if options.session is None:
        return "without --session the run cannot be resumed: run it again with --session ID"
    return "approve or refuse with: " + chat_line(options.session, options.agent, options.model, options.db)


def chat_line(session: str, agent: str | None, model: str | None, db: str | None) -> str:
    """The `hookline chat` command line that continues `session` with the same agent, model and store."""
    command = ["hookline", "chat", "--session", session]
    for flag, value in (("--agent", agent), ("--model", model), ("--db", db)):
        if value is not None:
            command += [flag, value]
    return shlex.join(command)


def note_local_model(stderr: Console) -> None:
    """Print the one line saying the run uses the tiny offline model, and how to configure a real one."""
    stderr.print(Text(LOCAL_MODEL_NOTE, style="yellow"), soft_wrap=True)


async def _consume(request: PromptRequest, options: RunOptions, stderr: Console) -> RunResult:
    with StatusLines(stderr, quiet=options.quiet or options.json) as status:
        async for event in request.stream():
            if event.kind == "status":
                status.show(event)
            if options.json and is_shown(event) and event.kind != "delta":
                print(event.model_dump_json(), flush=True)
    assert request.result is not None, "stream() sets the result when it ends"
    return request.result


def format_output(output: Any) -> str:
    """Render the final answer as text: a string as it is, anything else as JSON."""
    if isinstance(output, str):
        return output
    if hasattr(output, "model_dump_json"):
        return str(output.model_dump_json())
    return json.dumps(output, default=str)


def describe_interruption(item: Interruption) -> str:
    """Describe a paused call: `paused add(a=1, b=2) [call c1] for approval: reason` (`researcher's add(...)`)."""
    call = ToolCallPart(id=item.call_id, name=item.name, arguments=item.arguments)
    shown = describe_call(call, inputs=True).removeprefix("running ")
    whose = f"{item.agent}'s " if item.agent else ""
    return f"paused {whose}{shown} [call {item.call_id}] for approval" + (f": {item.reason}" if item.reason else "")
