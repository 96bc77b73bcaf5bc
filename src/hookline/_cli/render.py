"""How the CLI shows a run and a session log: status apart from the conversation.

Status lines go to stderr, dim, tagged with their source (`[llm]`, `[tool]`, `[agent]`),
so stdout carries only the answer and can be piped. On a terminal a spinner shows the
latest status while the run is busy; elsewhere the lines are printed plainly. Every line
passes through `hookline._redact.redact`, a log written before a credential was redacted
at its source included.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from types import TracebackType

from rich.console import Console
from rich.status import Status
from rich.table import Table
from rich.text import Text

from hookline._redact import redact
from hookline._run.status import describe_call
from hookline.events import Event
from hookline.messages import (
    DocumentPart,
    FilePart,
    ImagePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from hookline.models._render import describe_media
from hookline.sessions import Session

__all__ = ["StatusLines", "event_lines", "is_shown", "sessions_table", "status_line"]

_ROLE_STYLES = {"user": "bold cyan", "assistant": "bold green", "tool": "bold magenta", "system": "bold yellow"}


def is_shown(event: Event) -> bool:
    """Whether a front end shows `event`: anything but a marker (the loop's own bookkeeping)."""
    return event.kind != "marker"


def status_line(event: Event) -> Text:
    """Render a status event as one dim line: `[llm] gpt-4o-mini answered: text, 12 tokens, 80 ms`."""
    return Text.assemble((f"[{event.source or 'status'}] ", "dim cyan"), (redact(event.text), "dim"))


class StatusLines:
    """A run's status lines on stderr, with a spinner on a terminal.

    Args:
        console: A stderr console.
        quiet: Print no lines (the spinner still shows on a terminal).

    """

    def __init__(self, console: Console, *, quiet: bool = False) -> None:
        self.console = console
        self.quiet = quiet
        self._spinner: Status | None = None

    def __enter__(self) -> StatusLines:
        self.resume("starting")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.pause()

    def show(self, event: Event) -> None:
        """Print a status event, and show it beside the spinner."""
        if not self.quiet:
            self.console.print(status_line(event), soft_wrap=True)
        if self._spinner is not None:
            self._spinner.update(Text(redact(event.text)))

    def pause(self) -> None:
        """Stop the spinner (before other output goes to the terminal)."""
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None

    def resume(self, text: str = "working") -> None:
        """Start the spinner again, on a terminal only."""
        if self._spinner is None and self.console.is_terminal:
            self._spinner = self.console.status(Text(text), spinner="dots")
            self._spinner.start()


def _part_line(part: Part) -> Text:
    if isinstance(part, TextPart):
        return Text(redact(part.text))
    if isinstance(part, ToolCallPart):
        shown = redact(describe_call(part, inputs=True).removeprefix("running "))
        return Text.assemble(("→ ", "yellow"), shown, (f"  [{part.id}]", "dim"))
    if isinstance(part, ToolResultPart):
        style = "red" if part.is_error else ""
        content = redact(part.content)
        line = Text.assemble(("← ", "yellow"), (f"{part.name or part.call_id}: ", "bold"), (content, style))
        for media in part.attachments:
            line.append(f" [{describe_media(media)}]", style="dim")
        return line
    if isinstance(part, ImagePart | FilePart):
        return Text(f"[{describe_media(part)}]", style="dim")
    if isinstance(part, ReasoningPart):
        return Text.assemble(("thinking: ", "dim"), (redact(part.text) or "(hidden)", "dim italic"))
    assert isinstance(part, DocumentPart)
    return Text.assemble(("document ", "dim"), (part.title, "bold"), f" ({len(part.text)} chars)")


def event_lines(event: Event) -> list[Text]:
    """Render an event of a session log as lines: messages bold by role, status dim, markers not at all."""
    if not is_shown(event):
        return []
    seq = Text(f"{event.seq if event.seq is not None else '-':>4} ", style="dim")
    if event.kind == "status":
        return [seq + status_line(event)]
    label = event.role or event.kind
    head = Text.assemble((f"{label}", _ROLE_STYLES.get(label, "bold")))
    if event.author not in (label, "user") and event.role != "tool":
        head.append(f" ({event.author})", style="dim")
    if event.partial:
        head.append(" (pending)", style="italic yellow")
    lines = [_part_line(part) for part in event.parts] or [Text("")]
    return [seq + head + Text(": ") + lines[0], *(Text("       ") + line for line in lines[1:])]


def _when(moment: datetime | None) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S") if moment else ""


def sessions_table(sessions: Iterable[Session]) -> Table:
    """Render sessions as a table: id, user, app, created, updated."""
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("id", "user", "app", "created", "updated"):
        table.add_column(column, no_wrap=column == "id")
    for session in sessions:
        table.add_row(session.id, session.user, session.app, _when(session.created_at), _when(session.updated_at))
    return table
