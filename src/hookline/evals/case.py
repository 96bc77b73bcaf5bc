"""`Case`: one behaviour to check: its prompts, the calls and answer expected, the conversation seen.

A case holds the prompts, the tool calls and the answer expected, and (for a replay) the
conversation recorded when it was seen. A case is JSON (`Case.model_dump_json()`), one per
file or a list of them, so a suite lives beside the code it checks.

`Case.of_session(events)` makes one from a session's log (what `hookline sessions export ID
--as-case` prints): its prompts, every tool call made, the last answer, and the recorded
conversation, matched exactly; loosen it by hand (`match`, `answer_match`, arguments set to
null) where the agent may reach the same end another way.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from hookline.compaction import compaction_of
from hookline.errors import ConfigError
from hookline.events import Event
from hookline.messages import Message

__all__ = ["Case", "ExpectedCall", "load_cases"]


class ExpectedCall(BaseModel):
    """A tool call a case expects."""

    model_config = ConfigDict(extra="forbid")
    name: str
    """The tool's name."""
    arguments: dict[str, Any] | None = None
    """The arguments it expects, exactly; None: any."""


class Case(BaseModel):
    """One behaviour to check."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)
    """What it is called in a table and in a test's id."""
    prompts: list[str] = Field(min_length=1)
    """The user's prompts, in order (one run each, resumed where it pauses: every paused call approved)."""
    calls: list[ExpectedCall] | None = None
    """The tool calls expected over the whole case; None: not checked."""
    match: Literal["exact", "in_order", "any_order"] = "in_order"
    """How `calls` are matched: the very calls in that order; those calls in that order among others;
    those calls in any order among others."""
    answer: str | None = None
    """The last answer expected; None: not checked."""
    answer_match: Literal["equals", "contains"] = "contains"
    """How `answer` is matched: the whole answer, or a part of it (both after trimming spaces)."""
    recorded: list[Message] = Field(default_factory=list)
    """The conversation recorded when the case was seen: its model answers for a replay."""
    source: str | None = None
    """The session the case was made from."""

    @classmethod
    def of_session(cls, events: Sequence[Event], name: str, *, source: str | None = None) -> Case:
        """The case a session's log (its `all` or `prompt` view) makes: its prompts, calls and last answer, exactly.

        Raises:
            ConfigError: The log holds no prompt.
        """
        messages = [e for e in events if e.kind == "message" and not e.partial and compaction_of(e) is None]
        prompts = [e.text for e in messages if e.role == "user" and e.author == "user"]
        if not prompts:
            raise ConfigError(f"session {source or ''!r} holds no prompt to make a case of")
        conversation = [e.to_message() for e in messages]
        answers = [m for m in conversation if m.role == "assistant" and not m.tool_calls]
        return cls(
            name=name, prompts=prompts, source=source, match="exact", answer_match="equals",
            calls=[ExpectedCall(name=c.name, arguments=c.arguments if isinstance(c.arguments, dict) else None)
                   for m in conversation for c in m.tool_calls],
            answer=answers[-1].text if answers else None, recorded=conversation,
        )


_CASES: TypeAdapter[Case | list[Case]] = TypeAdapter(Case | list[Case])


def load_cases(path: str | Path) -> list[Case]:
    """The cases of a JSON file (one case or a list), or of every `*.json` file of a folder (by name).

    Raises:
        ConfigError: The path holds no case, or a file is not cases (the message names it and why).
    """
    where = Path(path)
    files = sorted(where.glob("*.json")) if where.is_dir() else [where]
    cases: list[Case] = []
    for file in files:
        try:
            loaded = _CASES.validate_json(file.read_bytes())
        except OSError as exc:
            raise ConfigError(f"cannot read cases from {file}: {exc.strerror or exc}") from None
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            at = ".".join(str(part) for part in first["loc"])
            raise ConfigError(f"{file} is not a case or a list of cases: {at}: {first['msg']}") from None
        cases.extend(loaded if isinstance(loaded, list) else [loaded])
    if not cases:
        raise ConfigError(f"no cases in {where}: give a JSON file of cases, or a folder of them")
    return cases
