"""Status lines, and the capture of log records emitted by tool code during a run.

Log records are captured through one handler on the root logger that looks up the
current tool call in a `ContextVar`. asyncio copies the context into every task, so a
record lands in the run (and the call) whose code emitted it, never in a concurrent run.
Records are created only at or above their logger's effective level, as usual in
`logging`: configure the level (e.g. `logging.basicConfig(level=logging.INFO)`) to see
INFO records from tools.

A handler on the root logger would otherwise silence the program's other records: Python
prints a record that finds no handler at all with `logging.lastResort` (warnings and
above, on stderr), and the capture handler counts as one. So a record it does not capture,
and that no other handler on its way up takes, goes to `logging.lastResort`, as it would
have without the capture.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from typing import Any

from hookline.events import Event
from hookline.hook_points import HookPoint
from hookline.messages import ToolCallPart, ToolResultPart
from hookline.models import ModelRequest, ModelResponse
from hookline.usage import Prices

__all__ = [
    "SLOW_HOOK_S", "LogCapture", "describe_call", "describe_reasoning", "describe_result", "install_log_capture",
    "model_line", "request_record", "slow_hook",
]

SLOW_HOOK_S = 0.01
"""A hook call that takes this long or longer leaves its time in a session's log (`slow_hook`)."""

_MAX_SHOWN = 200

LogCapture = Callable[[logging.LogRecord], None]
"""Receives each log record emitted while one tool call runs."""

current_capture: ContextVar[LogCapture | None] = ContextVar("hookline_log_capture", default=None)


class _ToolLogHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        capture = current_capture.get()
        if capture is not None:
            capture(record)
        elif (last := logging.lastResort) is not None and record.levelno >= last.level and _unhandled(record):
            last.handle(record)


def _unhandled(record: logging.LogRecord) -> bool:
    """Whether no handler but the capture's is on the way of `record` up its logger's ancestors."""
    logger: logging.Logger | None = logging.getLogger(record.name)
    while logger is not None:
        if any(not isinstance(h, _ToolLogHandler) for h in logger.handlers):
            return False
        logger = logger.parent if logger.propagate else None
    return True


_handler: _ToolLogHandler | None = None


def install_log_capture() -> None:
    """Add the capturing handler to the root logger (once per process)."""
    global _handler
    if _handler is None:
        _handler = _ToolLogHandler(level=logging.NOTSET)
        logging.getLogger().addHandler(_handler)


def _short(text: str) -> str:
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def describe_call(call: ToolCallPart, *, inputs: bool) -> str:
    """`running add(a=1, b=2)`, or `running add` without inputs."""
    if not inputs:
        return f"running {call.name}"
    arguments = call.arguments
    if isinstance(arguments, str):
        return f"running {call.name}({_short(arguments)})"
    shown, separator = "", ""
    for name, value in arguments.items():  # not ", ".join of a list comprehension: a line per call, at half the cost
        shown += f"{separator}{name}={value!r}"
        separator = ", "
    return f"running {call.name}({_short(shown)})"


def describe_result(result: ToolResultPart, *, outputs: bool) -> str:
    """`add returned 3`, `add failed: ...`, or without outputs `add returned`."""
    name = result.name or "tool"
    if result.is_error:
        failed = f"{name} failed"  # a tool's exception already says so: once is enough
        return f"{failed}: {_short(result.content.removeprefix(failed + ': '))}" if outputs else failed
    return f"{name} returned {_short(result.content)}" if outputs else f"{name} returned"


def model_line(
    model_name: str, response: ModelResponse, seconds: float, first_token: float | None, prices: Prices | None
) -> tuple[str, dict[str, Any]]:
    """The model's status line, `gpt-4o-mini answered: 2 tool calls, 412 tokens, 380 ms`, and its facts as data.

    The facts (`metadata["model_call"]`): the model's name, tokens, duration, time to first
    token; with the model's `prices`, the call's cost and its currency.
    """
    usage, calls = response.usage, len(response.tool_calls)
    what = "text" if not calls else "1 tool call" if calls == 1 else f"{calls} tool calls"
    milliseconds = seconds * 1000
    line = f"{model_name} answered: {what}, {usage.total_tokens} tokens, {milliseconds:.0f} ms"
    facts: dict[str, Any] = {"model": model_name, "input_tokens": usage.input_tokens,
                             "output_tokens": usage.output_tokens, "duration_ms": round(milliseconds, 1)}
    if first_token is not None:
        facts["ttft_ms"] = round(first_token * 1000, 1)
    if prices is not None:
        facts["cost"], facts["currency"] = round(prices.cost(usage), 8), prices.currency
    return line, facts


def request_record(request: ModelRequest) -> dict[str, Any]:
    """A model request as the provider got it, for the log (`StatusOptions(requests=True)`).

    Its messages after the hooks' edits and the instructions, its tools and settings. An
    image or a file sent as bytes shows as a text part that says what was left out: the log
    keeps the bytes once, with the message they came with.
    """
    return {
        "messages": [_without_bytes(m.model_dump(mode="json", exclude_none=True)) for m in request.messages],
        "tools": [t.model_dump(mode="json", exclude_none=True) for t in request.tools],
        "output_schema": request.output_schema, "settings": dict(request.settings),
        "model_settings": request.model_settings.model_dump(mode="json", exclude_none=True),
    }


def _without_bytes(message: dict[str, Any]) -> dict[str, Any]:
    parts = message.get("parts", [])
    for index, part in enumerate(parts):
        if isinstance(part.get("data"), str) and part.get("type") in ("image", "file"):
            what = f"{part['type']} {part.get('media_type') or ''}".strip()
            parts[index] = {"type": "text", "text": f"[{what}: {len(part['data'])} characters of data left out]"}
    return message


def describe_reasoning(response: ModelResponse) -> list[str]:
    """`thinking: ...`, one line per reasoning part that shows text (hidden reasoning shows none)."""
    return [f"thinking: {part.text}" for part in response.reasoning if part.text.strip()]


def slow_hook(author: str, hook: str, point: HookPoint, seconds: float) -> Event:
    """The marker of a hook call that took `seconds` (`SLOW_HOOK_S` or more), just ended: `metadata["hook_call"]`."""
    started = datetime.now(UTC) - timedelta(seconds=seconds)
    return Event.marker(author, hook_call={"hook": hook, "point": point.value, "duration_ms": round(seconds * 1000, 1),
                                           "started_at": started.isoformat()})
