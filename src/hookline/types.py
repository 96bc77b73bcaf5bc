"""Type aliases shared across hookline (aliases only, no behaviour)."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

JSONObject: TypeAlias = dict[str, Any]
"""A JSON object, as decoded by `json.loads`."""

Role: TypeAlias = Literal["user", "assistant", "tool", "system"]
"""Who speaks a message."""

StopReason: TypeAlias = Literal["completed", "hook_exit", "interrupted", "max_turns", "cancelled", "guardrail"]
"""Why a run stopped ("guardrail": a guardrail tripped, `State.trip_guardrail`)."""

EventKind: TypeAlias = Literal["message", "status", "marker", "delta"]
"""What an event is: a conversation message, a status line, a bookkeeping marker (in the `all`
view only: e.g. that a tool call started), or a streamed text fragment."""

StatusSource: TypeAlias = Literal["agent", "llm", "tool"]
"""Which part of the loop wrote a status event."""

View: TypeAlias = Literal["prompt", "ui", "all"]
"""A view of a session's log: what the model sees, what a front end shows, or everything."""
