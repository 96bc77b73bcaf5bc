"""`StateRecord`: `state.data` on record as a run changes it (`StatusOptions(state=True)`).

When the session is loaded, and at each of the run's flushes after, the state is compared
with what this run last recorded of it (as JSON): where it changed, a marker holds a copy
(`metadata["state"]`). So every run starts with the state it found, and the state at any
event of the log is the one of the last such marker before it, within its run: what the
inspector's "state at this event" shows, and what a fork made there starts from.
"""

from __future__ import annotations

import json
from typing import Any

from hookline._run.recorder import Recorder
from hookline.errors import ConfigError
from hookline.events import Event
from hookline.sessions._codec import encode_state

__all__ = ["StateRecord"]


class StateRecord:
    """Records `state.data` where it changed since this run last recorded it.

    Args:
        recorder: The run's recorder (with a store: markers are never streamed).
        author: The agent's name, the markers' author.
    """

    __slots__ = ("_author", "_recorded", "_recorder")

    def __init__(self, recorder: Recorder, author: str) -> None:
        self._recorder, self._author = recorder, author
        self._recorded: str | None = None

    def note(self, data: dict[str, Any]) -> None:
        """Record `data` (at the next flush) unless it is what this run recorded last."""
        try:
            encoded = encode_state(data)
        except ConfigError:  # not JSON: the run's end says so, and saves nothing
            return
        if encoded != self._recorded:
            self._recorded = encoded
            self._recorder.add(Event.marker(self._author, state=json.loads(encoded)))
