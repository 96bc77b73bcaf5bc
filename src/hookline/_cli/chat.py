"""`hookline chat`: a REPL on one session, answers streamed, approvals asked inline.

The REPL reads lines in the main thread (`LineReader`: a Ctrl-C always interrupts it) and
runs each turn on one `CommandLoop`, so the store's connection lives across turns. Ctrl-C
during a turn cancels only that turn (within 2 s; a second Ctrl-C quits at once); at the
prompt it ends the chat (exit code 130).
The prompt (`you> `) and status lines go to stderr, answers to stdout.
"""

from __future__ import annotations

import sys
import uuid
from dataclasses import dataclass, field

from rich.console import Console
from rich.text import Text

from hookline._cli.exits import ExitCode, error
from hookline._cli.interrupts import CommandLoop
from hookline._cli.line_input import LineReader
from hookline._cli.render import status_line
from hookline._cli.run import chat_line, describe_interruption, note_local_model
from hookline._cli.setup import build_agent, open_store, store_location, uses_local_default
from hookline._ids import check_session_id
from hookline._run.paused_turn import log_since_last_answer
from hookline._run.resume import paused_calls
from hookline.agent import Agent, PromptRequest
from hookline.errors import ConfigError, HooklineError, SessionNotFound
from hookline.events import Event
from hookline.result import Interruption, RunResult
from hookline.sessions import SessionStore

__all__ = ["ChatOptions", "chat_command", "parse_approval"]

_QUIT = frozenset({"exit", "quit", "/exit", "/quit", ":q"})


@dataclass(frozen=True)
class ChatOptions:
    """The options of `hookline chat`."""

    agent: str | None = None
    model: str | None = None
    session: str | None = None
    db: str | None = None
    max_turns: int | None = None


@dataclass
class _Chat:
    agent: Agent
    store: SessionStore
    session_id: str
    max_turns: int | None
    stderr: Console = field(default_factory=lambda: Console(stderr=True, highlight=False))
    lines: LineReader = field(default_factory=LineReader)
    line_open: bool = False


def chat_command(options: ChatOptions) -> ExitCode:
    """Run the REPL until end of input or `exit`; return the exit code."""
    session_id = check_session_id(options.session) if options.session is not None else uuid.uuid4().hex
    agent = build_agent(options.agent, options.model)
    chat = _Chat(agent, open_store(store_location(options.db)), session_id, options.max_turns)
    if uses_local_default(agent, options.model):
        note_local_model(chat.stderr)
    again = chat_line(session_id, options.agent, options.model, options.db)
    chat.stderr.print(f"session {session_id} (continue it later with: {again})", style="dim", soft_wrap=True)
    closers = {"the agent": chat.agent.close, "the session store": chat.store.aclose}
    with CommandLoop("the turn") as loop, loop.closing(closers):
        pending = loop.run(_pending_interruptions(chat))
        if pending:
            _approve_and_resume(loop, chat, pending)
        while (line := _read_line(chat)) is not None:
            _turn(loop, chat, line)
    return ExitCode.OK


def _read_line(chat: _Chat) -> str | None:
    """Read the next prompt; None at end of input or on `exit`."""
    while True:
        line = chat.lines.read_line("you> ")
        if line is None:
            print(file=sys.stderr)
            return None
        line = line.strip()
        if line.lower() in _QUIT:
            return None
        if line:
            return line


def _turn(loop: CommandLoop, chat: _Chat, line: str) -> None:
    try:
        result = loop.run(_stream(chat, line))
        if result.stop_reason == "cancelled":
            raise KeyboardInterrupt
        if result.stop_reason == "interrupted":
            _approve_and_resume(loop, chat, result.interruptions)
    except KeyboardInterrupt:
        _end_line(chat)
        chat.stderr.print("(turn cancelled)", style="dim")
    except HooklineError as exc:
        if isinstance(exc, ConfigError):
            raise
        _end_line(chat)
        error(str(exc))


async def _stream(chat: _Chat, line: str) -> RunResult:
    request = chat.agent.prompt(line).session(chat.session_id, store=chat.store)
    if chat.max_turns is not None:
        request.multi_turn(chat.max_turns)
    return await _show_stream(chat, request)


async def _show_stream(chat: _Chat, request: PromptRequest) -> RunResult:
    async for event in request.stream():
        _show(chat, event)
    _end_line(chat)
    assert request.result is not None, "stream() sets the result when it ends"
    return request.result


def _show(chat: _Chat, event: Event) -> None:
    if event.kind == "delta":
        sys.stdout.write(event.text)
        sys.stdout.flush()
        chat.line_open = True
    elif event.kind == "status":
        _end_line(chat)
        chat.stderr.print(status_line(event), soft_wrap=True)


def _end_line(chat: _Chat) -> None:
    if chat.line_open:
        print(flush=True)
        chat.line_open = False


def _approve_and_resume(loop: CommandLoop, chat: _Chat, pending: list[Interruption]) -> None:
    while pending:
        approvals = {item.call_id: _ask(chat, item) for item in pending}
        result = loop.run(_show_stream(chat, chat.agent.resume(chat.session_id, approvals, store=chat.store)))
        pending = result.interruptions if result.stop_reason == "interrupted" else []


def _ask(chat: _Chat, item: Interruption) -> bool | str:
    chat.stderr.print(Text(describe_interruption(item), style="yellow"), soft_wrap=True)
    return parse_approval(chat.lines.read_line("approve? [y/N/reason] ") or "")


def parse_approval(answer: str) -> bool | str:
    """`y`/`yes` approve; empty, `n`/`no` refuse; any other text refuses with that reason."""
    text = answer.strip()
    if text.lower() in ("y", "yes"):
        return True
    if text.lower() in ("", "n", "no"):
        return False
    return text


async def _pending_interruptions(chat: _Chat) -> list[Interruption]:
    """Find the calls of an existing session still paused for approval (none for a new one)."""
    try:
        log = await log_since_last_answer(chat.store, chat.session_id)
    except SessionNotFound:
        return []
    return paused_calls(log)
