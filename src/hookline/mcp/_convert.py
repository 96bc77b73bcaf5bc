"""Conversions between MCP's types and hookline's: tool names, schemas, results, log records.

Only this package imports the `mcp` SDK; what leaves it is hookline's own types.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import re
from collections.abc import Iterable
from typing import Any

import mcp_types as types

from hookline.messages import FilePart, ImagePart

__all__ = ["log_record", "local_names", "parameters_of", "progress_record", "result_text", "result_value"]

_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_INVALID = re.compile(r"[^A-Za-z0-9_-]")

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


def python_level(level: str) -> int:
    """The `logging` level of an MCP log level (`notice` is INFO; `alert`, `emergency` are CRITICAL)."""
    return _LEVELS.get(level, logging.INFO)


def local_names(remote: Iterable[str], prefix: str | None) -> dict[str, str]:
    """`{local name: remote name}`: prefixed, and valid as hookline tool names.

    MCP allows names hookline (and most model APIs) do not: dots, slashes, more than 64
    characters. Those characters become `_`; a name still too long, or taken, is cut and
    given a short hash of the remote name, so every remote tool keeps one stable local name.
    """
    names: dict[str, str] = {}
    for name in remote:
        local = f"{prefix}_{name}" if prefix else name
        if not _NAME.fullmatch(local) or local in names:
            digest = hashlib.sha1(name.encode()).hexdigest()[:8]
            cleaned = _INVALID.sub("_", local) or "tool"
            local = cleaned if _NAME.fullmatch(cleaned) and cleaned not in names else f"{cleaned[:55]}_{digest}"
        names[local] = name
    return names


def parameters_of(tool: types.Tool) -> dict[str, Any]:
    """The tool's input schema as an object schema a model API accepts."""
    schema = dict(tool.input_schema or {})
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


def result_text(result: types.CallToolResult) -> str:
    """The result as the text a model reads: text blocks as they are, other blocks described.

    A result with no text but structured content gives that content as JSON, in which a
    string that repeats an image, audio or binary block's data is a short description.
    """
    return _text_of(result, result.content)


def result_value(result: types.CallToolResult) -> str | list[str | ImagePart | FilePart]:
    """The result as a tool's return value: its text, with its images and binary resources as parts.

    The model then sees them as the result's attachments (see `hookline.tools.result_of`);
    audio, which no provider takes in a tool result, stays a description in the text.
    """
    media = [(block, _block_media(block)) for block in result.content]
    attached = [part for _block, part in media if part is not None]
    if not attached:
        return result_text(result)
    return [_text_of(result, [block for block, part in media if part is None]), *attached]


def _text_of(result: types.CallToolResult, blocks: list[types.ContentBlock]) -> str:
    """The text of `blocks` (the result's own, less those attached), or its structured content as JSON."""
    texts = [_block_text(block) for block in blocks]
    if result.structured_content is None or any(isinstance(b, types.TextContent) for b in result.content):
        return "\n".join(texts)
    described = {data: text for data, text in map(_binary, result.content) if data}
    structured = json.dumps(_without_binary(result.structured_content, described), ensure_ascii=False)
    return "\n".join([*texts, structured])


def _binary(block: types.ContentBlock) -> tuple[str, str]:
    """A block's base64 data and how the text shows it instead, or `("", "")` for a block without any."""
    if isinstance(block, types.ImageContent | types.AudioContent):
        return block.data, f"[{block.type} ({block.mime_type}, {_size(block.data)} bytes)]"
    if isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.BlobResourceContents):
        resource = block.resource
        kind = resource.mime_type or "binary"
        return resource.blob, f"[resource {resource.uri} ({kind}, {_size(resource.blob)} bytes)]"
    return "", ""


def _size(data: str) -> int:
    """The bytes that base64 `data` holds."""
    return len(data) * 3 // 4 - data[-2:].count("=")


def _without_binary(value: Any, described: dict[str, str]) -> Any:
    """`value` with each string that holds a block's base64 data (alone, or as a `data:` URL) described."""
    if isinstance(value, str):
        data = value.partition(";base64,")[2] if value.startswith("data:") else value
        return described.get(data, value)
    if isinstance(value, dict):
        return {key: _without_binary(item, described) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_binary(item, described) for item in value]
    return value


def _block_media(block: types.ContentBlock) -> ImagePart | FilePart | None:
    try:
        if isinstance(block, types.ImageContent):
            return ImagePart(media_type=block.mime_type, data=base64.b64decode(block.data, validate=True))
        if isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.BlobResourceContents):
            resource = block.resource
            name = resource.uri.rsplit("/", 1)[-1] or None
            data = base64.b64decode(resource.blob, validate=True)
            return FilePart(media_type=resource.mime_type or "application/octet-stream", data=data, name=name)
    except binascii.Error:
        return None  # not base64: described in the text instead
    return None


def _block_text(block: types.ContentBlock) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        return f"[{block.type} ({block.mime_type}, {_size(block.data)} bytes), not shown]"
    if isinstance(block, types.EmbeddedResource):
        contents = block.resource
        if isinstance(contents, types.TextResourceContents):
            return contents.text
        return f"[resource {contents.uri} ({contents.mime_type or 'binary'}), not shown]"
    return f"[resource link {block.uri}]"


def log_record(server: str, params: types.LoggingMessageNotificationParams) -> logging.LogRecord:
    """A log record for a `notifications/message` from `server`.

    The record's logger is `hookline.mcp.<server>` (plus the MCP logger name when given), so a
    status line says which server spoke.
    """
    data = params.data
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    name = f"hookline.mcp.{server}" + (f".{params.logger}" if params.logger else "")
    return _record(name, python_level(params.level), text)


def progress_record(server: str, progress: float, total: float | None, message: str | None) -> logging.LogRecord:
    """A log record for a `notifications/progress`: `progress 2/5: indexing`."""
    done = f"{progress:g}/{total:g}" if total else f"{progress:g}"
    text = f"progress {done}" + (f": {message}" if message else "")
    return _record(f"hookline.mcp.{server}", logging.INFO, text)


def _record(name: str, level: int, text: str) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 0, "%s", (text,), None)
