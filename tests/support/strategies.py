"""Hypothesis strategies for hookline's values: any text, any JSON, parts, messages and events.

"Any text" means what a Python `str` may hold, not only what UTF-8 can encode: NUL,
control characters, astral characters, and lone surrogates (U+D800 to U+DFFF) alone or
in pairs. Names (authors, ids) are text a database compares: no NUL, no surrogates.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from hookline import DocumentPart, Event, ReasoningPart, TextPart, ToolCallPart, ToolResultPart

HIGH, LOW = "\ud83d", "\ude00"
"""The two halves of the surrogate pair that encodes U+1F600, also drawn apart."""

_AWKWARD = st.sampled_from(["\x00", HIGH, LOW, "\ud800", "\udfff", "\U0001f600", "é", "\u2028", '"', "\\", "\n"])

# Joined from a list: `st.text` leaves surrogates out, even from an alphabet that holds them.
any_text = st.lists(st.one_of(st.characters(exclude_categories=()), _AWKWARD), max_size=12).map("".join)
"""Any `str`: NUL, surrogates (lone or paired), unicode of every plane, JSON's special characters."""

utf8_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
"""Any text UTF-8 can encode: NUL and every plane, but no surrogates."""

names = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1, max_size=8)
"""Text fit for a name (an author, an id): not empty, no NUL, no surrogates."""

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    any_text,
)
json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=8,
)
"""Any JSON value (as `json.loads` returns them), its strings any text."""

json_objects = st.dictionaries(any_text, json_values, max_size=4)
"""Any JSON object."""

text_parts = st.builds(TextPart, text=any_text)
tool_call_parts = st.builds(ToolCallPart, id=names, name=names, arguments=json_objects | any_text)
tool_result_parts = st.builds(ToolResultPart, call_id=names, content=any_text, is_error=st.booleans(), name=any_text)
document_parts = st.builds(DocumentPart, title=any_text, text=any_text, source=st.none() | any_text)
maybe_text = st.none() | any_text
reasoning_parts = st.builds(ReasoningPart, text=any_text, signature=maybe_text, data=maybe_text, id=st.none() | names,
                            provider=st.none() | st.sampled_from(["anthropic", "openai-responses"]))
parts = st.one_of(text_parts, tool_call_parts, tool_result_parts, document_parts, reasoning_parts)
"""Any part, its text any text and a call's arguments any JSON object (or the raw string a model sent)."""


@st.composite
def events(draw: st.DrawFn, metadata: st.SearchStrategy[dict[str, Any]] = json_objects) -> Event:
    """An event a writer hands to a store: a message, a status line or a marker, with any parts and metadata."""
    kind = draw(st.sampled_from(["message", "status", "marker"]))
    fields: dict[str, Any] = {"author": draw(names), "kind": kind, "metadata": draw(metadata)}
    if kind == "message":
        fields["role"] = draw(st.sampled_from(["user", "assistant", "tool", "system"]))
    if kind == "status":
        fields["source"] = draw(st.sampled_from(["agent", "llm", "tool"]))
    if kind != "marker":
        fields["parts"] = draw(st.lists(parts, max_size=4))
    return Event(**fields)

