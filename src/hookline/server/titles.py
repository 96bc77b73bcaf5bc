"""`Titles`: the session titles the inspector found so far, kept so a session list reads each once."""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime

from hookline.sessions import Session

__all__ = ["Titles"]


class Titles:
    """The session titles found so far, by (session id, creation time): a first prompt never changes."""

    def __init__(self, kept: int = 4096) -> None:
        self._kept = kept
        self._titles: OrderedDict[tuple[str, datetime | None], str] = OrderedDict()

    def get(self, session: Session) -> str | None:
        """The title found before for `session`, if any."""
        return self._titles.get((session.id, session.created_at))

    def keep(self, session: Session, title: str) -> None:
        """Remember a session's title (the oldest go first once `kept` are kept)."""
        if title:
            self._titles[(session.id, session.created_at)] = title
            while len(self._titles) > self._kept:
                self._titles.popitem(last=False)
