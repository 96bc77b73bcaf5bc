"""The eval case of a stored session as text, made in one place for its two readers.

`hookline sessions export ID --as-case` prints it and the inspector's `GET
/v1/sessions/{id}/case` answers it, byte for byte: a case saved from the page and one
exported on the command line are the same file. Each reader reads the log its own way (the
command line whole, the server a page at a time up to a limit); both read `CASE_VIEW`.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookline.evals.case import Case
from hookline.events import Event
from hookline.types import View

__all__ = ["CASE_VIEW", "case_json"]

CASE_VIEW: View = "all"
"""The view of the log a case is made of (`Case.of_session` keeps its messages)."""


def case_json(events: Sequence[Event], name: str, session_id: str) -> str:
    """The case that session `session_id`'s log (its `CASE_VIEW`) makes, as indented JSON ending with a newline.

    Raises:
        ConfigError: The log holds no prompt.
    """
    return Case.of_session(events, name, source=session_id).model_dump_json(indent=2) + "\n"
