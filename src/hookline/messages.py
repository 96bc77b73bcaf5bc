"""Messages and their parts: the conversation as the loop and every provider see it.

These are plain values. Identity and order (`id`, `seq`) belong to the `Event` that
records a message in a session's log (`hookline.events`). Parts are frozen: the log and
the live conversation share them, so a hook changes a message by replacing a part in its
`parts` list (or the message), never by editing a part in place.

A message's views (`text`, `tool_calls`, `tool_results`) are read over the whole history
on every turn (by hooks, scripted models, the loop), so they must cost next to nothing. A
message's `parts` is a list that remembers which kinds of part it holds and forgets it
when it is edited: a view of a message whose parts are all of one kind (nearly all of
them) is then a copy of the list or an empty one, with no scan. Every edit of a message
in place (its parts list, or an attribute) also moves a clock (`edit_stamp()`), which
lets the loop re-check only the messages added since its last check of the conversation.

The loop builds a few messages and results per turn, and a store stamps every event it
appends, from values it made itself: `without_validation` builds such an instance
directly (what pydantic's `model_construct` does, minus its per-field default handling,
which costs more than validation itself).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import count
from typing import Annotated, Any, Literal, SupportsIndex, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from hookline.types import JSONObject, Role

__all__ = [
    "DocumentPart", "Message", "Part", "ReasoningPart", "TextPart", "ToolCallPart", "ToolResultPart", "edit_stamp",
    "tracks_edits", "without_validation",
]


_ModelT = TypeVar("_ModelT", bound=BaseModel)
# pydantic keeps an instance's state in four slots of BaseModel; their descriptors set them
# without the attribute lookup of `object.__setattr__` (a few hundred calls per run).
_slots = BaseModel.__dict__
_set_dict = _slots["__dict__"].__set__
_set_fields_set = _slots["__pydantic_fields_set__"].__set__
_set_extra = _slots["__pydantic_extra__"].__set__
_set_private = _slots["__pydantic_private__"].__set__
_new = object.__new__
_EVERY_FIELD: dict[type[BaseModel], set[str]] = {}  # by class: the fields-set its trusted instances share


def without_validation(cls: type[_ModelT], values: dict[str, Any]) -> _ModelT:
    """An instance of `cls` holding `values`, one for every field, trusted to be valid.

    Every such instance of `cls` shares one fields-set: it holds every field, so pydantic's
    `__setattr__` (which adds to it) never changes it, and a run saves a set per message
    and result.
    """
    instance = _new(cls)
    _set_dict(instance, values)
    every = _EVERY_FIELD.get(cls)
    if every is None:
        every = _EVERY_FIELD[cls] = set(cls.model_fields)
    _set_fields_set(instance, every)
    _set_extra(instance, None)
    _set_private(instance, None)
    return instance


class _Part(BaseModel):
    """The base of every part: a frozen value."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class TextPart(_Part):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str
    """The text."""


class ToolCallPart(_Part):
    """A request, made by the model (or recorded for a user), to call a tool."""

    type: Literal["tool_call"] = "tool_call"
    id: str
    """The call id the model gave; every result carries it back."""
    name: str
    """The tool's name."""
    arguments: JSONObject | str = Field(default_factory=dict)
    """The arguments: a dict, or the raw string a model sent (possibly malformed JSON)."""


class ToolResultPart(_Part):
    """The answer to one tool call."""

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
        return without_validation(cls, values)


class DocumentPart(_Part):
    """A document given to the model; all documents of one message go as one block."""

    type: Literal["document"] = "document"
    title: str
    """A short title shown to the model with the document."""
    text: str
    """The document's text."""
    source: str | None = None
    """Where it came from (a path or URL), if known."""


class ReasoningPart(_Part):
    """The model's reasoning (its thinking) before it answered, kept to be sent back to it.

    Some providers need it back, unchanged, on the next call: Anthropic's thinking blocks
    with their signature when the model called tools, OpenAI's reasoning items when the
    Responses API keeps no state (`store: false`). Only the adapter of the provider that
    produced a part sends it back (`provider`); any other adapter leaves it out. Its text is
    never part of `Message.text`.
    """

    type: Literal["reasoning"] = "reasoning"
    text: str = ""
    """The reasoning shown: the thinking itself or a summary of it; empty when the provider hides it."""
    signature: str | None = None
    """The provider's signature over `text` (Anthropic), sent back unchanged."""
    data: str | None = None
    """Reasoning the provider keeps opaque: Anthropic's redacted thinking, OpenAI's encrypted content."""
    id: str | None = None
    """The provider's id for it (OpenAI's `rs_...`), where it gives one."""
    provider: str | None = None
    """Who produced it ("anthropic", "openai-responses", ...): the only adapter that sends it back."""


Part = Annotated[
    TextPart | ToolCallPart | ToolResultPart | DocumentPart | ReasoningPart, Field(discriminator="type")
]
"""Any part of a message or event, tagged by its `type`."""

# The kinds of part a parts list holds, as bits; _UNKNOWN until a view asks.
_TEXT, _CALL, _RESULT, _OTHER = 1, 2, 4, 8
_UNKNOWN = -1
_clock = count(1)
_last_edit = 0


def edit_stamp() -> int:
    """A number that changes whenever any message, or its parts list, is edited in place.

    A message whose `parts` is a plain list assigned by hand (not one the message made)
    is the exception: edits of that list go unseen (see `tracks_edits`).
    """
    return _last_edit


def tracks_edits(message: Message) -> bool:
    """Whether edits of `message.parts` in place move `edit_stamp()`: not for a plain list assigned by hand."""
    return type(message.parts) is _PartList


def _note_edit() -> None:
    global _last_edit
    _last_edit = next(_clock)  # unique values: a late write from another thread still differs


class _PartList(list[Part]):
    """A message's parts: a list that remembers the kinds of part it holds until it is edited."""

    __slots__ = ("kinds",)

    def _edited(self) -> None:
        self.kinds = _UNKNOWN
        _note_edit()

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        # Copies and pickles rebuild the list whole: filling a new list is not an edit.
        return _part_list, (list(self),)

    def __setitem__(self, index: Any, value: Any) -> None:
        self._edited()
        super().__setitem__(index, value)

    def __delitem__(self, index: SupportsIndex | slice) -> None:
        self._edited()
        super().__delitem__(index)

    def __iadd__(self, values: Iterable[Part]) -> _PartList:  # type: ignore[override,misc]
        self._edited()
        super().__iadd__(values)
        return self

    def __imul__(self, times: SupportsIndex) -> _PartList:
        self._edited()
        super().__imul__(times)
        return self

    def append(self, value: Part) -> None:
        self._edited()
        super().append(value)

    def insert(self, index: SupportsIndex, value: Part) -> None:
        self._edited()
        super().insert(index, value)

    def extend(self, values: Iterable[Part]) -> None:
        self._edited()
        super().extend(values)

    def pop(self, index: SupportsIndex = -1) -> Part:
        self._edited()
        return super().pop(index)

    def remove(self, value: Part) -> None:
        self._edited()
        super().remove(value)

    def clear(self) -> None:
        self._edited()
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self._edited()
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        self._edited()
        super().reverse()


def _part_list(parts: Iterable[Part] = ()) -> _PartList:
    owned = _PartList(parts)
    owned.kinds = _UNKNOWN
    return owned


def _classify(parts: list[Any]) -> int:
    kinds = 0
    for part in parts:
        kind = _KIND_OF.get(type(part))
        if kind is None:  # a subclass, or not a part at all
            kind = next((k for cls, k in _KIND_OF.items() if isinstance(part, cls)), _OTHER)
        kinds |= kind
    return kinds


def _kinds(parts: list[Any]) -> int:
    """The kinds of part in `parts`: remembered by a message's own list, worked out for any other."""
    try:
        kinds: int = parts.kinds  # type: ignore[attr-defined]
    except AttributeError:  # a plain list, assigned by hand
        return _classify(parts)
    if kinds == _UNKNOWN:
        kinds = parts.kinds = _classify(parts)  # type: ignore[attr-defined]
    return kinds


_KIND_OF: dict[type[BaseModel], int] = {
    TextPart: _TEXT, ToolCallPart: _CALL, ToolResultPart: _RESULT, DocumentPart: _OTHER, ReasoningPart: _OTHER,
}


class Message(BaseModel):
    """One message of a conversation: a role and its parts.

    `Message("user", [TextPart(text="hi")])`, or the helpers `Message.user("hi")`,
    `Message.assistant("hello")`, `Message.system("be terse")`.
    """

    model_config = ConfigDict(extra="forbid")
    role: Role
    """Who speaks: user, assistant, tool or system."""
    parts: Annotated[list[Part], AfterValidator(_part_list)] = Field(default_factory=_part_list)
    """What is said, in order (a list of the message's own, which notes edits)."""

    def __init__(self, role: Role | None = None, parts: list[Any] | None = None, **data: Any) -> None:
        if role is not None:
            data["role"] = role
        if parts is not None:
            data["parts"] = parts
        super().__init__(**data)

    def __setattr__(self, name: str, value: Any) -> None:
        _note_edit()
        super().__setattr__(name, value)

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
    def from_valid_parts(cls, role: Role, parts: Iterable[Part]) -> Message:
        """A message of parts that are already valid, built without validating them again.

        The loop builds a few messages per turn from parts it made itself; validating the
        tagged union of parts again would cost twice as much as building the message.
        `role` must be a valid role and `parts` part objects: nothing checks them here.
        The message copies `parts` into a list of its own.
        """
        owned = _PartList(parts)
        owned.kinds = _UNKNOWN
        return without_validation(cls, {"role": role, "parts": owned})

    @property
    def text(self) -> str:
        """The text parts joined together."""
        parts = self.parts
        try:  # inline, not a call: the views are read over the whole history every turn
            kinds = parts.kinds  # type: ignore[attr-defined]
        except AttributeError:
            kinds = _UNKNOWN
        if kinds == _UNKNOWN:
            kinds = _kinds(parts)
        if not kinds & _TEXT:
            return ""
        if len(parts) == 1:
            return parts[0].text  # type: ignore[union-attr]
        return "".join(p.text for p in parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        """The tool calls in this message."""
        parts = self.parts
        try:  # inline, not a call: the views are read over the whole history every turn
            kinds = parts.kinds  # type: ignore[attr-defined]
        except AttributeError:
            kinds = _UNKNOWN
        if kinds == _UNKNOWN:
            kinds = _kinds(parts)
        if kinds == _CALL:
            return parts[:]  # type: ignore[return-value]
        if kinds & _CALL:
            return [p for p in parts if isinstance(p, ToolCallPart)]
        return []

    @property
    def tool_results(self) -> list[ToolResultPart]:
        """The tool results in this message."""
        parts = self.parts
        try:  # inline, not a call: the views are read over the whole history every turn
            kinds = parts.kinds  # type: ignore[attr-defined]
        except AttributeError:
            kinds = _UNKNOWN
        if kinds == _UNKNOWN:
            kinds = _kinds(parts)
        if kinds == _RESULT:
            return parts[:]  # type: ignore[return-value]
        if kinds & _RESULT:
            return [p for p in parts if isinstance(p, ToolResultPart)]
        return []
