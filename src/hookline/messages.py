"""Messages and their parts: the conversation as the loop and every provider see it.

These are plain values. Identity and order (`id`, `seq`) belong to the `Event` that
records a message in a session's log (`hookline.events`). Parts are frozen: the log and
the live conversation share them, so a hook changes a message by replacing a part in its
`parts` list (or the message), never by editing a part in place.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from hookline.types import JSONObject, Role

__all__ = ["DocumentPart", "Message", "Part", "TextPart", "ToolCallPart", "ToolResultPart"]

_PART = ConfigDict(extra="forbid", frozen=True)


class TextPart(BaseModel):
    """Plain text."""

    model_config = _PART
    type: Literal["text"] = "text"
    text: str
    """The text."""


class ToolCallPart(BaseModel):
    """A request, made by the model (or recorded for a user), to call a tool."""

    model_config = _PART
    type: Literal["tool_call"] = "tool_call"
    id: str
    """The call id the model gave; every result carries it back."""
    name: str
    """The tool's name."""
    arguments: JSONObject | str = Field(default_factory=dict)
    """The arguments: a dict, or the raw string a model sent (possibly malformed JSON)."""


class ToolResultPart(BaseModel):
    """The answer to one tool call."""

    model_config = _PART
    type: Literal["tool_result"] = "tool_result"
    call_id: str
    """The id of the `ToolCallPart` this answers."""
    content: str
    """What the tool returned, as text (non-text values are JSON-encoded)."""
    is_error: bool = False
    """True when the call failed; `content` then names the problem."""
    name: str = ""
    """The tool's name (some providers want it beside the id)."""


    @classmethod
    def from_valid(cls, call_id: str, content: str, *, name: str, is_error: bool = False) -> ToolResultPart:
        """A result of values that are already valid (strings), built without validating them."""
        values = {"type": "tool_result", "call_id": call_id, "content": content, "is_error": is_error, "name": name}
        return _without_validation(cls, values)


class DocumentPart(BaseModel):
    """A document given to the model; all documents of one message go as one block."""

    model_config = _PART
    type: Literal["document"] = "document"
    title: str
    """A short title shown to the model with the document."""
    text: str
    """The document's text."""
    source: str | None = None
    """Where it came from (a path or URL), if known."""


_ModelT = TypeVar("_ModelT", bound=BaseModel)
_ALL_FIELDS: dict[type[BaseModel], set[str]] = {}


def _without_validation(cls: type[_ModelT], values: dict[str, Any]) -> _ModelT:
    """An instance of `cls` holding `values`, one for every field, trusted to be valid.

    What pydantic's `model_construct` does, minus its per-field default handling, which
    costs more than validation itself. Every instance of a class shares one fields-set:
    it holds every field, so pydantic's `__setattr__` (which adds to it) never changes it,
    and a run saves a set per message and result.
    """
    instance = cls.__new__(cls)
    object.__setattr__(instance, "__dict__", values)
    fields_set = _ALL_FIELDS.get(cls)
    if fields_set is None:
        fields_set = _ALL_FIELDS[cls] = set(cls.model_fields)
    object.__setattr__(instance, "__pydantic_fields_set__", fields_set)
    object.__setattr__(instance, "__pydantic_extra__", None)
    object.__setattr__(instance, "__pydantic_private__", None)
    return instance


Part = Annotated[TextPart | ToolCallPart | ToolResultPart | DocumentPart, Field(discriminator="type")]
"""Any part of a message or event, tagged by its `type`."""


class Message(BaseModel):
    """One message of a conversation: a role and its parts.

    `Message("user", [TextPart(text="hi")])`, or the helpers `Message.user("hi")`,
    `Message.assistant("hello")`, `Message.system("be terse")`.
    """

    model_config = ConfigDict(extra="forbid")
    role: Role
    """Who speaks: user, assistant, tool or system."""
    parts: list[Part] = Field(default_factory=list)
    """What is said, in order."""

    def __init__(self, role: Role | None = None, parts: list[Any] | None = None, **data: Any) -> None:
        if role is not None:
            data["role"] = role
        if parts is not None:
            data["parts"] = parts
        super().__init__(**data)

    @classmethod
    def user(cls, text: str) -> Message:
        """A user message holding `text`."""
        return cls(role="user", parts=[TextPart(text=text)])

    @classmethod
    def assistant(cls, text: str) -> Message:
        """An assistant message holding `text`."""
        return cls(role="assistant", parts=[TextPart(text=text)])

    @classmethod
    def system(cls, text: str) -> Message:
        """A system message holding `text`."""
        return cls(role="system", parts=[TextPart(text=text)])

    @classmethod
    def from_valid_parts(cls, role: Role, parts: list[Part]) -> Message:
        """A message of parts that are already valid, built without validating them again.

        The loop builds a few messages per turn from parts it made itself; validating the
        tagged union of parts again would cost twice as much as building the message.
        `role` must be a valid role and `parts` part objects: nothing checks them here.
        """
        return _without_validation(cls, {"role": role, "parts": parts})

    @property
    def text(self) -> str:
        """The text parts joined together."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        """The tool calls in this message."""
        return [p for p in self.parts if isinstance(p, ToolCallPart)]

    @property
    def tool_results(self) -> list[ToolResultPart]:
        """The tool results in this message."""
        return [p for p in self.parts if isinstance(p, ToolResultPart)]
