"""`OffloadLargeResults`: keep large tool outputs out of the prompt, readable on demand.

A result longer than `max_chars` is put in a store under a short reference and replaced,
in the conversation, by its beginning and that reference. The hook's `read_tool` lets the
model page through the stored text when it needs more than the preview.
"""

from __future__ import annotations

import secrets
from collections.abc import MutableMapping
from typing import TYPE_CHECKING

from hookline.errors import ConfigError, ToolError
from hookline.tools import Tool

if TYPE_CHECKING:
    from hookline.state import State

__all__ = ["OffloadLargeResults"]


class OffloadLargeResults:
    """A hook that stores large tool results and shows the model a preview and a reference.

    Register it at `after_tool`, and add `hook.read_tool` (a tool named `read_result`) to the
    agent's tools so the model can read a stored result back in pages of at most
    `max_chars` characters. Results of `read_result` itself are never offloaded.

    The default store is a dict in memory, which lives as long as the hook: a session
    resumed in another process cannot read results stored by this one. Pass any mutable
    mapping of str to str (a disk-backed one, say) to keep them longer.

    Example:
        ```python
        offload = OffloadLargeResults(max_chars=2000)
        agent = Agent(
            model=..., tools=[fetch_page, offload.read_tool],
            hooks={"after_tool": [offload]},
        )
        ```

    Args:
        max_chars: Results longer than this are offloaded; also the largest page
            `read_result` returns.
        store: Where offloaded results are kept, by reference (default: a new dict).
        preview_chars: How much of an offloaded result stays in the conversation.

    Attributes:
        store: The offloaded results, by reference.
        read_tool: The `read_result(ref, offset=0, length=2000)` tool to give the agent.

    """

    def __init__(
        self, max_chars: int = 2000, store: MutableMapping[str, str] | None = None, *, preview_chars: int = 500
    ) -> None:
        for key, value in (("max_chars", max_chars), ("preview_chars", preview_chars)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"OffloadLargeResults({key}=...) takes a positive integer, not {value!r}")
        self.max_chars = max_chars
        self.preview_chars = min(preview_chars, max_chars)
        self.store: MutableMapping[str, str] = store if store is not None else {}
        self.read_tool = Tool(self.read_result, name="read_result")

    def __repr__(self) -> str:
        return f"OffloadLargeResults(max_chars={self.max_chars}, stored={len(self.store)})"

    def run(self, state: State) -> None:
        """Offload the current tool result if it is too long."""
        call, result = state.tool_call, state.tool_result
        if call is None or result is None or call.name == self.read_tool.name:
            return
        if len(result.content) > self.max_chars:
            ref = self.put(result.content)
            state.tool_result = self.preview(result.content, ref)

    def put(self, text: str) -> str:
        """Store `text` and return its new reference."""
        ref = secrets.token_hex(4)
        while ref in self.store:
            ref = secrets.token_hex(4)
        self.store[ref] = text
        return ref

    def preview(self, text: str, ref: str) -> str:
        """Return what the model sees instead of `text`: its beginning and how to read the rest."""
        return (
            f"{text[: self.preview_chars]}\n"
            f"[... result truncated: {len(text)} characters in all, stored as ref {ref!r}. "
            f"Call {self.read_tool.name}(ref={ref!r}, offset={self.preview_chars}) to read on.]"
        )

    def read_result(self, ref: str, offset: int = 0, length: int = 2000) -> str:
        """Read part of a large tool result that was stored instead of shown in full.

        Args:
            ref: The reference given in the truncated result.
            offset: The first character to read (0 is the start).
            length: How many characters to read.

        """
        text = self.store.get(ref)
        if text is None:
            known = ", ".join(sorted(self.store)) or "none"
            raise ToolError(f"no stored result has ref {ref!r}; stored refs: {known}")
        if offset < 0 or offset > len(text) or length < 1:
            raise ToolError(
                f"offset must be 0..{len(text)} and length at least 1 (got offset={offset}, length={length})"
            )
        end = min(offset + min(length, self.max_chars), len(text))
        footer = f"[characters {offset}-{end} of {len(text)}"
        footer += f"; next: offset={end}]" if end < len(text) else "; end of result]"
        return f"{text[offset:end]}\n{footer}"
