"""Toolsets: tools that live elsewhere (an MCP server), listed over I/O and resolved per run.

A plain tool is known when the agent is built. A toolset's tools are not: they are listed
over a connection that must be opened and closed, and the list may change while the agent
lives. So a toolset has three moments:

- `connect()` (async): open the connection and list the tools, or check that they are
  current. `Agent` awaits it before each run's first model call; it is cheap when the
  toolset is already connected and its list is current.
- `tools()` (sync): the tools as last listed. `Agent.tools_for(state)` reads it every turn,
  so a list refreshed in the background shows up on the next turn.
- `aclose()`: close the connection; `Agent.close()` calls it. A later `connect()` reopens it.

`ToolIndex` merges an agent's plain tools with its toolsets' current tools, by name; it
rebuilds the merged dict only when a toolset's `version` changes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from types import TracebackType

from hookline.errors import ConfigError
from hookline.tools import Tool

__all__ = ["ToolIndex", "Toolset"]


class Toolset(ABC):
    """A provider of tools whose list comes over I/O: connected, listed, and closed.

    Subclasses implement `connect()` and `tools()`, bump `version` whenever `tools()` would
    return another list, and close what they opened in `aclose()`. A toolset is an async
    context manager: `async with toolset:` connects it and closes it.
    """

    version: int = 0
    """Changes whenever `tools()` would return another list (a cache key for `ToolIndex`)."""

    @property
    def label(self) -> str:
        """What the toolset is, for error messages (e.g. "MCP server 'files'")."""
        return type(self).__name__

    @abstractmethod
    async def connect(self) -> None:
        """Open the connection and list the tools; do nothing more when already current.

        Raises:
            HooklineError: the tools cannot be listed (the message says why and what to check).
        """

    @abstractmethod
    def tools(self) -> Sequence[Tool]:
        """The tools as last listed.

        Raises:
            ConfigError: the toolset was never connected.
        """

    async def aclose(self) -> None:  # noqa: B027 - optional: a toolset with nothing to close keeps it
        """Close the connection (a later `connect()` opens a new one)."""

    async def __aenter__(self) -> Toolset:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self.aclose()


class ToolIndex:
    """An agent's tools by name: its plain tools, then each toolset's current tools.

    Args:
        static: The agent's plain tools, by name.
        toolsets: The agent's toolsets, in the order they were given.
    """

    __slots__ = ("_key", "_merged", "static", "toolsets")

    def __init__(self, static: dict[str, Tool], toolsets: Sequence[Toolset]) -> None:
        self.static = static
        self.toolsets = tuple(toolsets)
        self._key: tuple[int, ...] | None = None
        self._merged: dict[str, Tool] = static

    def current(self) -> dict[str, Tool]:
        """The tools offered now; the same dict as last time when no toolset changed.

        Raises:
            ConfigError: two tools have one name (the message names both sources and the fix).
        """
        key = tuple(t.version for t in self.toolsets)
        if key != self._key:
            self._merged = self._merge()
            self._key = key
        return self._merged

    def _merge(self) -> dict[str, Tool]:
        merged = dict(self.static)
        source = dict.fromkeys(self.static, "a plain tool")
        for toolset in self.toolsets:
            for item in toolset.tools():
                if item.name in merged:
                    raise ConfigError(
                        f"two tools are named {item.name!r}: {source[item.name]} and one of {toolset.label}; "
                        "give the toolset a prefix, e.g. MCPToolset.stdio(..., prefix='files')"
                    )
                merged[item.name] = item
                source[item.name] = f"one of {toolset.label}"
        return merged
