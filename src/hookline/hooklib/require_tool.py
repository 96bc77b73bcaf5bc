"""`RequireTool`: do not let a run finish before the model has called a given tool.

What "this run" means is read from the conversation itself rather than kept in
`state.data` (which is saved with the session, and would outlive the run if the process
stopped): the run is everything after the last user message that is not one of this
hook's own reminders. The reminders are recognised by their exact text, so their count
needs no bookkeeping either, and the hook keeps no per-run state on itself: one instance
can serve concurrent runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hookline.errors import ConfigError
from hookline.messages import Message

if TYPE_CHECKING:
    from hookline.state import State

__all__ = ["RequireTool"]


class RequireTool:
    """A hook that sends the model back to work until it has called the tool `name`.

    Register it at `on_exit`. When the model answers without having called the tool in
    this run, the hook injects a reminder (a user message) and asks the loop to go on;
    after `max_reminders` reminders it lets the run finish anyway. A call counts whatever
    its result (even an error or a denial): the model did what was asked.

    "This run" is the conversation after the last user message that is not one of the
    reminders. So a call that a `SlidingWindow` or `Compaction` has already trimmed away is
    not seen, and a hook that injects user messages mid-run (research notes, say) starts a
    new span: the tool must then be called after it.

    Example:
        ```python
        agent = Agent(
            model=..., tools=[save_report],
            hooks={"on_exit": [RequireTool("save_report", max_reminders=1)]},
        )
        ```

    Args:
        name: The tool that must be called.
        message: The reminder's text (default: one naming the tool).
        max_reminders: How many reminders one run may get before it is let go.

    """

    def __init__(self, name: str, message: str | None = None, max_reminders: int = 2) -> None:
        if not isinstance(name, str) or not name:
            raise ConfigError(f"RequireTool needs the tool's name, not {name!r}")
        if not isinstance(max_reminders, int) or isinstance(max_reminders, bool) or max_reminders < 0:
            raise ConfigError(f"RequireTool(max_reminders=...) takes an integer >= 0, not {max_reminders!r}")
        self.tool_name = name
        self.message = message or (
            f"You have not called the `{name}` tool yet. Call it before you give your final answer."
        )
        self.max_reminders = max_reminders

    def __repr__(self) -> str:
        return f"RequireTool({self.tool_name!r}, max_reminders={self.max_reminders})"

    def run(self, state: State) -> None:
        """Remind the model and go on, unless the tool was called or the reminders ran out."""
        span = self.this_run(state.messages)
        if self.called(span) or self.reminders(span) >= self.max_reminders:
            return
        state.inject(Message.user(self.message))
        state.control.continue_run()

    def this_run(self, messages: Sequence[Message]) -> Sequence[Message]:
        """Return the messages after the last user message that is not a reminder of this hook."""
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.role == "user" and not self._is_reminder(message):
                return messages[index + 1 :]
        return messages

    def called(self, messages: Sequence[Message]) -> bool:
        """Whether an assistant message in `messages` calls the tool."""
        return any(call.name == self.tool_name for m in messages if m.role == "assistant" for call in m.tool_calls)

    def reminders(self, messages: Sequence[Message]) -> int:
        """How many of this hook's reminders `messages` hold."""
        return sum(1 for m in messages if self._is_reminder(m))

    def _is_reminder(self, message: Message) -> bool:
        return message.role == "user" and message.text == self.message
