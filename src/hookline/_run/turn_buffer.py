"""`TurnBuffer`: what hooks hand the loop during a turn, for the loop to apply.

Hooks never change the run directly: `State.inject`, `State.skip_tool` and the other
decision methods, and an assignment to `state.tool_result` or `state.model_settings`, write
here. The loop owns the buffer (it gives it to the `State` it builds) and applies what it
holds once the hooks of a point have run. Injected messages wait while tool calls await
their results (`hold()` until `release()`), so that a message never lands between a call and
its result.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from hookline.decision import Decision
from hookline.events import Event
from hookline.messages import Message, ToolResultPart
from hookline.models.base import ModelSettings

__all__ = ["Trip", "TurnBuffer"]

Trip = tuple[str, str, bool, dict[str, Any]]
"""A guardrail's trip: its name, the reason, whether it stops the run, and details for the record."""


class TurnBuffer:
    """Injected messages, per-call decisions and the tool result in hand, between hooks and the loop."""

    __slots__ = ("beside", "decisions", "holding", "messages", "model_settings", "records", "tool_result", "trips")

    def __init__(self) -> None:
        self.messages: list[Message] = []
        """Injected messages waiting to join the conversation, in the order they came."""
        self.holding = False
        """Whether the messages wait past the current point (tool calls await their results)."""
        self.decisions: dict[str, Decision] = {}
        """The `before_tool` decisions of this tool turn, by call id."""
        self.tool_result: ToolResultPart | None = None
        """In `after_tool`: the result of the call being handled (hooks may replace it)."""
        self.model_settings: ModelSettings | None = None
        """What `before_llm` hooks set for the coming model call, laid over the run's settings."""
        self.trips: list[Trip] = []
        """Guardrails that tripped (`State.trip_guardrail`), for the loop to record (and stop on)."""
        self.beside: list[tuple[str, Awaitable[None]]] = []
        """Checks to run beside the coming model call (`State.run_beside_model`), by name."""
        self.records: list[Event] = []
        """Events hooks had recorded through the state (a compaction's summary), for the loop to write."""

    def inject(self, message: Message) -> None:
        """Queue `message`; the loop appends it when the messages are released."""
        self.messages.append(message)

    def hold(self) -> None:
        """Keep the messages waiting until `release()`: tool calls are about to await their results."""
        self.holding = True

    def release(self) -> list[Message]:
        """Stop holding and hand over the waiting messages, for the loop to append in order."""
        self.holding = False
        return self.take()

    def take(self) -> list[Message]:
        """Hand over the waiting messages and keep holding (a paused turn records them for later)."""
        messages, self.messages = self.messages, []
        return messages

    def take_trips(self) -> list[Trip]:
        """Hand over the trips recorded since the last take."""
        trips, self.trips = self.trips, []
        return trips

    def take_beside(self) -> list[tuple[str, Awaitable[None]]]:
        """Hand over the checks queued for the coming model call."""
        checks, self.beside = self.beside, []
        return checks

    def take_records(self) -> list[Event]:
        """Hand over the events to record."""
        records, self.records = self.records, []
        return records
