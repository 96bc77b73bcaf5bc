"""What every provider adapter renders the same way: documents, user actions, call ids.

Providers differ in how they carry tool calls, but not in how hookline turns the parts
they have no slot for into text: all `DocumentPart`s of one message become one block
(with their titles), and a tool call the *user* made (a recorded action, such as a file
edit) becomes a sentence inside the user message, never a provider tool id that the
provider would reject as an orphan.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Sequence

from hookline.messages import DocumentPart, Part, TextPart, ToolCallPart, ToolResultPart
from hookline.types import JSONObject

__all__ = ["arguments_json", "documents_block", "new_call_id", "parse_arguments", "text_blocks", "user_action"]


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


def text_blocks(parts: Sequence[Part]) -> list[str]:
    """Render the parts of a message as text blocks, in order, with no tool ids.

    Consecutive text parts form one block; all documents form one block where the
    first of them stands; a tool call with its result (from the same parts) forms one
    sentence. Empty blocks are left out.
    """
    documents = [part for part in parts if isinstance(part, DocumentPart)]
    results = {part.call_id: part for part in parts if isinstance(part, ToolResultPart)}
    called = {part.id for part in parts if isinstance(part, ToolCallPart)}
    blocks: list[str] = []
    for is_text, group in itertools.groupby(parts, key=lambda part: isinstance(part, TextPart)):
        if is_text:
            blocks.append("".join(part.text for part in group if isinstance(part, TextPart)))
            continue
        for part in group:
            if isinstance(part, DocumentPart) and part is documents[0]:
                blocks.append(documents_block(documents))
            elif isinstance(part, ToolCallPart):
                blocks.append(user_action(part, results.get(part.id)))
            elif isinstance(part, ToolResultPart) and part.call_id not in called:
                blocks.append(_orphan_result(part))
    return [block for block in blocks if block]
