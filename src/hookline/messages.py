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
directly, and the messages, results and prompt text the loop keeps are built lighter still
(`from_valid_parts`, `from_valid`, with `blank`). Both are tricks of `hookline._hot_path`,
where they live with their invariants and their plain twins.
"""

from __future__ import annotations

import base64
import hashlib
import mimetypes
import os
from collections.abc import Iterable
from itertools import count
from pathlib import Path
from typing import Annotated, Any, Literal, Self, SupportsIndex

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from hookline._hot_path import blank, set_field, share_fields_sets, share_keys, without_validation
from hookline.types import JSONObject, Role

__all__ = [
    "DocumentPart", "FilePart", "ImagePart", "Media", "Message", "Part", "ReasoningPart", "TextPart", "ToolCallPart",
    "ToolResultPart", "edit_stamp", "share_fields_sets", "tracks_edits", "without_validation",
]


class _Part(BaseModel):
    """The base of every part: a frozen value."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class TextPart(_Part):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str
    """The text."""

    @classmethod
    def from_valid(cls, text: str) -> TextPart:
        """A text part of `text`, a string, built without validating it (the prompt, the instructions)."""
        part = blank(cls)
        set_field(part, "type", "text")  # no dict until one is asked for
        set_field(part, "text", text)
        return part


class ToolCallPart(_Part):
    """A request, made by the model (or recorded for a user), to call a tool."""

    type: Literal["tool_call"] = "tool_call"
    id: str
    """The call id the model gave; every result carries it back."""
    name: str
    """The tool's name."""
    arguments: JSONObject | str = Field(default_factory=dict)
    """The arguments: a dict, or the raw string a model sent (possibly malformed JSON)."""


class _MediaPart(_Part):
    """What images and files share: bytes with their media type, or a URL.

    A store keeps the bytes once per session, by their SHA-256 (`blob`), apart from the
    log: a part read back from a store has `blob` set and `data` None, and the loop loads
    the bytes again before it sends the part to a model. JSON carries `data` as base64.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_bytes="base64", val_json_bytes="base64")
    type: str
    """"image" or "file"."""
    media_type: str | None = None
    """The MIME type, such as "image/png" or "application/pdf"; required with `data`."""
    data: bytes | None = Field(default=None, repr=False)
    """The content itself; None for a URL, or for a part read back from a store (see `blob`)."""
    url: str | None = None
    """Where the provider fetches the content (http(s), or a `data:` URL)."""
    blob: str | None = None
    """The SHA-256 of `data` (hex) once a store keeps it; the key to load the bytes again."""

    @property
    def _noun(self) -> str:
        return "an image part" if self.type == "image" else "a file part"

    @model_validator(mode="after")
    def _has_a_source(self) -> Self:
        if self.data is None and self.url is None and self.blob is None:
            raise ValueError(f"{self._noun} needs data (bytes with a media_type), a url, or a stored blob")
        if self.data is not None and not self.media_type:
            raise ValueError(f"{self._noun} with data needs its media_type, e.g. 'image/png' or 'application/pdf'")
        return self

    @classmethod
    def from_path(cls, path: str | os.PathLike[str], *, media_type: str | None = None) -> Self:
        """The part holding the file at `path`, its media type guessed from the name unless given.

        Raises:
            ValueError: The media type cannot be guessed from the name: pass `media_type`.
        """
        file = Path(path)
        media_type = media_type or mimetypes.guess_type(file.name)[0]
        if not media_type:
            raise ValueError(f"cannot tell the media type of {file.name!r} from its name: pass media_type=")
        extra = {"name": file.name} if "name" in cls.model_fields else {}
        return cls(media_type=media_type, data=file.read_bytes(), **extra)

    def data_url(self) -> str:
        """The content as a `data:` URL (base64), or the part's `url` when it has no bytes.

        Raises:
            ValueError: The part was read back from a store and its bytes are not loaded.
        """
        if self.data is None:
            if self.url is None:
                raise ValueError(f"{self._noun}'s bytes are not loaded (blob {self.blob})")
            return self.url
        return f"data:{self.media_type};base64,{base64.b64encode(self.data).decode()}"

    def base64(self) -> str:
        """The bytes as base64 text (for providers that take them so).

        Raises:
            ValueError: The part has no bytes (a URL, or a blob not loaded).
        """
        if self.data is None:
            raise ValueError(f"{self._noun} holds no bytes (a url, or blob {self.blob} not loaded)")
        return base64.b64encode(self.data).decode()

    def digest(self) -> str:
        """The SHA-256 of the bytes, in hex: the key a store keeps them under."""
        if self.data is None:
            if self.blob is None:
                raise ValueError(f"{self._noun} holds no bytes to hash")
            return self.blob
        return hashlib.sha256(self.data).hexdigest()

    @property
    def loaded(self) -> bool:
        """Whether a provider can be sent this part: it holds bytes, or a URL."""
        return self.data is not None or self.url is not None


class ImagePart(_MediaPart):
    """An image, given to the model in a user message or a tool result.

    `ImagePart.from_path("chart.png")`, `ImagePart(media_type="image/png", data=raw)` or
    `ImagePart(url="https://...")`.
    """

    type: Literal["image"] = "image"


class FilePart(_MediaPart):
    """A file (a PDF, say), given to the model in a user message or a tool result.

    Providers read some kinds only (Anthropic and OpenAI take PDFs and plain text); the
    adapter of one that cannot take it raises `ModelError` naming the media type.
    """

    type: Literal["file"] = "file"
    name: str | None = None
    """The file's name, shown to the model where the provider takes one."""


Media = Annotated[ImagePart | FilePart, Field(discriminator="type")]
"""An image or a file: what a tool result may carry beside its text."""


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
    attachments: tuple[Media, ...] = ()
    """Images and files the tool returned beside its text (see `ImagePart`, `FilePart`)."""

    @classmethod
    def from_valid(
        cls, call_id: str, content: str, *, name: str, is_error: bool = False, attachments: tuple[Media, ...] = ()
    ) -> ToolResultPart:
        """A result of values that are already valid (strings, parts), built without validating them."""
        result = blank(cls)
        set_field(result, "type", "tool_result")
        set_field(result, "call_id", call_id)
        set_field(result, "content", content)
        set_field(result, "is_error", is_error)
        set_field(result, "name", name)
        set_field(result, "attachments", attachments)
        return result


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
    TextPart | ToolCallPart | ToolResultPart | DocumentPart | ReasoningPart | ImagePart | FilePart,
    Field(discriminator="type"),
]
"""Any part of a message or event, tagged by its `type`."""

# The kinds of part a parts list holds, as bits; _UNKNOWN until a view asks (or known when it is made).
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
    ImagePart: _OTHER, FilePart: _OTHER,
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
        tagged union of parts again would cost more than building the message.
        `role` must be a valid role and `parts` part objects: nothing checks them here.
        The message copies `parts` into a list of its own.
        """
        owned = _PartList(parts)  # its kinds now: its views are read soon, and a short list is quick to read
        owned.kinds = _KIND_OF.get(type(owned[0]), _UNKNOWN) if len(owned) == 1 else _classify(owned)
        message = blank(cls)
        set_field(message, "role", role)  # no dict until one is asked for
        set_field(message, "parts", owned)
        return message

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


share_keys(TextPart)
share_keys(ToolResultPart)
share_keys(Message)
