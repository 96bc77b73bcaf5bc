"""What the fakes refuse, as the real APIs do: content parts of the wrong shape or in the wrong place.

The fakes record every request body; these checks make them answer a body the provider
would refuse with the provider's 400, so an adapter that sends an image where the API
takes none (an OpenAI tool message, say) fails against the fake as it would in production.
Each check returns the problem, named by its path in the body, or None. Only content
arrays are checked: a body the checks do not understand passes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from hookline.types import JSONObject

__all__ = ["anthropic_problem", "chat_problem", "responses_problem"]

_CHAT_PARTS = {"user": {"text", "image_url", "input_audio", "file"}, "assistant": {"text", "refusal"}}
_RESPONSES_PARTS = {"input_text", "input_image", "input_file"}
_ANTHROPIC_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_ANTHROPIC_RESULT_BLOCKS = {"text", "image", "document", "search_result"}


def chat_problem(body: JSONObject) -> str | None:
    """What Chat Completions would refuse in `body`'s messages, or None."""
    for index, message in _listed(body.get("messages")):
        content = message.get("content") if isinstance(message, dict) else None
        allowed = _CHAT_PARTS.get(message.get("role", ""), {"text"}) if isinstance(message, dict) else set()
        for number, part in _listed(content):
            where = f"messages[{index}].content[{number}]"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind not in allowed:
                return f"Invalid value for '{where}.type': {kind!r} is not allowed in a {message.get('role')} message"
            problem = _CHAT_CHECKS.get(str(kind), _fine)(part)
            if problem:
                return f"Invalid '{where}': {problem}"
    return None


def responses_problem(body: JSONObject) -> str | None:
    """What the Responses API would refuse in `body`'s input items, or None."""
    for index, item in _listed(body.get("input")):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call_output":
            content, kinds = item.get("output"), _RESPONSES_PARTS
        elif item.get("role") == "user":
            content, kinds = item.get("content"), _RESPONSES_PARTS
        else:
            content, kinds = item.get("content"), {"output_text", "refusal", "input_text"}
        for number, part in _listed(content):
            where = f"input[{index}].{'output' if 'output' in item else 'content'}[{number}]"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind not in kinds:
                return f"Invalid value for '{where}.type': {kind!r} is not allowed here"
            problem = _RESPONSES_CHECKS.get(str(kind), _fine)(part)
            if problem:
                return f"Invalid '{where}': {problem}"
    return None


def anthropic_problem(body: JSONObject) -> str | None:
    """What the Messages API would refuse in `body`'s messages, or None."""
    for index, message in _listed(body.get("messages")):
        content = message.get("content") if isinstance(message, dict) else None
        for number, block in _listed(content):
            problem = _anthropic_block(block, f"messages.{index}.content.{number}")
            if problem:
                return problem
    return None


def _listed(value: Any) -> Iterator[tuple[int, Any]]:
    return enumerate(value) if isinstance(value, list) else iter(())


def _fine(part: JSONObject) -> str | None:
    return None


def _text(part: JSONObject) -> str | None:
    return None if isinstance(part.get("text"), str) else "a text part needs its text"


def _http(url: Any) -> bool:
    return isinstance(url, str) and url.startswith(("http://", "https://"))


def _url_ok(url: Any, data_prefix: str) -> bool:
    """An http(s) URL, or a base64 data URL starting with `data_prefix`."""
    return _http(url) or (isinstance(url, str) and url.startswith(data_prefix) and ";base64," in url)


def _chat_image(part: JSONObject) -> str | None:
    url = (part.get("image_url") or {}).get("url")
    return None if _url_ok(url, "data:image/") else f"image_url.url must be an http(s) URL or a data:image URL: {url!r}"


def _chat_file(part: JSONObject) -> str | None:
    file = part.get("file") or {}
    if "file_id" in file:
        return None
    data = file.get("file_data")
    if not isinstance(data, str) or ";base64," not in data:
        return "file needs file_id, or file_data as a base64 data URL"
    if not data.startswith("data:application/pdf;"):
        return f"Invalid file data: only PDF files are supported, got {data.partition(';')[0].removeprefix('data:')}"
    return None


def _responses_image(part: JSONObject) -> str | None:
    if part.get("file_id") or _url_ok(part.get("image_url"), "data:image/"):
        return None
    return f"image_url must be an http(s) URL or a data:image URL: {str(part.get('image_url'))[:60]!r}"


def _responses_file(part: JSONObject) -> str | None:
    given = [key for key in ("file_data", "file_id", "file_url") if part.get(key)]
    if len(given) != 1:
        return f"input_file needs exactly one of file_data, file_id and file_url, got {given or 'none'}"
    if given == ["file_data"] and not (_url_ok(part["file_data"], "data:") and part.get("filename")):
        return "file_data must be a base64 data URL, given with a filename"
    return None


def _anthropic_block(block: Any, where: str) -> str | None:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text" and not (isinstance(block.get("text"), str) and block["text"]):
        return f"{where}: text content blocks must be non-empty"
    if kind == "image":
        return _anthropic_image(block.get("source") or {}, f"{where}.image.source")
    if kind == "document":
        return _anthropic_document(block.get("source") or {}, f"{where}.document.source")
    if kind == "tool_result":
        for number, inner in _listed(block.get("content")):
            inner_kind = inner.get("type") if isinstance(inner, dict) else None
            if inner_kind not in _ANTHROPIC_RESULT_BLOCKS:
                return f"{where}.tool_result.content.{number}: {inner_kind!r} blocks are not allowed in a tool result"
            problem = _anthropic_block(inner, f"{where}.tool_result.content.{number}")
            if problem:
                return problem
    return None


def _anthropic_image(source: JSONObject, where: str) -> str | None:
    if source.get("type") == "url":
        return None if _http(source.get("url")) else f"{where}.url: must be an http(s) URL"
    if source.get("type") != "base64":
        return f"{where}.type: Input should be 'base64', 'url' or 'file'"
    if source.get("media_type") not in _ANTHROPIC_IMAGE_TYPES:
        return f"{where}.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
    return None if isinstance(source.get("data"), str) else f"{where}.data: Field required"


def _anthropic_document(source: JSONObject, where: str) -> str | None:
    kind, media_type = source.get("type"), source.get("media_type")
    if kind == "url":
        return None if _http(source.get("url")) else f"{where}.url: must be an http(s) URL"
    if kind == "base64" and media_type != "application/pdf":
        return f"{where}.media_type: Input should be 'application/pdf'"
    if kind == "text" and media_type != "text/plain":
        return f"{where}.media_type: Input should be 'text/plain'"
    if kind not in ("base64", "text", "content", "file"):
        return f"{where}.type: Input should be 'base64', 'text', 'content', 'url' or 'file'"
    if kind in ("base64", "text") and not isinstance(source.get("data"), str):
        return f"{where}.data: Field required"
    return None


_CHAT_CHECKS: dict[str, Callable[[JSONObject], str | None]] = {
    "text": _text,
    "image_url": _chat_image,
    "file": _chat_file,
}
_RESPONSES_CHECKS: dict[str, Callable[[JSONObject], str | None]] = {
    "input_text": _text,
    "output_text": _text,
    "input_image": _responses_image,
    "input_file": _responses_file,
}
