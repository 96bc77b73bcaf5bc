"""What the SQL stores' `search` shares: the needle's forms, and the mention a hit names.

`SessionStore.search` says what a session's mention is. The SQL stores find the event and the
part in SQL and hand back the event's `parts` JSON with the part's index (`-1`: the message's
text), so `mention_at` rebuilds the text exactly as it was stored.

A needle holds in a text only if its JSON form (as it sits inside a JSON string) holds in
that text's JSON form: the JSON encoder escapes character by character, and no letter folds
into a character it escapes. So the stores first look for the needle's JSON form in each
event's raw `parts` JSON, a cheap test that passes every event that mentions it, and take the
parts apart only for those that pass.

The databases cannot take apart a text holding NUL (U+0000): PostgreSQL's text type cannot
hold it, SQLite's JSON functions cut the text there. So the SQL stores match NUL as U+FFFD,
the replacement character, in the texts and in the needle (`as_matched`), and give the text
back as stored.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["as_matched", "holds", "json_form", "like_pattern", "mention_at"]

def holds(text: str | None, folded: str) -> bool:
    """Whether `text` holds `folded` (a casefolded needle), letters of any case alike; SQLite calls it."""
    return text is not None and folded in text.casefold()


def as_matched(text: str) -> str:
    """`text` as the SQL stores match it: NUL as U+FFFD."""
    return text.replace("\x00", "\ufffd")


def json_form(text: str) -> str:
    """`text` as it sits inside a JSON string the stores write (non-ASCII characters as they are)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def like_pattern(text: str) -> str:
    """A `LIKE` pattern matching any text that holds `text`, its `%`, `_` and backslashes escaped (by a backslash)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def mention_at(hit: str | None) -> str | None:
    """The text a SQL store's search hit names ("<at> <parts JSON>"); None for None (only the id holds the needle).

    `at` -1 is the event's text parts joined, else the index of the tool result whose content it is.
    """
    if hit is None:
        return None
    at, _, parts_json = hit.partition(" ")
    parts: list[dict[str, Any]] = json.loads(parts_json)
    if int(at) < 0:
        return "".join(p["text"] for p in parts if p.get("type") == "text")
    return str(parts[int(at)]["content"])
