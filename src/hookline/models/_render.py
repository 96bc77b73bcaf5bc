"""What every provider adapter renders the same way: documents, user actions, media, call ids.

Providers differ in how they carry tool calls, but not in how hookline turns the parts
they have no slot for into text: all `DocumentPart`s of one message become one block
(with their titles), and a tool call the *user* made (a recorded action, such as a file
edit) becomes a sentence inside the user message, never a provider tool id that the
provider would reject as an orphan.

Images and files (`ImagePart`, `FilePart`) keep their place among those blocks
(`content_blocks`) for the adapter to render in its provider's shape; those a user's call
returned (its result's `attachments`) come right after the sentence telling that call.
Where a message cannot carry them (a system or assistant message, a text-only model) each
becomes a short placeholder naming it (`media_placeholder`). A part an adapter cannot
send raises `MediaRefused`, which `media_errors` turns into a `ModelError` naming the
provider.
"""

from __future__ import annotations

import itertools
import json
import mimetypes
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import cast

from hookline.errors import ModelError
from hookline.messages import DocumentPart, FilePart, ImagePart, Part, TextPart, ToolCallPart, ToolResultPart
from hookline.types import JSONObject

__all__ = [
    "MediaRefused",
    "arguments_json",
    "attachments_intro",
    "content_blocks",
    "describe_media",
    "documents_block",
    "file_name",
    "file_text",
    "loaded",
    "media_errors",
    "media_placeholder",
    "new_call_id",
    "parse_arguments",
    "text_blocks",
    "user_action",
    "user_content",
]

Media = ImagePart | FilePart
"""An image or a file part."""


def new_call_id() -> str:
    """Make a fresh tool call id, for servers that give none."""
    return f"call_{uuid.uuid4().hex}"


def parse_arguments(raw: str | None) -> JSONObject | str:
    """Read tool call arguments: a dict, or the raw string if it is not a JSON object.

    An empty string means no arguments (`{}`), as servers send for tools without parameters.
    """
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    return value if isinstance(value, dict) else raw


def arguments_json(arguments: JSONObject | str) -> str:
    """Write tool call arguments as JSON; a raw (possibly malformed) string is kept as it was."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def documents_block(documents: Sequence[DocumentPart]) -> str:
    """Render every document of a message as one text block, each under its title."""
    rendered = []
    for document in documents:
        source = f" source={json.dumps(document.source, ensure_ascii=False)}" if document.source else ""
        title = json.dumps(document.title, ensure_ascii=False)
        rendered.append(f"<document title={title}{source}>\n{document.text}\n</document>")
    return "<documents>\n" + "\n".join(rendered) + "\n</documents>"


def user_action(call: ToolCallPart, result: ToolResultPart | None) -> str:
    """Tell a tool call the user made, and its result, as text."""
    said = f"The user called {call.name}({arguments_json(call.arguments)})"
    if result is None:
        return said + "."
    outcome = "error" if result.is_error else "result"
    return f"{said}; {outcome}: {result.content}"


def _orphan_result(result: ToolResultPart) -> str:
    outcome = "failed" if result.is_error else "returned"
    name = result.name or "a tool"
    return f"A call to {name} (id {result.call_id}) {outcome}: {result.content}"


def text_blocks(parts: Sequence[Part], media: Callable[[Media], str] | None = None) -> list[str]:
    """Render the parts of a message as text blocks, in order, with no tool ids.

    Consecutive text parts form one block; all documents form one block where the
    first of them stands; a tool call with its result (from the same parts) forms one
    sentence, followed by the result's attachments; an image or a file becomes the text
    `media` gives it (default: a placeholder saying it was left out). Empty blocks are
    left out.
    """
    return cast("list[str]", _blocks(parts, media or _left_out))


def content_blocks(parts: Sequence[Part]) -> list[str | Media]:
    """Render the parts of a message as `text_blocks` does, keeping each image and file, in its place, as itself."""
    return _blocks(parts, _itself)


def user_content(parts: Sequence[Part], render: Callable[[str | Media], JSONObject]) -> str | list[JSONObject]:
    """A user message's content: one string, or its content parts (each made by `render`) when it holds media."""
    if len(parts) == 1 and type(parts[0]) is TextPart:  # nearly every message: no scan
        return parts[0].text
    blocks = content_blocks(parts)
    if all(type(block) is str for block in blocks):
        return "\n\n".join(cast("list[str]", blocks))
    return [render(block) for block in blocks]


def _itself(part: Media) -> Media:
    return part


def _blocks(parts: Sequence[Part], media: Callable[[Media], str | Media]) -> list[str | Media]:
    if len(parts) == 1 and type(parts[0]) is TextPart:  # nearly every message: no scan
        return [parts[0].text] if parts[0].text else []
    documents = [part for part in parts if isinstance(part, DocumentPart)]
    results = {part.call_id: part for part in parts if isinstance(part, ToolResultPart)}
    called = {part.id for part in parts if isinstance(part, ToolCallPart)}
    blocks: list[str | Media] = []
    for is_text, group in itertools.groupby(parts, key=lambda part: isinstance(part, TextPart)):
        if is_text:
            blocks.append("".join(part.text for part in group if isinstance(part, TextPart)))
            continue
        for part in group:
            if isinstance(part, DocumentPart) and part is documents[0]:
                blocks.append(documents_block(documents))
            elif isinstance(part, ToolCallPart):
                result = results.get(part.id)
                blocks.append(user_action(part, result))
                if result is not None and result.attachments:
                    blocks.extend(map(media, result.attachments))
            elif isinstance(part, ToolResultPart) and part.call_id not in called:
                blocks.append(_orphan_result(part))
                blocks.extend(map(media, part.attachments))
            elif isinstance(part, ImagePart | FilePart):
                blocks.append(media(part))
    return [block for block in blocks if block]


# --- images and files --------------------------------------------------------------------


class MediaRefused(ValueError):
    """An image or file an adapter cannot send: its provider takes no such part, or its bytes are not loaded."""


@contextmanager
def media_errors(provider: str) -> Iterator[None]:
    """Raise a `MediaRefused` met while rendering a request as `provider`'s `ModelError` (status 400: not retried)."""
    try:
        yield
    except MediaRefused as exc:
        raise ModelError(f"{provider} cannot be sent this request: {exc}", status_code=400, provider=provider) from exc


def loaded(part: Media) -> Media:
    """`part` itself, once it is sure to hold its bytes or a URL.

    Raises:
        MediaRefused: The part was read back from a store and its bytes were not loaded.
    """
    if not part.loaded:
        raise MediaRefused(
            f"the {describe_media(part)} holds no bytes: the loop loads a stored part's bytes "
            "(SessionStore.load_blobs) before it calls the model; a request built by hand from parts read "
            "back from a store must load them first"
        )
    return part


def describe_media(part: Media) -> str:
    """Name a part without its bytes: `image image/png, 12 KB`, `file "a.pdf" application/pdf at https://...`."""
    pieces = ["image" if isinstance(part, ImagePart) else "file"]
    if isinstance(part, FilePart) and part.name:
        pieces.append(json.dumps(part.name, ensure_ascii=False))
    if part.media_type:
        pieces.append(part.media_type)
    label = " ".join(pieces)
    if part.data is not None:
        return f"{label}, {_size(len(part.data))}"
    if part.url is not None and part.url.startswith("data:"):
        return f"{label}, a data URL of {_size(len(part.url))}"
    if part.url is not None:
        return f"{label} at {part.url}"
    return f"{label}, stored blob {str(part.blob)[:12]}"


def media_placeholder(part: Media, reason: str | None = None) -> str:
    """The text standing in for a part a model is not sent: `[image image/png, 12 KB: this model cannot see images]`.

    Args:
        part: The image or file.
        reason: Why it is not sent; default: the model cannot see images (or read files).
    """
    if reason is None:
        reason = "this model cannot see images" if isinstance(part, ImagePart) else "this model cannot read files"
    return f"[{describe_media(part)}: {reason}]"


def attachments_intro(result: ToolResultPart) -> str:
    """The text introducing a tool result's attachments where they travel apart from it."""
    tool = f" ({result.name})" if result.name else ""
    return f"Attachments of the result of call {result.call_id}{tool}:"


def file_name(part: FilePart) -> str:
    """The file's name, or one made from its media type (`file.pdf`) for providers that want a name."""
    if part.name:
        return part.name
    return "file" + (mimetypes.guess_extension(part.media_type or "") or "")


def file_text(part: FilePart) -> str | None:
    """The text of a `text/*` file with its bytes (read as UTF-8), else None."""
    if part.data is None or not (part.media_type or "").startswith("text/"):
        return None
    return part.data.decode("utf-8", errors="replace")


def _left_out(part: Media) -> str:
    return media_placeholder(part, "left out: only user messages and tool results carry images and files")


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    value, unit = count / 1024, "KB"
    for bigger in ("MB", "GB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
