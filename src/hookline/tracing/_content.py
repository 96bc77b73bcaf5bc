"""Conversation content in the GenAI semantic conventions' JSON shapes (recorded only on request).

The shapes are those of `gen_ai.input.messages`, `gen_ai.output.messages`,
`gen_ai.system_instructions` and `gen_ai.tool.definitions`; span attributes cannot hold
structures yet, so each is a JSON string, as the conventions allow. An image or a file is
shown as a `uri` part (its URL) or a `blob` part without its bytes: its media type, its
size, and its SHA-256 once a store keeps it; a tool result's images and files are its
`attachments`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from hookline.messages import (
    DocumentPart,
    FilePart,
    ImagePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from hookline.models import ModelRequest, ModelResponse, ToolSpec

__all__ = ["request_content", "response_content", "run_input", "run_output", "to_json"]

_FINISH_REASONS = {"tool_calls": "tool_call", "tool_use": "tool_call", "end_turn": "stop", "stop_sequence": "stop",
                   "max_tokens": "length"}
"""Providers' finish reasons that the conventions name otherwise (OpenAI's, then Anthropic's)."""


def to_json(value: Any) -> str:
    """`value` as a JSON string; what JSON cannot hold is given as its `str()`."""
    return json.dumps(value, ensure_ascii=False, default=str)


def request_content(request: ModelRequest) -> dict[str, str]:
    """The attributes of a model call's content: instructions, input messages, tool definitions."""
    system = [m for m in request.messages if m.role == "system"]
    attributes = {"gen_ai.input.messages": _messages(m for m in request.messages if m.role != "system")}
    if system:
        attributes["gen_ai.system_instructions"] = to_json([_part(p) for m in system for p in m.parts])
    if request.tools:
        attributes["gen_ai.tool.definitions"] = to_json([_tool(spec) for spec in request.tools])
    return attributes


def response_content(response: ModelResponse) -> str:
    """A model's answer as `gen_ai.output.messages`.

    The message's `finish_reason` is deprecated in the latest conventions but required by
    earlier ones, which viewers still read.
    """
    message = response.to_message()
    parts = [_part(p) for p in message.parts]
    return to_json([{"role": "assistant", "parts": parts, "finish_reason": _finish_reason(response)}])


def run_input(prompt: Message, instructions: str | None) -> dict[str, str]:
    """The attributes of a run's input: the prompt, and the instructions when they are fixed text."""
    attributes = {"gen_ai.input.messages": _messages([prompt])}
    if instructions:
        attributes["gen_ai.system_instructions"] = to_json([{"type": "text", "content": instructions}])
    return attributes


def run_output(text: str) -> str:
    """A run's final answer as `gen_ai.output.messages`."""
    return to_json([{"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": "stop"}])


def _finish_reason(response: ModelResponse) -> str:
    metadata = response.metadata
    raw = metadata.get("finish_reason") or metadata.get("stop_reason")
    if raw:
        return _FINISH_REASONS.get(str(raw), str(raw))
    return "tool_call" if response.tool_calls else "stop"


def _messages(messages: Iterable[Message]) -> str:
    return to_json([{"role": m.role, "parts": [_part(p) for p in m.parts]} for m in messages])


def _part(part: Any) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "content": part.text}
    if isinstance(part, ToolCallPart):
        return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.arguments}
    if isinstance(part, ToolResultPart):
        shown: dict[str, Any] = {"type": "tool_call_response", "id": part.call_id, "response": part.content}
        if part.attachments:
            shown["attachments"] = [_media(media) for media in part.attachments]
        return shown
    if isinstance(part, ImagePart | FilePart):
        return _media(part)
    if isinstance(part, DocumentPart):
        return {"type": "document", "title": part.title, "content": part.text, "source": part.source}
    if isinstance(part, ReasoningPart):
        return {"type": "reasoning", "content": part.text}
    return {"type": str(getattr(part, "type", "unknown"))}


def _media(part: ImagePart | FilePart) -> dict[str, Any]:
    """An image or a file without its bytes: a `uri` part for a URL, else a `blob` part holding its size."""
    major = (part.media_type or "").partition("/")[0]
    modality = "image" if isinstance(part, ImagePart) else major if major in ("image", "audio", "video") else "document"
    shown: dict[str, Any] = {"modality": modality, "mime_type": part.media_type}
    if isinstance(part, FilePart) and part.name:
        shown["name"] = part.name
    if part.url is not None and not part.url.startswith("data:"):
        return {"type": "uri", **shown, "uri": part.url}
    if part.data is not None:
        shown["size"] = len(part.data)
    elif part.url is not None:
        shown["size"] = len(part.url)  # a data: URL, its bytes in base64
    if part.blob is not None:
        shown["sha256"] = part.blob
    return {"type": "blob", **shown}


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {"type": "function", "name": spec.name, "description": spec.description, "parameters": spec.parameters}
