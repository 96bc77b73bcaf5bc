"""An MCP server's resources and prompts, as hookline values: listed, read as parts, got as messages.

`MCPToolset.resources()` and `prompts()` list them (`MCPResource`, `MCPPrompt`);
`read(uri)` gives a resource as parts a message or a tool result can hold (a text as a
`DocumentPart`, an image as an `ImagePart`, other bytes as a `FilePart`); `prompt(name,
arguments)` gives a prompt as hookline `Message`s, ready for a run's history.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

import mcp_types as types

from hookline.messages import DocumentPart, FilePart, ImagePart, Message, TextPart

__all__ = ["MCPPrompt", "MCPPromptArgument", "MCPResource", "ResourcePart", "message_of", "parts_of",
           "prompt_of", "resource_of"]

ResourcePart = DocumentPart | ImagePart | FilePart
"""What a resource's contents become: a text, an image, or a file."""


@dataclass(frozen=True)
class MCPResource:
    """A resource a server lists: read it with `MCPToolset.read(uri)`."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None


@dataclass(frozen=True)
class MCPPromptArgument:
    """An argument a prompt takes."""

    name: str
    description: str | None = None
    required: bool = False


@dataclass(frozen=True)
class MCPPrompt:
    """A prompt a server lists: get it with `MCPToolset.prompt(name, arguments)`."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[MCPPromptArgument, ...] = ()


def resource_of(resource: types.Resource) -> MCPResource:
    """The listing of one resource."""
    return MCPResource(resource.uri, resource.name, resource.title, resource.description, resource.mime_type)


def prompt_of(prompt: types.Prompt) -> MCPPrompt:
    """The listing of one prompt."""
    arguments = tuple(MCPPromptArgument(a.name, a.description, bool(a.required)) for a in prompt.arguments or ())
    return MCPPrompt(prompt.name, prompt.title, prompt.description, arguments)


def parts_of(contents: list[types.TextResourceContents | types.BlobResourceContents], title: str
             ) -> list[ResourcePart]:
    """A resource's contents as parts: its text as a document titled `title`, its bytes as an image or a file.

    Raises:
        ValueError: a blob is not base64.
    """
    return [_part(item, title) for item in contents]


def _part(item: types.TextResourceContents | types.BlobResourceContents, title: str) -> ResourcePart:
    if isinstance(item, types.TextResourceContents):
        return DocumentPart(title=title, text=item.text, source=item.uri)
    try:
        data = base64.b64decode(item.blob, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"the contents of {item.uri} are not base64: {exc}") from exc
    media_type = item.mime_type or "application/octet-stream"
    if media_type.startswith("image/"):
        return ImagePart(media_type=media_type, data=data)
    return FilePart(media_type=media_type, data=data, name=item.uri.rsplit("/", 1)[-1] or None)


def message_of(message: types.PromptMessage) -> Message:
    """One message of a prompt, as a hookline `Message` (audio and resource links as a line of text).

    Raises:
        ValueError: an image or a blob is not base64.
    """
    content = message.content
    if isinstance(content, types.TextContent):
        part: TextPart | ResourcePart = TextPart(text=content.text)
    elif isinstance(content, types.ImageContent):
        part = ImagePart(media_type=content.mime_type, data=_decoded(content.data))
    elif isinstance(content, types.EmbeddedResource):
        part = _part(content.resource, content.resource.uri)
    elif isinstance(content, types.AudioContent):
        part = TextPart(text=f"[audio ({content.mime_type}), not shown]")
    else:
        part = TextPart(text=f"[resource link {content.uri}]")
    return Message(role=message.role, parts=[part])


def _decoded(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"an image of the prompt is not base64: {exc}") from exc
